import { initialPlanProgress, planProgress, stepPlanProgress, viewPlanProgress, type PlanProgressState } from '@planmode/plan-progress'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { PLAN } from './support.js'

let seq = 0
const ev = (type: string, data: unknown): SessionEvent => ({ type, seq: seq++, time: 0, data }) as unknown as SessionEvent
const call = (id: string, plan: unknown) =>
  ev('assistant/message', {
    turn: 1,
    step: 1,
    content: [
      { type: 'text', text: 'here' },
      { type: 'tool-call', toolCallId: id, toolName: 'exit_plan_mode', input: { plan } },
    ],
  })
const record = (id: string, outcome: string, extra: Record<string, unknown> = {}) =>
  ev('plan/review', { toolCallId: id, outcome, ...extra })
const result = (id: string, value: unknown, isError = false) =>
  ev('tool/result', {
    toolCallId: id,
    toolName: 'exit_plan_mode',
    isError,
    content: [{ type: 'text', text: 'r' }],
    ...(value === undefined ? {} : { value }),
  })
const mode = (active: boolean, cause?: string) => ev('plan/mode', cause === undefined ? { active } : { active, cause })
const progress = (plan: string, steps: unknown) => ev('plan/progress', { toolCallId: 'u', plan, steps })
const handoff = (data: Record<string, unknown>) => ev('plan/handoff', data)

const fold = (events: readonly SessionEvent[], from: PlanProgressState = initialPlanProgress()) => events.reduce(stepPlanProgress, from)
const view = (events: readonly SessionEvent[]) => viewPlanProgress(fold(events))
const STEPS = [
  { step: 1, text: 'Add a cache.', status: 'pending' },
  { step: 2, text: 'Wire it in.', status: 'pending' },
  { step: 3, text: 'Test it.', status: 'pending' },
]

