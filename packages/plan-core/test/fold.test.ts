import { foldPlanMode, initialPlanSelection, readPlanLog, selectedPlanMode, stepPlanSelection, type PlanLog } from '@planmode/plan-core'
import type { SessionEvent, SessionEventMap } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LogSession, bodyArb, place, type Body } from './log-arbitraries.js'

/** What a logged plan-mode message says: 'guidance', a notice's state, or nothing. */
function planMessage(event: SessionEvent): 'guidance' | boolean | undefined {
  if (event.type !== 'user/message' || event.data.source.kind !== 'plugin' || event.data.source.plugin !== 'plan-mode') return undefined
  if (event.data.source.form === 'guidance') return 'guidance'
  if (event.data.source.form !== 'notice') return undefined
  const text = (event.data.content[0] as { text?: string } | undefined)?.text
  if (text === 'The user switched this session to plan mode.') return true
  if (text === 'The user switched this session back to the default mode.') return false
  return event.data.source.summary === 'Plan mode on' ? true : event.data.source.summary === 'Plan mode off' ? false : undefined
}

/** The silent selection a record makes (SPEC §9): an exiting review, an approved exit result, an approved entry result. */
function silentOf(event: SessionEvent): boolean | undefined {
  if (event.type === ('plan/review' as string)) {
    return ['approved', 'stopped'].includes((event as { data: { outcome?: unknown } | null }).data?.outcome as string) ? false : undefined
  }
  if (event.type !== 'tool/result' || event.data.isError) return undefined
  const value = event.data.value as { approved?: unknown; entered?: unknown } | undefined
  if (event.data.toolName === 'exit_plan_mode' && value?.approved === true) return false
  if (event.data.toolName === 'enter_plan_mode' && value?.entered === true) return true
  return undefined
}

/**
 * A naive full fold written backwards from the spec's words: each fact is
 * the latest event that decides it, found by scanning the whole log.
 */
function naive(events: readonly SessionEvent[]): Omit<PlanLog, 'length'> {
  const firstHeader = events.findIndex((e) => e.type === 'request/header')
  // told (§3.4): the latest telling event at or after the first header
  let told: boolean | undefined
  for (let index = events.length - 1; index >= 0 && firstHeader >= 0 && index >= firstHeader; index--) {
    const event = events[index]!
    if (event.type === 'request/header') told = foldPlanMode(events, index + 1)
    else if (event.type === 'plan/mode' && (event.data.cause === 'review' || event.data.cause === 'model')) told = event.data.active
    else {
      const said = planMessage(event)
      if (typeof said === 'boolean') told = said
    }
    if (told !== undefined) break
  }
  // guided (§13): the latest guidance message, unless a later event told the model plan mode is off
  let guided = false
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    const said = planMessage(event)
    if (said === 'guidance') {
      guided = true
      break
    }
    const toldOff =
      said === false ||
      (event.type === 'plan/mode' && !event.data.active && (event.data.cause === 'review' || event.data.cause === 'model'))
    if (toldOff) break
  }
  const lastTurn = events.findLast((e) => e.type === 'turn/start' || e.type === 'turn/end')
  // the selection state just before each event, to know whether a /plan was running
  const before: ReturnType<typeof initialPlanSelection>[] = []
  let state = initialPlanSelection()
  for (const event of events) {
    before.push(state)
    state = stepPlanSelection(state, event)
  }
  // silent (§9): the latest silent record not followed by a plan/mode or a successful /plan done
  let silent: PlanLog['silent']
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'plan/mode') break
    if (event.type === 'command/done' && event.data.kind === 'success' && before[index]!.running?.commandId === event.data.commandId) break
    const active = silentOf(event)
    if (active === undefined) continue
    const running = before[index]!.running
    const laterRun = events
      .slice(index + 1)
      .some((e) => e.type === 'command/run' && e.data.name === 'plan' && typeof e.data.args === 'string')
    // §22.2: whether the turn it was selected in has ended since
    const turnEnded = events.slice(index + 1).some((e) => e.type === 'turn/end')
    silent = { active, cause: active ? 'model' : 'review', afterRunning: running !== null && !laterRun, turnEnded }
    break
  }
  // replaced (§9, latest wins): the last /plan run, while it still ran, had a silent selection after it that a
  // plan/mode then applied
  let replaced: string | undefined
  const run = events.findLastIndex((e) => e.type === 'command/run' && e.data.name === 'plan' && typeof e.data.args === 'string')
  if (run >= 0) {
    const id = (events[run] as SessionEvent<'command/run'>).data.commandId
    let silentSince = false
    for (let index = run + 1; index < events.length && before[index]!.running?.commandId === id; index++) {
      const event = events[index]!
      if (silentOf(event) !== undefined) silentSince = true
      else if (event.type === 'plan/mode' && silentSince) {
        replaced = id
        break
      }
    }
  }
  // cause (§2, §21): the last plan/mode's, 'user' when it has none
  const lastMode = events.findLast((e) => e.type === 'plan/mode')
  return {
    active: foldPlanMode(events),
    cause: lastMode === undefined ? undefined : (lastMode.data.cause ?? 'user'),
    told,
    guided,
    openTurn: lastTurn?.type === 'turn/start',
    selection: events.reduce(stepPlanSelection, initialPlanSelection()),
    silent,
    replaced,
  }
}

