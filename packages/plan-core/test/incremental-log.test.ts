import { incrementalLogReader } from '@planmode/plan-core'
import type { Session, SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'

const event = (seq: number, type: string): SessionEvent => ({ seq, time: seq, type, data: {} }) as unknown as SessionEvent

describe('incrementalLogReader', () => {
  it('folds only what was appended since the last call, returns the same object while nothing was, and starts again when the array is replaced, shortened or repaired', () => {
    const calls: number[] = []
    const read = incrementalLogReader(
      () => ({ length: 0, types: [] as string[] }),
      (log, events, from) => {
        calls.push(from)
        return { length: events.length, types: [...log.types, ...events.slice(from).map((e) => e.type)] }
      },
    )
    const events = [event(0, 'a'), event(1, 'b')]
    const session = { id: 's', events } as unknown as Session
    const first = read(session)
    expect(first.types).toEqual(['a', 'b'])
    expect(read(session)).toBe(first)
    events.push(event(2, 'c'))
    expect(read(session).types).toEqual(['a', 'b', 'c'])
    expect(calls).toEqual([0, 2])
    events[2] = event(2, 'd') // an in-place repair of the last folded event
    expect(read(session).types).toEqual(['a', 'b', 'd'])
    ;(session as unknown as { events: SessionEvent[] }).events = [event(0, 'x')] // replaced and shorter
    expect(read(session).types).toEqual(['x'])
    expect(calls).toEqual([0, 2, 0, 0])
  })
})
