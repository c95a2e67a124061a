import { Context } from '@planmode/context'
import { foldPlanMode, initialPlanSelection, planCorePlugin, selectedPlanMode, stepPlanSelection } from '@planmode/plan-core'
import type { Agent, SessionEvent } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LogSession, bodyArb, place } from './log-arbitraries.js'

/** An agent over a session whose events array the test controls; only `session` is read by get(). */
function agentOver(session: LogSession): Agent {
  return { id: 'a', session, steer() {}, async inject() {} }
}

function controller() {
  const root = new Context()
  root.plugin(planCorePlugin)
  return root.require('planMode')
}

describe('§9b the controller reads incrementally', () => {
  it('get().active equals foldPlanMode on random logs, including replaced and shortened arrays', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('push' as const), bodies: fc.array(bodyArb, { maxLength: 5 }) }),
            fc.record({ kind: fc.constant('replace' as const), keep: fc.nat(30) }),
            fc.record({ kind: fc.constant('shorten' as const), keep: fc.nat(30) }),
          ),
          { maxLength: 20 },
        ),
        (ops) => {
          const planMode = controller()
          const session = new LogSession()
          const agent = agentOver(session)
          for (const op of ops) {
            if (op.kind === 'push') session.push(op.bodies)
            else if (op.kind === 'replace') session.events = session.events.slice(0, op.keep)
            else session.events.length = Math.min(op.keep, session.events.length)
            // The fold of the log as it is when get() reads it (a first use may append a plan/mode that is due, §22.2).
            const logged = foldPlanMode(session.events)
            expect(planMode.get(agent).active).toBe(logged)
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it('a get() on a 200,000-event log reads only the new events', () => {
    const planMode = controller()
    const session = new LogSession()
    const events: SessionEvent[] = place(
      Array.from({ length: 200_000 }, () => ({ type: 'user/message' as const, data: { content: [], source: { kind: 'user' as const } } })),
    )
    let reads = 0
    const counted = new Proxy(events, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver)
      },
    })
    Object.defineProperty(session, 'events', { get: () => counted })
    const agent = agentOver(session)
    planMode.get(agent) // first use: one full fold
    reads = 0
    events.push(...place([{ type: 'plan/mode', data: { active: true } }], events.length))
    expect(planMode.get(agent)).toEqual({ active: true })
    expect(reads).toBeLessThanOrEqual(3)
    reads = 0
    for (let index = 0; index < 100; index++) planMode.get(agent)
    expect(reads).toBeLessThanOrEqual(100)
  })
})

describe('§9a the rebuild agrees with the projection', () => {
  it('a fresh controller’s get().pending matches the §7 view of a log written before it existed (or an approved or stopped review waiting); §22.2: one whose turn ended is appended at once', () => {
    fc.assert(
      fc.property(fc.array(bodyArb, { maxLength: 30 }), (bodies) => {
        const session = new LogSession()
        session.push(bodies)
        const written = session.events.slice()
        const state = written.reduce(stepPlanSelection, initialPlanSelection())
        const got = controller().get(agentOver(session))
        expect(got.active).toBe(state.active)
        // A silent selection — an approved exit_plan_mode, a plan/review approved or stopped (exit), or an approved
        // enter_plan_mode (entry) — that is the latest word (and no /plan still running) is rebuilt; the projection,
        // which follows /plan records only, shows no pending /plan then.
        // Latest wins (§9): such a selection logged while a /plan was still running replaces that /plan.
        let silent: boolean | undefined
        let afterRunning = false
        let turnEnded = false
        // A running /plan that a later silent selection replaced stays replaced once a plan/mode applied it (§9).
        let replaced: string | undefined
        let before = initialPlanSelection()
        for (const event of written) {
          if (event.type === 'plan/mode') {
            if (silent !== undefined && afterRunning && before.running !== null) replaced = before.running.commandId
            silent = undefined
            afterRunning = false
          }
          if (event.type === 'command/run' && event.data.name === 'plan' && typeof event.data.args === 'string') replaced = undefined
          if (event.type === 'turn/end') turnEnded = true
          if (event.type === 'command/run' && event.data.name === 'plan' && typeof event.data.args === 'string') afterRunning = false
          const review = event as { type: string; data: { outcome?: unknown } }
          const result =
            event.type === 'tool/result' && !event.data.isError
              ? (event.data.value as { approved?: unknown; entered?: unknown } | undefined)
              : undefined
          const exiting =
            (event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode' && result?.approved === true) ||
            (review.type === 'plan/review' && (review.data.outcome === 'approved' || review.data.outcome === 'stopped'))
          const entering = event.type === 'tool/result' && event.data.toolName === 'enter_plan_mode' && result?.entered === true
          if (exiting || entering) {
            silent = entering
            afterRunning = before.running !== null
            turnEnded = false
          }
          if (event.type === 'command/done' && event.data.kind === 'success' && before.running?.commandId === event.data.commandId)
            silent = undefined
          before = stepPlanSelection(before, event)
        }
        // A silent selection not superseded by a running /plan is the latest word: it decides alone, even when it
        // selects the logged state (nothing is pending then, whatever an earlier settled /plan wanted).
        const effective =
          (silent !== undefined && afterRunning) || (state.running !== null && state.running.commandId === replaced)
            ? { ...state, running: null }
            : state
        const rebuiltSilent = effective.running === null && silent !== undefined && silent !== state.active
        if (effective.running === null && silent !== undefined) expect(got.pending).toBe(silent !== state.active ? silent : undefined)
        else expect(got.pending).toBe(selectedPlanMode(effective))
        // §22.2: a rebuilt silent selection whose turn ended is appended by that first use (it is still pending
        // while the append is in flight); nothing else is appended by a get().
        const appended = session.events.slice(written.length).map((event) => [event.type, event.data])
        expect(appended).toEqual(rebuiltSilent && turnEnded ? [['plan/mode', { active: silent, cause: silent ? 'model' : 'review' }]] : [])
      }),
      { numRuns: 300 },
    )
  })
})
