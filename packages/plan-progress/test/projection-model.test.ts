// The planProgress fold against a plain model of SPEC §17 that rescans the whole log: the approved
// plan is the latest approval event (a record, a legacy result, a handoff) not followed by a plan-mode
// entry of the user or the model, and its steps are the latest plan/progress for it after that event.
import fc from 'fast-check'
import {
  initialPlanProgress,
  stepPlanProgress,
  viewPlanProgress,
  type PlanProgressStep,
  type PlanProgressView,
} from '@planmode/plan-progress'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'

/** Plans, their titles and their steps, written out by hand (the parser has its own tests). */
const PLANS: readonly {
  readonly text: string
  readonly title: string
  readonly steps: readonly string[]
  readonly done?: readonly number[]
}[] = [
  { text: '# Cache\n\n## Steps\n1. Add it.\n2. Wire it\n   in.\n', title: 'Cache', steps: ['Add it.', 'Wire it in.'] },
  { text: '# Tasks\n\n- [x] Read.\n- note\n- [ ] Write.\n- [ ] Test.\n', title: 'Tasks', steps: ['Read.', 'Write.', 'Test.'], done: [1] },
  { text: '# Prose\n\nNothing to list.\n', title: 'Prose', steps: [] },
  { text: '## Ordered\n\n- bullet\n\n1. One.\n', title: 'Ordered', steps: ['One.'] },
]
const IDS = ['a', 'b', 'c'] as const
const CAUSES = [undefined, 'user', 'model', 'review', 'inherit'] as const
const STATUSES = ['pending', 'in_progress', 'done', 'skipped'] as const

type Raw = { readonly type: string; readonly data: unknown }

const planOf = fc.integer({ min: 0, max: PLANS.length - 1 })
const id = fc.constantFrom(...IDS)
const steps = fc
  .array(fc.record({ status: fc.constantFrom(...STATUSES), note: fc.option(fc.constantFrom('n', 'why'), { nil: undefined }) }), {
    maxLength: 4,
  })
  .map((list) =>
    list.map((entry, index) => ({
      step: index + 1,
      text: `t${index + 1}`,
      status: entry.status,
      ...(entry.note === undefined ? {} : { note: entry.note }),
    })),
  )

/** One turn's events: exit calls and what follows them (records, results), progress, modes, handoffs, filler. */
const inTurn: fc.Arbitrary<Raw[]> = fc.oneof(
  fc.tuple(id, planOf).map(([i, p]) => [
    {
      type: 'assistant/message',
      data: {
        turn: 1,
        step: 1,
        content: [{ type: 'tool-call', toolCallId: i, toolName: 'exit_plan_mode', input: { plan: PLANS[p]!.text } }],
      },
    },
  ]),
  fc
    .tuple(
      id,
      fc.constantFrom('approved', 'keep-planning', 'stopped', 'dismissed'),
      fc.option(planOf, { nil: undefined }),
      fc.constantFrom(undefined, { fresh: true }, { model: 'm' }),
    )
    .map(([i, outcome, edit, handoff]) => [
      {
        type: 'plan/review',
        data: {
          toolCallId: i,
          outcome,
          ...(edit === undefined ? {} : { plan: PLANS[edit]!.text }),
          ...(handoff === undefined ? {} : { handoff }),
        },
      },
    ]),
  fc
    .tuple(id, fc.boolean(), fc.boolean(), fc.option(planOf, { nil: undefined }), fc.boolean())
    .map(([i, isError, approved, edit, fresh]) => [
      {
        type: 'tool/result',
        data: {
          toolCallId: i,
          toolName: 'exit_plan_mode',
          isError,
          content: [],
          ...(isError
            ? {}
            : {
                value: {
                  approved,
                  ...(edit === undefined ? {} : { plan: PLANS[edit]!.text }),
                  ...(fresh ? { handoff: { fresh: true } } : {}),
                },
              }),
        },
      },
    ]),
  fc
    .tuple(fc.boolean(), fc.constantFrom(...CAUSES))
    .map(([active, cause]) => [{ type: 'plan/mode', data: cause === undefined ? { active } : { active, cause } }]),
  fc.tuple(id, steps).map(([plan, list]) => [{ type: 'plan/progress', data: { toolCallId: 'u', plan, steps: list } }]),
  fc.tuple(id, planOf, fc.boolean()).map(([i, p, titled]) => [
    {
      type: 'plan/handoff',
      data: { from: { session: 's0', toolCallId: i }, plan: PLANS[p]!.text, ...(titled ? { title: `T${p}` } : {}) },
    },
  ]),
  fc.constantFrom<Raw[]>(
    [{ type: 'user/message', data: { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } }],
    [{ type: 'step/start', data: { turn: 1, step: 1 } }],
    [{ type: 'tool/result', data: { toolCallId: 'r', toolName: 'read', isError: false, content: [] } }],
  ),
)
const turn = fc
  .array(inTurn, { maxLength: 8 })
  .map((parts) => [
    { type: 'turn/start', data: { turn: 1 } },
    ...parts.flat(),
    { type: 'turn/end', data: { turn: 1, reason: 'completed' } },
  ])