describe('§17 the approved plan', () => {
  it('none: { plan: null, steps: [], done: 0, total: 0, active: null }', () => {
    expect(view([])).toEqual({ plan: null, steps: [], done: 0, total: 0, active: null })
    expect(planProgress.view(planProgress.initial())).toEqual({ plan: null, steps: [], done: 0, total: 0, active: null })
  })

  it('an approved record: the plan argument of its exit_plan_mode call, identified by its toolCallId, titled by §6', () => {
    expect(view([call('x1', PLAN), record('x1', 'approved')])).toEqual({
      plan: { toolCallId: 'x1', title: 'Add caching' },
      steps: STEPS,
      done: 0,
      total: 3,
      active: null,
    })
  })

  it('an approved record with an edit: the record’s plan', () => {
    const v = view([call('x1', PLAN), record('x1', 'approved', { plan: '## Edited\n\n1. Only this.\n' })])
    expect(v.plan).toEqual({ toolCallId: 'x1', title: 'Edited' })
    expect(v.steps).toEqual([{ step: 1, text: 'Only this.', status: 'pending' }])
  })

  it('a record with handoff.fresh is not tracked in its own session; one with only a model is', () => {
    expect(
      view([
        call('x1', PLAN),
        record('x1', 'approved', { handoff: { fresh: true } }),
        result('x1', { approved: true, handoff: { fresh: true } }),
      ]).plan,
    ).toBeNull()
    expect(view([call('x1', PLAN), record('x1', 'approved', { handoff: { model: 'm' } })]).plan).toEqual({
      toolCallId: 'x1',
      title: 'Add caching',
    })
  })

  it('other outcomes approve nothing: keep-planning, stopped, dismissed, and their failed results', () => {
    for (const outcome of ['keep-planning', 'stopped', 'dismissed']) {
      expect(view([call('x1', PLAN), record('x1', outcome), result('x1', undefined, true)]).plan).toBeNull()
    }
  })

  it('a legacy approved result (no record for its call): value.plan when present, else the call’s argument', () => {
    expect(view([call('x1', PLAN), result('x1', { approved: true })]).plan).toEqual({ toolCallId: 'x1', title: 'Add caching' })
    const edited = view([call('x1', PLAN), result('x1', { approved: true, plan: '# Mine\n\n1. a\n' })])
    expect(edited).toMatchObject({ plan: { toolCallId: 'x1', title: 'Mine' }, total: 1 })
    // failed or not approved results are no approval
    expect(view([call('x1', PLAN), result('x1', { approved: true }, true)]).plan).toBeNull()
    expect(view([call('x1', PLAN), result('x1', { approved: false })]).plan).toBeNull()
    expect(view([call('x1', PLAN), result('x1', 'approved')]).plan).toBeNull()
  })

  it('the result after a record is not a second approval: progress made in between stays', () => {
    const done = [{ ...STEPS[0], status: 'done' }, STEPS[1], STEPS[2]]
    const v = view([call('x1', PLAN), record('x1', 'approved'), progress('x1', done), result('x1', { approved: true })])
    expect(v.steps).toEqual(done)
  })

  it('a record for a call never seen: a plan without text (no steps, title Plan); its result then changes nothing', () => {
    const events = [record('x9', 'approved')]
    expect(view(events)).toEqual({ plan: { toolCallId: 'x9', title: 'Plan' }, steps: [], done: 0, total: 0, active: null })
    const state = fold(events)
    const after = stepPlanProgress(state, result('x9', { approved: true }))
    expect(viewPlanProgress(after)).toEqual(viewPlanProgress(state))
  })

  it('a plan/handoff event: its plan and title, identified by the toolCallId of its from', () => {
    const v = view([handoff({ from: { session: 's1', toolCallId: 'x1' }, plan: PLAN, title: 'Handed on', model: 'm' })])
    expect(v).toEqual({ plan: { toolCallId: 'x1', title: 'Handed on' }, steps: STEPS, done: 0, total: 3, active: null })
    expect(view([handoff({ from: { session: 's1', toolCallId: 'x1' }, plan: PLAN })]).plan!.title).toBe('Add caching')
    expect(view([handoff({ from: { session: 's1' }, plan: PLAN })]).plan).toBeNull()
    expect(view([handoff({ from: { session: 's1', toolCallId: 'x1' } })]).plan).toBeNull()
  })

  it('the latest of them wins', () => {
    const events = [
      handoff({ from: { session: 's', toolCallId: 'h' }, plan: '# H\n\n1. h\n', title: 'H' }),
      call('x1', PLAN),
      record('x1', 'approved'),
      result('x1', { approved: true }),
      call('x2', '# Two\n\n1. two\n'),
      result('x2', { approved: true }),
    ]
    expect(view(events).plan).toEqual({ toolCallId: 'x2', title: 'Two' })
  })

  it('a plan/mode on with cause user (or none) or model ends tracking; review, inherit and off do not', () => {
    const approved = [call('x1', PLAN), record('x1', 'approved'), result('x1', { approved: true }), mode(false, 'review')]
    for (const ending of [mode(true, 'user'), mode(true), mode(true, 'model')]) expect(view([...approved, ending])).toEqual(view([]))
    for (const kept of [mode(true, 'inherit'), mode(false, 'user'), mode(true, 'review')])
      expect(view([...approved, kept]).plan).not.toBeNull()
    // then no plan until the next one
    const next = [...approved, mode(true, 'user'), progress('x1', STEPS), call('x2', '# Two\n\n1. two\n'), record('x2', 'approved')]
    expect(view(next)).toMatchObject({ plan: { toolCallId: 'x2' }, total: 1 })
  })

  it('an approved plan without steps: its plan, steps []', () => {
    expect(view([call('x1', '# Prose only\n\nDo the thing.'), record('x1', 'approved')])).toEqual({
      plan: { toolCallId: 'x1', title: 'Prose only' },
      steps: [],
      done: 0,
      total: 0,
      active: null,
    })
  })

  it('exit calls of a turn that ended without a result are forgotten at turn/end', () => {
    const state = fold([call('x1', PLAN)])
    expect(state.calls).toHaveLength(1)
    const ended = stepPlanProgress(state, ev('turn/end', { turn: 1, reason: 'interrupted' }))
    expect(ended.calls).toEqual([])
    expect(viewPlanProgress(stepPlanProgress(ended, record('x1', 'approved')))).toMatchObject({
      plan: { toolCallId: 'x1', title: 'Plan' },
      total: 0,
    })
  })
})

describe('§17 steps: the latest plan/progress list for the tracked plan', () => {
  const base = [call('x1', PLAN), record('x1', 'approved')]
  const list = [
    { step: 1, text: 'Add a cache.', status: 'done', note: 'ok' },
    { step: 2, text: 'Wire it in.', status: 'in_progress' },
    { step: 3, text: 'Test it.', status: 'skipped', note: 'later' },
  ]

  it('replaces the steps; done counts done and skipped; active is the step in progress', () => {
    expect(view([...base, progress('x1', list)])).toEqual({
      plan: { toolCallId: 'x1', title: 'Add caching' },
      steps: list,
      done: 2,
      total: 3,
      active: 2,
    })
  })

  it('a list for another plan, or a malformed one, is ignored (same state reference)', () => {
    const state = fold(base)
    for (const bad of [
      progress('x2', list),
      progress('x1', 'no list'),
      progress('x1', [{ step: 2, text: 'a', status: 'done' }]),
      progress('x1', [{ step: 1, text: 'a', status: 'finished' }]),
      progress('x1', [{ step: 1, text: 3, status: 'done' }]),
      progress('x1', [{ step: 1, text: 'a', status: 'done', note: 1 }]),
      progress('x1', [null]),
      ev('plan/progress', null),
    ]) {
      expect(stepPlanProgress(state, bad)).toBe(state)
    }
    expect(stepPlanProgress(fold([]), progress('x1', list))).toEqual(fold([]))
  })

  it('unknown keys of a logged step are dropped (the wire value stays valid)', () => {
    const v = view([...base, progress('x1', [{ step: 1, text: 'a', status: 'done', extra: 1 }])])
    expect(v.steps).toEqual([{ step: 1, text: 'a', status: 'done' }])
    expect(planProgress.schema['~standard'].validate(v)).toEqual({ value: v })
  })
})