describe('foldPlanMode (§2)', () => {
  it('is false for an empty log and for a log without plan/mode', () => {
    expect(foldPlanMode([])).toBe(false)
    expect(foldPlanMode(place([{ type: 'turn/start', data: { turn: 1 } }]))).toBe(false)
  })

  it('returns the active of the last plan/mode before end (last one wins)', () => {
    const events = place([
      { type: 'plan/mode', data: { active: true } },
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'plan/mode', data: { active: false } },
    ])
    expect(foldPlanMode(events)).toBe(false)
    expect(foldPlanMode(events, 2)).toBe(true)
    expect(foldPlanMode(events, 0)).toBe(false)
    expect(foldPlanMode(events, 99)).toBe(false)
    expect(foldPlanMode(events, 2.5)).toBe(foldPlanMode(events, 2))
    expect(foldPlanMode(events, Number.NaN)).toBe(false)
    expect(foldPlanMode(events, -1)).toBe(false)
  })
})

describe('readPlanLog: incremental folds (§9b)', () => {
  it('equals a naive full fold after every append, replacement and shortening', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), bodies: fc.array(bodyArb, { maxLength: 6 }) }),
      fc.record({ kind: fc.constant('replace' as const), keep: fc.nat(40), bodies: fc.array(bodyArb, { maxLength: 4 }) }),
      fc.record({ kind: fc.constant('shorten' as const), keep: fc.nat(40) }),
      fc.record({ kind: fc.constant('repair' as const), keep: fc.nat(40), bodies: fc.array(bodyArb, { maxLength: 4 }) }),
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
        const session = new LogSession()
        for (const step of ops) {
          if (step.kind === 'push') session.push(step.bodies)
          else if (step.kind === 'replace') {
            // compaction: a new array with a prefix and some new events
            const kept = session.events.slice(0, Math.min(step.keep, session.events.length))
            session.events = [...kept, ...place(step.bodies as Body[], kept.length)]
          } else if (step.kind === 'shorten') {
            session.events.length = Math.min(step.keep, session.events.length)
          } else {
            // truncation repair in place: same array, cut and refilled
            session.events.length = Math.min(step.keep, session.events.length)
            session.push(step.bodies)
          }
          const log = readPlanLog(session)
          const { length, ...facts } = log
          expect(length).toBe(session.events.length)
          expect(facts).toEqual(naive(session.events))
          expect(readPlanLog(session)).toBe(log)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('scans only the events appended since the previous read', () => {
    const session = new LogSession()
    const reads = { count: 0 }
    const events: SessionEvent[] = []
    const counted = new Proxy(events, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads.count++
        return Reflect.get(target, key, receiver)
      },
    })
    Object.defineProperty(session, 'events', { get: () => counted })
    for (let index = 0; index < 10_000; index++) {
      events.push(...place([{ type: 'user/message', data: { content: [], source: { kind: 'user' } } }], index))
    }
    readPlanLog(session)
    reads.count = 0
    events.push(...place([{ type: 'plan/mode', data: { active: true } }], events.length))
    expect(readPlanLog(session).active).toBe(true)
    // one new event, plus the identity check of the last folded one
    expect(reads.count).toBeLessThanOrEqual(3)
    reads.count = 0
    readPlanLog(session)
    expect(reads.count).toBeLessThanOrEqual(1)
  })
})

describe('the /plan selection fold (§7 rule, shared with the projection)', () => {
  it('returns the same reference for unrelated events and unmatched records', () => {
    const state = initialPlanSelection()
    const [message, other, done, bare] = place([
      { type: 'user/message', data: { content: [], source: { kind: 'user' } } },
      { type: 'command/run', data: { commandId: 'a', name: 'other', args: '', source: { kind: 'user' } } },
      { type: 'command/done', data: { commandId: 'zz', kind: 'success' } },
      { type: 'command/run', data: { commandId: 'b', name: 'plan', source: { kind: 'user' } } as SessionEventMap['command/run'] }, // a log from before args was always logged
    ])
    for (const event of [message!, other!, done!, bare!]) expect(stepPlanSelection(state, event)).toBe(state)
  })

  it('follows run → done → plan/mode', () => {
    const events = place([
      { type: 'command/run', data: { commandId: 'a', name: 'plan', args: '', source: { kind: 'user' } } },
      { type: 'command/done', data: { commandId: 'a', kind: 'success' } },
      { type: 'plan/mode', data: { active: true } },
      { type: 'command/run', data: { commandId: 'b', name: 'plan', args: ' off ', source: { kind: 'user' } } },
      { type: 'command/done', data: { commandId: 'b', kind: 'error' } },
    ])
    const states = [initialPlanSelection()]
    for (const event of events) states.push(stepPlanSelection(states.at(-1)!, event))
    expect(states.map(selectedPlanMode)).toEqual([undefined, true, true, undefined, false, undefined])
    expect(states[2]).toEqual({ active: false, wanted: true, running: null })
    expect(states[3]).toEqual({ active: true, wanted: null, running: null })
    expect(states[5]).toEqual({ active: true, wanted: null, running: null })
  })
})
