/**
 * The plan-progress rows (SPEC §17): an `update_plan` call, the
 * `planProgress` unit's live apply per event, and the per-step cost of the
 * message rules (plan-core's pre-step flush with plan-progress composed),
 * each beside the plain baseline of progress-baseline.ts. The log is the
 * generated one with a tracked plan at its end (`trackedTail`).
 */
import { Context, type Logger } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { createUpdatePlanTool, planProgress, planProgressPlugin, type PlanStepStatus } from '@planmode/plan-progress'
import type { Agent, SessionEvent } from '@planmode/seams'
import type { BaselineController, BaselineAgent } from './baseline.js'
import { benchAgent } from './bench-session.js'
import type { BenchEvent } from './generator.js'
import { approvedPlanScan, baselineUpdate, progressDueScan } from './progress-baseline.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** An eight-step plan, about 1 KB, as a model writes one. */
export const TRACKED_PLAN = [
  '# Add a cache to the API client',
  '',
  'Context: every request goes to the network today.',
  '',
  '## Steps',
  '',
  ...Array.from(
    { length: 8 },
    (_, i) => `${i + 1}. Change \`src/client/part-${i + 1}.ts\` so that step ${i + 1} of the cache works,\n   with its tests.`,
  ),
  '',
  '## Verification',
  '',
  '- `npm test` passes.',
].join('\n')

/**
 * The events after `log` that leave a plan tracked, announced and started,
 * with a turn open and its first step begun: a turn whose step presents the
 * plan, its review record and result, the silent exit, the tracking message,
 * one `plan/progress`, the turn's end; then a new turn with one step started.
 */
export function trackedTail(log: readonly BenchEvent[]): BenchEvent[] {
  let seq = log[log.length - 1]!.seq
  let turn = 0
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i]!
    if (e.type === 'turn/end' || e.type === 'turn/start') {
      turn = (e.data as { turn: number }).turn
      break
    }
  }
  const time = log[log.length - 1]!.time
  const ev = (type: string, data: unknown): BenchEvent => ({ type, seq: ++seq, time, data }) as unknown as BenchEvent
  const id = 'tracked-exit'
  const steps = Array.from({ length: 8 }, (_, i) => ({
    step: i + 1,
    text: `Change \`src/client/part-${i + 1}.ts\` so that step ${i + 1} of the cache works, with its tests.`,
    status: i === 0 ? 'in_progress' : 'pending',
  }))
  const user = (text: string, source: unknown) => ev('user/message', { content: [{ type: 'text', text }], source })
  return [
    ev('turn/start', { turn: turn + 1 }),
    user('add a cache', { kind: 'user' }),
    ev('step/start', { turn: turn + 1, step: 1 }),
    ev('assistant/message', {
      turn: turn + 1,
      step: 1,
      content: [{ type: 'tool-call', toolCallId: id, toolName: 'exit_plan_mode', input: { plan: TRACKED_PLAN } }],
    }),
    ev('plan/review', { toolCallId: id, outcome: 'approved' }),
    ev('tool/result', {
      toolCallId: id,
      toolName: 'exit_plan_mode',
      isError: false,
      content: [{ type: 'text', text: 'approved' }],
      value: { approved: true },
    }),
    ev('step/end', { turn: turn + 1, step: 1 }),
    ev('plan/mode', { active: false, cause: 'review' }),
    user('Track the approved plan with update_plan: …', { kind: 'plugin', plugin: 'plan-mode', form: 'progress' }),
    ev('step/start', { turn: turn + 1, step: 2 }),
    ev('plan/progress', { toolCallId: 'u1', plan: id, steps }),
    ev('step/end', { turn: turn + 1, step: 2 }),
    ev('turn/end', { turn: turn + 1, reason: 'completed' }),
    ev('turn/start', { turn: turn + 2 }),
    user('go on', { kind: 'user' }),
    ev('step/start', { turn: turn + 2, step: 1 }),
    ev('step/end', { turn: turn + 2, step: 1 }),
  ]
}