describe('§17/§7 projection unit rules', () => {
  it('key planProgress, stateVersion 1, plain-JSON state', () => {
    expect(planProgress.key).toBe('planProgress')
    expect(planProgress.stateVersion).toBe(1)
    const state = fold([call('x1', PLAN), record('x1', 'approved'), progress('x1', STEPS)])
    expect(JSON.parse(JSON.stringify(state))).toEqual(state)
  })

  it('returns the same state reference for every unrelated event', () => {
    const state = fold([
      call('x1', PLAN),
      record('x1', 'approved'),
      result('x1', { approved: true }),
      ev('turn/end', { turn: 1, reason: 'completed' }),
    ])
    const unrelated = [
      ev('turn/start', { turn: 2 }),
      ev('turn/end', { turn: 2, reason: 'completed' }),
      ev('step/start', { turn: 2, step: 1 }),
      ev('user/message', { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }),
      ev('assistant/message', {
        turn: 2,
        step: 1,
        content: [
          { type: 'text', text: 'x' },
          { type: 'tool-call', toolCallId: 'r', toolName: 'read', input: {} },
        ],
      }),
      ev('assistant/message', { turn: 2, step: 1, content: 'not blocks' }),
      ev('assistant/message', {
        turn: 2,
        step: 1,
        content: [{ type: 'tool-call', toolCallId: 'x', toolName: 'exit_plan_mode', input: { plan: 3 } }],
      }),
      ev('tool/result', { toolCallId: 'r', toolName: 'read', isError: false, content: [] }),
      ev('tool/result', { toolCallId: 'zz', toolName: 'exit_plan_mode', isError: true, content: [] }),
      ev('plan/review', { outcome: 'approved' }),
      ev('plan/review', null),
      ev('plan/handoff', null),
      mode(false, 'review'),
      mode(true, 'inherit'),
      ev('request/header', { reason: 'change' }),
      ev('command/run', { commandId: 'c', name: 'plan', args: '', source: { kind: 'user' } }),
      ev('some/unknown', { anything: true }),
    ]
    for (const event of unrelated) expect(stepPlanProgress(state, event)).toBe(state)
    expect(stepPlanProgress(initialPlanProgress(), mode(true, 'user'))).toEqual(initialPlanProgress())
    const none = initialPlanProgress()
    expect(stepPlanProgress(none, mode(true, 'user'))).toBe(none)
  })

  it('never changes the state it is given', () => {
    const state = fold([call('x1', PLAN)])
    const copy = JSON.parse(JSON.stringify(state))
    fold([record('x1', 'approved'), progress('x1', STEPS), result('x1', { approved: true }), mode(true, 'user')], state)
    expect(state).toEqual(copy)
  })

  it('the schema accepts every view and refuses a malformed one', () => {
    const validate = planProgress.schema['~standard'].validate
    const good = view([call('x1', PLAN), record('x1', 'approved')])
    expect(validate(good)).toEqual({ value: good })
    const bad: unknown[] = [
      null,
      'x',
      { ...good, extra: 1 },
      { ...good, plan: { toolCallId: 'x1' } },
      { ...good, plan: { toolCallId: 'x1', title: 't', more: 1 } },
      { ...good, plan: 'x1' },
      { ...good, steps: 'none' },
      { ...good, steps: [{ step: 2, text: 'a', status: 'pending' }], total: 1 },
      { ...good, steps: [{ step: 1, text: 'a', status: 'later' }], total: 1 },
      { ...good, steps: [{ step: 1, text: 'a', status: 'done', note: 1 }], total: 1, done: 1 },
      { ...good, steps: [{ step: 1, text: 'a', status: 'done', x: 1 }], total: 1, done: 1 },
      { ...good, steps: [{ step: 1, status: 'done' }], total: 1, done: 1 },
      { ...good, steps: [null], total: 1 },
      { ...good, total: 2 },
      { ...good, done: 4 },
      { ...good, done: -1 },
      { ...good, active: 0 },
      { ...good, active: '1' },
      { plan: null, steps: good.steps, done: 0, total: 3, active: null },
    ]
    for (const value of bad)
      expect((validate(value) as { issues?: unknown[] }).issues?.length ?? 0, JSON.stringify(value)).toBeGreaterThan(0)
  })
})
