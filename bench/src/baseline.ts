/**
 * The plain baseline: the straightforward algorithms that refold the whole
 * log on every call, as the reference design does (SPEC §9, "every read
 * folds the whole log"). Same answers as the real packages, no caches, no
 * cleverness: each function walks `events` from the first event.
 */
import type { UserMessage } from '@planmode/seams'
import type { BenchEvent } from './generator.js'

type Log = readonly BenchEvent[]

const ENTER = 'The user switched this session to plan mode.'
const LEAVE = 'The user switched this session back to the default mode.'

/** §2: the `active` of the last `plan/mode` among `events[0, end)`, by a forward scan. */
export function foldPlanModeScan(events: Log, end = events.length): boolean {
  let active = false
  for (let i = 0; i < end; i++) {
    const e = events[i]!
    if (e.type === 'plan/mode') active = (e.data as { active: boolean }).active
  }
  return active
}

/** §1: whether the last `turn/start` is not followed by a `turn/end`, by a forward scan. */
export function hasOpenTurnScan(events: Log): boolean {
  let open = false
  for (let i = 0; i < events.length; i++) {
    const t = events[i]!.type
    if (t === 'turn/start') open = true
    else if (t === 'turn/end') open = false
  }
  return open
}

/** The state a logged `user/message` tells when it is a plan-mode notice (§3.4), else `undefined`. */
function noticeState(data: unknown): boolean | undefined {
  const m = data as UserMessage
  if (m.source?.kind !== 'plugin' || m.source.plugin !== 'plan-mode' || m.source.form !== 'notice') return undefined
  const first = m.content[0]
  const text = first?.type === 'text' ? first.text : undefined
  return text === ENTER ? true : text === LEAVE ? false : undefined
}

/**
 * §3.4: the state the model was last told, by a forward scan: `undefined`
 * until the first `request/header`; from it on, a header tells the logged
 * state, a notice its own state, a `plan/mode` with cause `review` or
 * `model` its own state.
 */
export function toldStateScan(events: Log): boolean | undefined {
  let active = false
  let told: boolean | undefined
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'plan/mode') {
      const data = e.data as { active: boolean; cause?: string }
      active = data.active
      if (told !== undefined && (data.cause === 'review' || data.cause === 'model')) told = active
    } else if (e.type === 'request/header') told = active
    else if (e.type === 'user/message' && told !== undefined) told = noticeState(e.data) ?? told
  }
  return told
}

/** §7 state, folded plainly. */
export interface ProjectionState {
  active: boolean
  wanted: boolean | null
  running: { commandId: string; wanted: boolean } | null
}

/** §7: the whole projection state by a cold fold of the log. */
export function projectionStateScan(events: Log): ProjectionState {
  let active = false
  let wanted: boolean | null = null
  let running: ProjectionState['running'] = null
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'command/run') {
      if (e.data.name === 'plan' && e.data.args !== undefined) {
        running = { commandId: e.data.commandId, wanted: e.data.args.trim().toLowerCase() !== 'off' }
      }
    } else if (e.type === 'command/done') {
      if (running !== null && running.commandId === e.data.commandId) {
        wanted = e.data.kind === 'success' && running.wanted !== active ? running.wanted : null
        running = null
      }
    } else if (e.type === 'plan/mode') {
      active = (e.data as { active: boolean }).active
      wanted = null
    }
  }
  return { active, wanted, running }
}

/** §7: the `plan` projection's wire value by a cold refold of the whole log. */
export function projectionViewScan(events: Log): { active: boolean; pending: boolean } {
  const s = projectionStateScan(events)
  const w = s.running?.wanted ?? s.wanted
  return { active: s.active, pending: w !== null && w !== s.active }
}

/** §9: the pending `/plan` selection a restart recovers from command records, by a full scan. */
export function pendingFromCommandsScan(events: Log): boolean | undefined {
  const s = projectionStateScan(events)
  const w = s.running?.wanted ?? s.wanted
  return w !== null && w !== s.active ? w : undefined
}

/** The minimal agent the baseline controller needs. */
export interface BaselineAgent {
  readonly id: string
  readonly session: {
    readonly id: string
    readonly events: Log
    append(type: 'plan/mode', data: { active: boolean; cause: 'user' }): Promise<unknown>
  }
}

function noticeFor(events: Log, target: boolean): UserMessage | undefined {
  const told = toldStateScan(events)
  if (told === undefined || told === target) return undefined
  return {
    content: [{ type: 'text', text: target ? ENTER : LEAVE }],
    source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: target ? 'Plan mode on' : 'Plan mode off' },
  }
}

/**
 * The §3 controller written plainly: pending selections in a map (restored
 * from command records on first use, §9), and every read of the logged
 * state, the open turn and the told state a full scan of the log.
 */
export class BaselineController {
  private readonly pending = new Map<string, boolean>()
  private readonly seen = new Set<string>()

  private restore(agent: BaselineAgent): void {
    const key = agent.session.id
    if (this.seen.has(key)) return
    this.seen.add(key)
    const wanted = pendingFromCommandsScan(agent.session.events)
    if (wanted !== undefined) this.pending.set(key, wanted)
  }

  get(agent: BaselineAgent): { active: boolean; pending?: boolean } {
    this.restore(agent)
    const active = foldPlanModeScan(agent.session.events)
    const p = this.pending.get(agent.session.id)
    return p === undefined ? { active } : { active, pending: p }
  }

  async set(agent: BaselineAgent, active: boolean): Promise<'committed' | 'queued' | 'cancelled' | 'noop'> {
    this.restore(agent)
    const key = agent.session.id
    const logged = foldPlanModeScan(agent.session.events)
    const p = this.pending.get(key)
    if (active === (p ?? logged)) return 'noop'
    if (hasOpenTurnScan(agent.session.events)) {
      this.pending.set(key, active)
      return active === logged ? 'cancelled' : 'queued'
    }
    if (active === logged) {
      this.pending.delete(key)
      return 'cancelled'
    }
    // An idle commit tells the model nothing: the next accepted pre-step does (§3.2, §3.4).
    await agent.session.append('plan/mode', { active, cause: 'user' })
    this.pending.delete(key)
    return 'committed'
  }

  /**
   * The §3.3 flush, given the downstream decision's `messages` (the decision is `enter`): apply the
   * pending selection, then add the §3.4 notice when the told state differs from the logged one.
   */
  async flush(agent: BaselineAgent, messages: readonly UserMessage[]): Promise<readonly UserMessage[]> {
    this.restore(agent)
    const key = agent.session.id
    const p = this.pending.get(key)
    const events = agent.session.events
    if (p !== undefined) {
      if (p !== foldPlanModeScan(events)) await agent.session.append('plan/mode', { active: p, cause: 'user' })
      this.pending.delete(key)
    }
    const notice = noticeFor(events, foldPlanModeScan(events))
    return notice === undefined ? messages : [...messages, notice]
  }
}

/** §4: the `plan:policy` text, with the state found by full scans. */
export function policyTextScan(controller: BaselineController, agent: BaselineAgent | undefined, section: string): string {
  if (agent === undefined) return ''
  const s = controller.get(agent)
  return (s.pending ?? s.active) ? section : ''
}