const log = fc
  .array(turn, { maxLength: 6 })
  .map((turns) => turns.flat().map((event, seq) => ({ ...event, seq, time: 0 }) as unknown as SessionEvent))

const initialSteps = (plan: string): PlanProgressStep[] => {
  const known = PLANS.find((entry) => entry.text === plan)
  if (known === undefined) return []
  return known.steps.map((text, index) => ({
    step: index + 1,
    text,
    status: known.done?.includes(index + 1) === true ? 'done' : 'pending',
  }))
}
const titleOf = (plan: string): string => PLANS.find((entry) => entry.text === plan)?.title ?? 'Plan'
const fresh = (value: unknown): boolean => (value as { handoff?: { fresh?: unknown } } | undefined)?.handoff?.fresh === true

/** The plain model: rescans `events` from the start for every question. */
function model(events: readonly SessionEvent[]): PlanProgressView {
  const data = (index: number) => events[index]!.data as Record<string, unknown>
  /** The latest exit call with `id` before `index` in the same turn, and whether a record for it came between. */
  const callBefore = (index: number, id: string): { plan: string; recorded: boolean } | undefined => {
    for (let at = index - 1; at >= 0 && events[at]!.type !== 'turn/start'; at--) {
      const event = events[at]!
      if (event.type === 'assistant/message') {
        const block = (data(at)['content'] as { toolCallId: string; input: { plan: string } }[])[0]!
        if (block.toolCallId === id) {
          const recorded = events
            .slice(at + 1, index)
            .some((e) => (e.type as string) === 'plan/review' && (e.data as { toolCallId: string }).toolCallId === id)
          return { plan: block.input.plan, recorded }
        }
      }
    }
    return undefined
  }
  /** Every approval event, in order: its index, id, plan text and title. */
  const approvals: { index: number; id: string; plan: string; title: string }[] = []
  events.forEach((event, index) => {
    const d = data(index)
    if ((event.type as string) === 'plan/review' && d['outcome'] === 'approved' && !fresh(d)) {
      const plan = typeof d['plan'] === 'string' ? d['plan'] : (callBefore(index, d['toolCallId'] as string)?.plan ?? '')
      approvals.push({ index, id: d['toolCallId'] as string, plan, title: titleOf(plan) })
    }
    if (event.type === 'tool/result' && d['toolName'] === 'exit_plan_mode' && d['isError'] === false) {
      const value = d['value'] as Record<string, unknown>
      const call = callBefore(index, d['toolCallId'] as string)
      const recordedBefore =
        call === undefined
          ? events
              .slice(0, index)
              .some(
                (e, at) =>
                  (e.type as string) === 'plan/review' &&
                  (e.data as { toolCallId: string }).toolCallId === d['toolCallId'] &&
                  !events.slice(at, index).some((x) => x.type === 'turn/start'),
              )
          : call.recorded
      if (value['approved'] === true && !fresh(value) && !recordedBefore) {
        const plan = typeof value['plan'] === 'string' ? value['plan'] : (call?.plan ?? '')
        approvals.push({ index, id: d['toolCallId'] as string, plan, title: titleOf(plan) })
      }
    }
    if ((event.type as string) === 'plan/handoff') {
      const plan = d['plan'] as string
      approvals.push({
        index,
        id: (d['from'] as { toolCallId: string }).toolCallId,
        plan,
        title: typeof d['title'] === 'string' ? d['title'] : titleOf(plan),
      })
    }
  })
  const latest = approvals.at(-1)
  const none: PlanProgressView = { plan: null, steps: [], done: 0, total: 0, active: null }
  if (latest === undefined) return none
  const after = events.slice(latest.index + 1)
  const ended = after.some((e) => e.type === 'plan/mode' && e.data.active && [undefined, 'user', 'model'].includes(e.data.cause))
  if (ended) return none
  const progress = after.filter((e) => (e.type as string) === 'plan/progress' && (e.data as { plan: string }).plan === latest.id).at(-1)
  const stepList = progress === undefined ? initialSteps(latest.plan) : (progress.data as unknown as { steps: PlanProgressStep[] }).steps
  const done = stepList.filter((s) => s.status === 'done' || s.status === 'skipped').length
  const active = stepList.find((s) => s.status === 'in_progress')?.step ?? null
  return { plan: { toolCallId: latest.id, title: latest.title }, steps: stepList, done, total: stepList.length, active }
}

const TOUCHES = new Set(['assistant/message', 'plan/review', 'tool/result', 'plan/mode', 'plan/progress', 'plan/handoff', 'turn/end'])

describe('§17 planProgress fold against a plain model', () => {
  it('agrees with the model at every prefix of generated logs, and keeps the reference for events that touch nothing', () => {
    fc.assert(
      fc.property(log, (events) => {
        let state = initialPlanProgress()
        for (let index = 0; index < events.length; index++) {
          const event = events[index]!
          const next = stepPlanProgress(state, event)
          if (
            !TOUCHES.has(event.type) ||
            (event.type === 'tool/result' && (event.data as { toolName: string }).toolName !== 'exit_plan_mode')
          )
            expect(next).toBe(state)
          state = next
          expect(viewPlanProgress(state)).toEqual(model(events.slice(0, index + 1)))
        }
      }),
      { numRuns: 300 },
    )
  })
})
