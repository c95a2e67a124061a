import { Context } from '@planmode/context'
import type { SessionEvent } from '@planmode/seams'
import { checkSessionId, closeInterruptedAtOpen, forkCopies, isSessionId, SessionLogError } from '@planmode/store'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { memorySessions, type MemoryDisk } from './memory-store.js'

declare module '@planmode/seams' {
  interface SessionEventMap {
    /** A neutral event for store tests. */
    'test/event': { readonly [key: string]: unknown }
  }
}

const quiet = () => ({
  lines: [] as string[],
  debug() {},
  info() {},
  warn(message: string) {
    this.lines.push(message)
  },
  error() {},
})
const event = (seq: number, type = 'test/event', data: unknown = { seq }): SessionEvent => ({ type, seq, time: seq, data }) as SessionEvent

describe('SessionLogError', () => {
  it('carries a code, the file and the line, and is recognised across copies by its marker (also the key it had in @planmode/host)', () => {
    const error = new SessionLogError('CORRUPT_LINE', 'log.jsonl:3: bad', { file: 'log.jsonl', line: 3 })
    expect([error.code, error.file, error.line, error.name]).toEqual(['CORRUPT_LINE', 'log.jsonl', 3, 'SessionLogError'])
    expect(SessionLogError.isInstance(error)).toBe(true)
    const olderCopy = Object.assign(new Error('from another copy'), {
      [Symbol.for('@planmode/host/SessionLogError')]: true,
      code: 'LOCKED',
    })
    expect(SessionLogError.isInstance(olderCopy)).toBe(true)
    expect(SessionLogError.isInstance(new Error('plain'))).toBe(false)
    expect(SessionLogError.isInstance(null)).toBe(false)
  })
})

describe('checkSessionId', () => {
  it('takes letters, digits, ".", "_" and "-" (not first), at most 200 characters; refuses anything else with INVALID_ID', () => {
    for (const id of ['s_1', 'a', 'A.b-c_d', 'x'.repeat(200)]) expect(() => checkSessionId(id)).not.toThrow()
    for (const id of ['', '.hidden', '-x', 'a/b', 'a b', '../x', 'x'.repeat(201), 'é']) {
      expect(() => checkSessionId(id), id).toThrow(expect.objectContaining({ code: 'INVALID_ID' }))
      expect(isSessionId(id)).toBe(false)
    }
    expect(isSessionId(42)).toBe(false)
  })
})

describe('forkCopies', () => {
  const copy = (value: unknown): { event: SessionEvent } | string =>
    typeof value === 'object' && value !== null && typeof (value as SessionEvent).type === 'string'
      ? { event: value as SessionEvent }
      : 'not an event'

  it('copies events[0, end) (all by default) through the store’s copy', () => {
    const events = [event(0), event(1), event(2)]
    expect(forkCopies({ id: 's', events }, undefined, copy).map((c) => c.event.seq)).toEqual([0, 1, 2])
    expect(forkCopies({ id: 's', events }, 2, copy).map((c) => c.event.seq)).toEqual([0, 1])
    expect(forkCopies({ id: 's', events }, 0, copy)).toEqual([])
  })

  it('refuses an end outside [0, length] with a RangeError', () => {
    for (const end of [-1, 4, 1.5, Number.NaN])
      expect(() => forkCopies({ id: 's', events: [event(0), event(1), event(2)] }, end, copy)).toThrow(RangeError)
  })

  it('names the first event the copy refuses (INVALID_EVENT) and a seq that does not increase (SEQ_ORDER)', () => {
    expect(() => forkCopies({ id: 's', events: [event(0), 'junk' as unknown as SessionEvent] }, undefined, copy)).toThrow(
      expect.objectContaining({
        code: 'INVALID_EVENT',
        message: expect.stringContaining('event 1 cannot be written so that a reopen reads it back: not an event'),
      }),
    )
    expect(() => forkCopies({ id: 's', events: [event(0), event(2), event(2)] }, undefined, copy)).toThrow(
      expect.objectContaining({ code: 'SEQ_ORDER', message: expect.stringContaining('event 2 has seq 2, which does not follow seq 2') }),
    )
  })

  it('accepts exactly the logs whose seqs strictly increase (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(50), { maxLength: 20 }), (seqs) => {
        const events = seqs.map((seq) => event(seq))
        const increasing = seqs.every((seq, index) => index === 0 || seq > seqs[index - 1]!)
        let refused: unknown
        try {
          forkCopies({ id: 's', events }, undefined, copy)
        } catch (error) {
          refused = error
        }
        expect(refused === undefined).toBe(increasing)
        if (refused !== undefined) expect((refused as SessionLogError).code).toBe('SEQ_ORDER')
      }),
    )
  })
})

