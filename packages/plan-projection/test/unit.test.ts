import { planProjection } from '@planmode/plan-projection'
import type { SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { describe, expect, it } from 'vitest'

type Body = { [K in SessionEventType]: { type: K; data: SessionEventMap[K] } }[SessionEventType]
const place = (bodies: readonly Body[]): SessionEvent[] => bodies.map((body, seq) => ({ ...body, seq, time: 0 }) as SessionEvent)
const run = (commandId: string, args?: string, name = 'plan'): Body => ({
  type: 'command/run',
  data:
    args === undefined
      ? ({ commandId, name, source: { kind: 'user' } } as SessionEventMap['command/run']) /* a log from before args was always logged */
      : { commandId, name, args, source: { kind: 'user' } },
})
const done = (commandId: string, kind: 'success' | 'error' = 'success'): Body => ({ type: 'command/done', data: { commandId, kind } })
const mode = (active: boolean): Body => ({ type: 'plan/mode', data: { active } })
const views = (bodies: readonly Body[]) => {
  let state = planProjection.initial()
  return place(bodies).map((event) => planProjection.view((state = planProjection.apply(state, event))))
}

describe('the plan projection unit (§7)', () => {
  it('has key plan, an integer stateVersion and a plain JSON initial state', () => {
    expect(planProjection.key).toBe('plan')
    expect(Number.isInteger(planProjection.stateVersion)).toBe(true)
    expect(planProjection.initial()).toEqual({ active: false, wanted: null, running: null })
    expect(JSON.parse(JSON.stringify(planProjection.initial()))).toEqual(planProjection.initial())
    expect(planProjection.view(planProjection.initial())).toEqual({ active: false, pending: false })
  })

  it('command/run named plan without args keeps the same state', () => {
    const state = planProjection.initial()
    expect(planProjection.apply(state, place([run('a')])[0]!)).toBe(state)
  })

  it('command/run named plan with args starts a running selection (off → false, else → true)', () => {
    const state = planProjection.initial()
    expect(planProjection.apply(state, place([run('a', '  off ')])[0]!).running).toEqual({ commandId: 'a', wanted: false })
    expect(planProjection.apply(state, place([run('a', '')])[0]!).running).toEqual({ commandId: 'a', wanted: true })
  })

  it('§22.1 off in any case is off (args.trim().toLowerCase()); only the whole word', () => {
    const state = planProjection.initial()
    const wanted = (args: string) => planProjection.apply(state, place([run('a', args)])[0]!).running?.wanted
    expect(['OFF', ' Off ', 'oFF\n', '\toff'].map(wanted)).toEqual([false, false, false, false])
    expect(['of', 'OFFline', 'off now', 'ÖFF'].map(wanted)).toEqual([true, true, true, true])
    expect(views([mode(true), run('a', 'OFF'), done('a')])).toEqual([
      { active: true, pending: false },
      { active: true, pending: true },
      { active: true, pending: true },
    ])
  })

  it('a running selection is pending until its done settles it', () => {
    expect(views([run('a', ''), done('a')])).toEqual([
      { active: false, pending: true },
      { active: false, pending: true },
    ])
    expect(views([run('a', ''), done('a'), mode(true)]).at(-1)).toEqual({ active: true, pending: false })
  })

  it('an error done drops the selection (a refused /plan off with images leaves no pending exit)', () => {
    expect(views([mode(true), run('a', 'off'), done('a', 'error')])).toEqual([
      { active: true, pending: false },
      { active: true, pending: true },
      { active: true, pending: false },
    ])
  })

  it('a successful done equal to the logged state leaves wanted null', () => {
    const events = place([mode(true), run('a', 'plan more'), done('a')])
    let state = planProjection.initial()
    for (const event of events) state = planProjection.apply(state, event)
    expect(state).toEqual({ active: true, wanted: null, running: null })
  })

  it('a done with another commandId, and every other event, return the same reference', () => {
    let state = planProjection.initial()
    state = planProjection.apply(state, place([run('a', '')])[0]!)
    for (const event of place([
      done('b'),
      run('c', '', 'other'),
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'user/message', data: { content: [], source: { kind: 'user' } } },
    ])) {
      expect(planProjection.apply(state, event)).toBe(state)
    }
  })

  it('plan/mode sets active and clears wanted', () => {
    expect(views([run('a', ''), done('a'), mode(false)]).at(-1)).toEqual({ active: false, pending: false })
    expect(views([mode(true), run('a', 'off'), done('a'), run('b', 'x'), done('b')]).at(-1)).toEqual({
      active: true,
      pending: false,
    })
  })

  it('validates the wire value synchronously', () => {
    const validate = planProjection.schema['~standard'].validate
    expect(validate({ active: true, pending: false })).toEqual({ value: { active: true, pending: false } })
    expect(validate({ active: 'yes', pending: false })).toHaveProperty('issues')
    expect(validate({ active: true })).toHaveProperty('issues')
    expect(validate({ active: true, pending: false, extra: 1 })).toHaveProperty('issues')
    expect(validate(null)).toHaveProperty('issues')
  })
})