/** The turn the tail leaves open. */
const openTurnOf = (tail: readonly BenchEvent[]): number => (tail[tail.length - 4]!.data as { turn: number }).turn

interface Side {
  readonly fn: () => unknown
  readonly setup?: () => unknown
}

/** A row of plan-rows.ts's shape. */
export interface ProgressCase {
  readonly id: string
  readonly ours: Side
  readonly baseline: Side
}

const signal = new AbortController().signal

let sink: unknown

/**
 * The progress rows for one log, built lazily like the plan rows.
 * `baselineFlush` is the plain plan-core baseline's pre-step flush (the
 * progress rule's scan is added to it).
 */
export function progressCases(
  log: readonly BenchEvent[],
  baselineFlush: (agent: Agent) => Promise<unknown>,
  baseline: BaselineController,
): Array<() => ProgressCase> {
  const tail = trackedTail(log)
  const tracked = [...log, ...tail]
  const n = tracked.length
  const turn = openTurnOf(tail)
  return [
    // update_plan: alternately step 2 in progress / pending (step 1 is in progress already: move it along).
    () => {
      const tool = createUpdatePlanTool()
      const ctx = new Context({ logger: quiet })
      ctx.plugin(planCorePlugin)
      const ours = benchAgent('progress-update', tracked.slice())
      const base = benchAgent('progress-update-b', tracked.slice())
      const flips: { step: number; status: PlanStepStatus }[][] = [
        [
          { step: 1, status: 'done' },
          { step: 2, status: 'in_progress' },
        ],
        [
          { step: 1, status: 'in_progress' },
          { step: 2, status: 'pending' },
        ],
      ]
      let a = 0
      let b = 0
      let calls = 0
      return {
        id: 'progress-update',
        ours: {
          setup: () => undefined,
          fn: async () => {
            await tool.execute({ updates: flips[a++ & 1]! }, { agent: ours, signal, toolCallId: `u${calls++}` })
          },
        },
        baseline: {
          setup: () => {
            base.session.events.length = n
            b = 0
          },
          fn: () => baselineUpdate(base.session as never, 'ub', flips[b++ & 1]!),
        },
      }
    },

    // planProgress live: one apply per event of the last 1000, a view when the state changed; baseline refolds for the view.
    () => {
      const events = tracked as readonly SessionEvent[]
      const from = Math.max(0, n - 1000)
      let base = planProgress.initial()
      for (let i = 0; i < from; i++) base = planProgress.apply(base, events[i]!)
      let state = base
      let i = from
      return {
        id: 'progress-apply',
        ours: {
          fn: () => {
            const next = planProgress.apply(state, events[i]!)
            if (next !== state) {
              state = next
              sink = planProgress.view(state)
            }
            i += 1
            if (i === n) {
              i = from
              state = base
            }
          },
        },
        baseline: { fn: () => (sink = approvedPlanScan(tracked)) },
      }
    },

    // The message rules per step: a pre-step through plan-core with plan-progress composed, mid-turn, nothing due.
    () => {
      const ctx = new Context({ logger: quiet })
      ctx.plugin(planCorePlugin)
      ctx.plugin(planProgressPlugin)
      const ours = benchAgent('progress-step', tracked.slice())
      const base = benchAgent('progress-step-b', tracked.slice())
      const payload = { agent: ours as Agent, turn, step: 2, signal, messages: [] }
      const enter = () => Promise.resolve({ kind: 'enter' as const, messages: [] })
      const flush = () => ctx.waterfall('agent/pre-step', payload, enter)
      baseline.get(base as unknown as BaselineAgent)
      return {
        id: 'progress-step',
        ours: {
          fn: async () => {
            const decision = await flush()
            if (decision.kind !== 'enter' || decision.messages.length !== 0) throw new Error('progress-step: a message was due')
          },
        },
        baseline: {
          fn: async () => {
            await baselineFlush(base)
            if (progressDueScan(base.session.events, turn, false) !== undefined)
              throw new Error('progress-step baseline: a message was due')
          },
        },
      }
    },
  ]
}

void sink