describe('closeInterruptedAtOpen', () => {
  it('settles the asks a dead writer left open, closes its step and turn, each told to warn first', async () => {
    const events = [
      event(0, 'turn/start', { turn: 1 }),
      event(1, 'step/start', { turn: 1, step: 1 }),
      event(2, 'question/asked', { questionId: 'q1', agent: 'a', question: [] }),
    ]
    const appended: string[] = []
    const session = {
      id: 's',
      events,
      async append(type: string, data: unknown) {
        appended.push(`${type} ${JSON.stringify(data)}`)
        const next = event(events.length, type, data)
        events.push(next)
        return next
      },
    }
    const warnings: string[] = []
    await closeInterruptedAtOpen(session as never, (message) => warnings.push(message))
    expect(appended).toEqual([
      'question/settled {"questionId":"q1","outcome":"interrupted"}',
      'step/end {"turn":1,"step":1}',
      'turn/end {"turn":1,"reason":"interrupted"}',
    ])
    expect(warnings).toHaveLength(2)
  })

  it('turns a failing append into a warning: the open goes on', async () => {
    const session = { id: 's', events: [event(0, 'turn/start', { turn: 1 })], append: () => Promise.reject(new Error('disk full')) }
    const warnings: string[] = []
    await expect(closeInterruptedAtOpen(session as never, (message) => warnings.push(message))).resolves.toBeUndefined()
    expect(warnings.at(-1)).toBe('could not close the interrupted turn of session s: disk full')
  })
})

describe('a third store on the contract (test/memory-store.ts, shown in the README)', () => {
  it('creates, appends in order with session/event, refuses a second writer, and closes a dead writer’s turn at open', async () => {
    const disk: MemoryDisk = { logs: new Map(), held: new Set() }
    const first = new Context({ logger: quiet() })
    const seen: number[] = []
    first.on('session/event', ({ event: logged }) => void seen.push(logged.seq))
    const store = memorySessions(first, disk)
    const session = await store.create({ id: 'demo' })
    await Promise.all([session.append('turn/start', { turn: 1 }), session.append('step/start', { turn: 1, step: 1 })])
    expect(seen).toEqual([0, 1])
    await expect(memorySessions(new Context(), disk).open('demo')).rejects.toMatchObject({ code: 'LOCKED' })
    await expect(session.append('test/event', { bad: 1n } as never)).rejects.toThrow()
    // The writer "dies" mid-turn: its hold goes, its log stays.
    disk.held.delete('demo')
    const logger = quiet()
    const second = memorySessions(new Context({ logger }), disk)
    const reopened = await second.open('demo')
    expect(reopened.events.map((e) => e.type)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end'])
    expect(logger.lines.some((line) => line.startsWith('memory store: closing turn 1'))).toBe(true)
    const fork = await second.fork(reopened, 2, { id: 'fork' })
    expect(fork.events.map((e) => e.seq)).toEqual([0, 1])
    await expect(second.create({ id: 'bad id' })).rejects.toMatchObject({ code: 'INVALID_ID' })
  })
})
