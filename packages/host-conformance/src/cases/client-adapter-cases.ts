import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { foldPlanMode } from '@planmode/plan-core'
import type { SessionEvent } from '@planmode/seams'
import { createConformanceModel, type ConformanceModel } from '@planmode/scripted-model'
import { ClientAdapterConformanceError, type ClientAdapter, type ClientAdapterDuty, type ClientAdapterFactory } from '../client-adapter.js'

/** One check of an adapter that serves plan mode to a client. @public */
export interface ClientAdapterCase {
  readonly duty: ClientAdapterDuty
  /** `duty "<name>": <what is checked>`. */
  readonly title: string
  /** Runs the case against a fresh adapter; rejects with a {@link ClientAdapterConformanceError} naming the duty. */
  run(): Promise<void>
}

const PLAN = '# Rename the flag\n\n1. Rename --verbose to --loud.\n2. Update the README.'
const REVISED = `${PLAN}\n3. Keep --verbose as an alias.`

/** What one case does with an adapter, its model, and the log it records. */
interface CaseRun {
  readonly adapter: ClientAdapter
  readonly model: ConformanceModel
  /** The events appended to session `id` since the adapter was made. */
  log(id: string): readonly SessionEvent[]
}

const modesOf = (events: readonly SessionEvent[]): boolean[] =>
  events.flatMap((event) => (event.type === 'plan/mode' ? [(event.data as { active: boolean }).active] : []))
const describe = (value: unknown): string => JSON.stringify(value)

const CASES: readonly { readonly duty: ClientAdapterDuty; readonly title: string; body(run: CaseRun): Promise<void> }[] = [
  {
    duty: 'client-mode',
    title: 'every plan/mode is published as the logged state, whatever its cause (user, review, model)',
    async body({ adapter, model, log }) {
      const served = await adapter.open(() => 'approve')
      await served.setMode(true)
      model.push({ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Carrying it out.' })
      await served.prompt('Plan the rename.')
      model.push(
        { toolCalls: [{ toolName: 'enter_plan_mode', input: { reason: 'The next change is wide.' } }] },
        { text: 'Exploring first.' },
      )
      await served.prompt('Now the next change.')
      await served.setMode(false)
      await served.client.settle()
      const logged = modesOf(log(served.sessionId))
      if (!isDeepStrictEqual(logged, [true, false, true, false])) {
        throw new ClientAdapterConformanceError(
          'client-mode',
          `the kit's run logged plan/mode ${describe(logged)}, not [true,false,true,false] (user on, approved exit, approved entry, user off): is the host's plan-tool composed with its entry tool?`,
        )
      }
      const published = [...served.client.modes()]
      if (!isDeepStrictEqual(published, logged)) {
        throw new ClientAdapterConformanceError(
          'client-mode',
          `the client was told the modes ${describe(published)}, but the log holds plan/mode ${describe(logged)} (each plan/mode, whatever its cause, must be published, and nothing else)`,
        )
      }
    },
  },
  {
    duty: 'client-unknown-outcome',
    title: 'an answer the adapter did not offer never approves a plan',
    async body({ adapter, model, log }) {
      const served = await adapter.open(() => 'unknown')
      await served.setMode(true)
      model.push({ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Waiting for you.' })
      await served.prompt('Plan the rename.')
      const events = log(served.sessionId)
      const approved = events.some((event) => event.type === 'plan/review' && (event.data as { outcome?: string }).outcome === 'approved')
      if (approved || !foldPlanMode(events)) {
        throw new ClientAdapterConformanceError(
          'client-unknown-outcome',
          `an outcome the client was not offered ${approved ? 'approved the plan' : 'left plan mode'}: it must count as a dismissal (plan mode stays on, nothing approved)`,
        )
      }
    },
  },
  {
    duty: 'client-replay',
    title: 'a client that attaches later is shown what a client attached from the start was shown',
    async body({ adapter, model }) {
      let reviews = 0
      const served = await adapter.open((question) => (question.kind === 'plan-review' && reviews++ === 0 ? 'keep' : 'approve'))
      await served.setMode(true)
      model.push(
        { text: 'Looking first.', toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }] },
        { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: REVISED } }] },
        { text: 'Renamed, with the alias.' },
      )
      await served.prompt('Plan the rename.')
      await served.client.settle()
      const later = await adapter.attach(served.sessionId)
      await later.settle()
      const live = served.client.view()
      const replayed = later.view()
      if (!isDeepStrictEqual(replayed, live)) {
        throw new ClientAdapterConformanceError(
          'client-replay',
          `the replay shows ${describe(replayed).slice(0, 600)}, but the client attached from the start shows ${describe(live).slice(0, 600)}`,
        )
      }
    },
  },
]

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Every case for an adapter that serves plan mode to clients, runner-agnostic:
 * map each to a test of your runner.
 *
 * @example
 * ```ts
 * for (const c of clientAdapterCases(factory)) test(c.title, () => c.run())
 * ```
 *
 * @public
 */
export function clientAdapterCases(factory: ClientAdapterFactory): ClientAdapterCase[] {
  return CASES.map((spec) => ({
    duty: spec.duty,
    title: `duty "${spec.duty}": ${spec.title}`,
    async run() {
      const dir = await mkdtemp(join(tmpdir(), 'planmode-client-adapter-'))
      const model = createConformanceModel()
      const logs = new Map<string, SessionEvent[]>()
      let adapter: ClientAdapter | undefined
      try {
        adapter = await factory({ model, dir })
        adapter.context.on('session/event', ({ session, event }) => {
          const events = logs.get(session.id) ?? []
          logs.set(session.id, events)
          events.push(event)
        })
        await spec.body({ adapter, model, log: (id) => logs.get(id) ?? [] })
      } catch (error) {
        throw ClientAdapterConformanceError.isInstance(error)
          ? error
          : new ClientAdapterConformanceError(spec.duty, `the case failed: ${messageOf(error)}`, { cause: error })
      } finally {
        await adapter?.close()
        await rm(dir, { recursive: true, force: true })
      }
    },
  }))
}
