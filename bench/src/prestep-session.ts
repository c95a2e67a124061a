/**
 * The session the pre-step rows measure (issue: "the pre-step back under
 * budget"): a copy of `<dir>/p<size>.jsonl` opened by the host's
 * `sessionStorePlugin` (durability `'turn'`) with the invariant and
 * projection registries composed, plan-core, and, for the `layers`
 * variant, every layer that adds to a pre-step or to an append:
 * plan-policy's transcript guidance, plan-progress's messages (and its
 * `planProgress` unit), plan-tool's handoff message, the `plan` and
 * `planHistory` units.
 *
 * The same code runs against an older tree of the repository (the job's
 * `--before-tree`, through tree-loader.js): each layer is imported by name
 * and left out when that tree does not have it, and only APIs that every
 * measured tree has are used.
 */
import { copyFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Context, type Logger } from '@planmode/context'
import { sessionInvariantsPlugin, sessionProjectionsPlugin, sessionStorePlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import type { Agent, PreStepDecision, PreStepPayload, Session, SessionEventMap, SessionEventType, UserMessage } from '@planmode/seams'
import type { BenchEvent } from './generator.js'
import { openTurnEvents } from './open-turn.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** `core`: plan-core alone; `layers`: every layer that adds to a pre-step or an append. */
export type PrestepVariant = 'core' | 'layers'

/** The rows, in the order they run: the idle ones, then (a turn opened) the mid-turn ones. */
export const PRESTEP_ROWS = [
  { id: 'ps-get', label: 'planMode.get', idle: true },
  { id: 'ps-noop', label: 'planMode.set appending nothing (noop, idle)', idle: true },
  { id: 'ps-append', label: 'one store append of plan/mode, awaited (the floor)', idle: true },
  { id: 'ps-commit', label: 'planMode.set, idle (commits: one append)', idle: true },
  { id: 'ps-queued', label: 'planMode.set, mid-turn (queues)', idle: false },
  { id: 'ps-step-none', label: 'pre-step with nothing to append or say', idle: false },
  { id: 'ps-cycle', label: 'flush cycle: mid-turn set + the pre-step that appends it', idle: false },
] as const

/** A row's id. */
export type PrestepRowId = (typeof PRESTEP_ROWS)[number]['id']

/** One measured call: `fn` is timed (or counted); it throws when the call did not do what the row says. */
export interface PrestepCall {
  readonly fn: () => unknown
  /** Whether the call appends (timed one by one, a bounded number of times). */
  readonly appends: boolean
}

/** An opened variant: its calls, the turn to open between the idle and mid-turn rows, and its close. */
export interface PrestepSession {
  readonly layers: readonly string[]
  call(id: PrestepRowId): PrestepCall
  /** Opens a turn through the store (its first step done) and logs what a first pre-step is due, as a host does. */
  openTurn(): Promise<void>
  /** One accepted pre-step whose messages are logged: applies what a row left waiting, so the next row starts clean. */
  settle(): Promise<void>
  close(): Promise<void>
}

/** The layers of the `layers` variant: each imported by name, and composed when the tree has it. */
async function composeLayers(ctx: Context): Promise<string[]> {
  const composed: string[] = []
  type AnyPlugin = Parameters<Context['plugin']>[0]
  const load = async (name: string, use: (module: Record<string, unknown>) => void): Promise<void> => {
    let module: Record<string, unknown>
    try {
      module = (await import(name)) as Record<string, unknown>
    } catch {
      return // not in this tree
    }
    use(module)
    composed.push(name.replace('@planmode/', ''))
  }
  const plugin = (module: Record<string, unknown>, key: string): AnyPlugin | undefined => module[key] as AnyPlugin | undefined
  await load(
    '@planmode/plan-policy',
    (m) =>
      void ctx.plugin(plugin(m, 'planPolicyPlugin')!, { section: 'PLAN MODE: explore, then present a plan.', placement: 'transcript' }),
  )
  await load('@planmode/plan-progress', (m) => {
    ctx.plugin(plugin(m, 'planProgressPlugin')!)
    const unit = plugin(m, 'planProgressProjectionPlugin')
    if (unit !== undefined) ctx.plugin(unit)
  })
  await load('@planmode/plan-tool', (m) => void ctx.plugin(plugin(m, 'planToolPlugin')!))
  await load('@planmode/plan-projection', (m) => {
    ctx.plugin(plugin(m, 'planProjectionPlugin')!)
    const history = plugin(m, 'planHistoryPlugin')
    if (history !== undefined) ctx.plugin(history)
  })
  return composed
}

const signal = new AbortController().signal
let sink: unknown

/** Opens `variant` on a copy of `<dir>/p<size>.jsonl`. */
export async function openPrestep(dir: string, size: number, variant: PrestepVariant): Promise<PrestepSession> {
  const id = `p${size}-${variant}-${process.pid}`
  await copyFile(join(dir, `p${size}.jsonl`), join(dir, `${id}.jsonl`))
  const ctx = new Context({ logger: quiet })
  ctx.plugin(sessionInvariantsPlugin)
  ctx.plugin(sessionStorePlugin, { dir, durability: 'turn' })
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(planCorePlugin)
  const layers = variant === 'layers' ? await composeLayers(ctx) : []
  const store = ctx.require('sessions')
  const planMode = ctx.require('planMode')
  const session: Session = await store.open(id)
  if (session.events.length !== size) throw new Error(`prestep: loaded ${session.events.length} events, expected ${size}`)
  const agent: Agent = {
    id: 'prestep',
    session,
    steer() {},
    async inject(message: UserMessage) {
      await session.append('user/message', message)
    },
  }
  // The units fold the whole log at their first snapshot, as a host's first read does; plan-core rebuilds.
  ctx.get('sessionProjections')?.snapshot(session)
  planMode.get(agent)

  let turn = 0
  let step = 1
  const preStep = (): Promise<PreStepDecision> => {
    const payload: PreStepPayload = { agent, turn, step: ++step, signal, messages: [] }
    return ctx.waterfall('agent/pre-step', payload, async (): Promise<PreStepDecision> => ({ kind: 'enter', messages: [] }))
  }
  /** A pre-step whose messages are logged as the host logs them (so they are not due again). */
  const loggedStep = async (): Promise<void> => {
    const decision = await preStep()
    if (decision.kind === 'enter') for (const message of decision.messages) await session.append('user/message', message)
  }

  let appended = planMode.get(agent).active
  let committed = !planMode.get(agent).active
  let queued = !planMode.get(agent).active
  const calls: Record<PrestepRowId, PrestepCall> = {
    'ps-get': { appends: false, fn: () => (sink = planMode.get(agent)) },
    'ps-noop': { appends: false, fn: () => planMode.set(agent, planMode.get(agent).active) },
    'ps-append': { appends: true, fn: () => session.append('plan/mode', { active: (appended = !appended), cause: 'user' }) },
    'ps-commit': {
      appends: true,
      fn: async () => {
        committed = !planMode.get(agent).active
        const result = await planMode.set(agent, committed)
        if (result !== 'committed') throw new Error(`prestep commit: expected committed, got ${result}`)
      },
    },
    'ps-queued': { appends: false, fn: () => planMode.set(agent, (queued = !queued)) },
    'ps-step-none': {
      appends: false,
      fn: async () => {
        const before = session.events.length
        const decision = await preStep()
        if (decision.kind !== 'enter' || decision.messages.length !== 0 || session.events.length !== before) {
          throw new Error('prestep: a step with nothing pending appended or said something')
        }
      },
    },
    'ps-cycle': {
      appends: true,
      fn: async () => {
        const before = session.events.length
        const result = await planMode.set(agent, !planMode.get(agent).active)
        if (result !== 'queued') throw new Error(`prestep cycle: expected queued, got ${result}`)
        sink = await preStep()
        if (session.events.length !== before + 1) throw new Error('prestep cycle: the pre-step did not append the selection')
      },
    },
  }

  return {
    layers,
    call: (row) => calls[row],
    async openTurn() {
      for (const event of openTurnEvents(session.events as readonly BenchEvent[])) {
        if (event.type === 'turn/start') turn = (event.data as { turn: number }).turn
        await session.append(event.type as SessionEventType, event.data as SessionEventMap[SessionEventType])
      }
      await loggedStep()
    },
    settle: loggedStep,
    async close() {
      // Leave nothing waiting (the queued row may end on a waiting selection), then close.
      await loggedStep()
      void sink
      await store.close(session)
      ctx.dispose()
      await rm(join(dir, `${id}.jsonl`), { force: true })
    },
  }
}
