/**
 * The client's fold of streamed text and of the stream's opening burst
 * (client/src/streaming-text.ts): a tab opened mid-step shows the whole text
 * so far and then every delta, whatever it held before; a question closed
 * before the stream opened is dropped.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { applyDelta, applyPartial, keepOpenQuestions, mergeLoadedPartial, stepSettled } from '../../client/src/streaming-text.js'
import type { DeltaFrame, PendingQuestion, SessionEvent } from '../../client/src/wire.js'

const message = (turn: number, step: number) =>
  ({ seq: 10, type: 'assistant/message', data: { turn, step, content: [] } }) as unknown as SessionEvent
const turnEnd = (turn: number) => ({ seq: 11, type: 'turn/end', data: { turn } }) as unknown as SessionEvent
const question = (id: string): PendingQuestion => ({ id, sessionId: 's', request: { questions: [] } })

/** A step's text cut into the chunks the server streamed. */
const chunked = fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 })

describe('streamed text', () => {
  it('a partial replaces what is held for its step, and the deltas after it complete the text', () => {
    fc.assert(
      fc.property(chunked, fc.nat(), fc.nat(), (chunks, openAt, heldAt) => {
        const full = chunks.join('')
        const k = openAt % (chunks.length + 1) // the stream opens after k chunks
        const h = heldAt % (chunks.length + 1) // what this tab held from an earlier stream or load
        let streaming: readonly DeltaFrame[] = [{ turn: 1, step: 1, text: chunks.slice(0, h).join('') }]
        streaming = applyPartial(streaming, [], { turn: 1, step: 1, text: chunks.slice(0, k).join('') })
        for (const chunk of chunks.slice(k)) streaming = applyDelta(streaming, [], { turn: 1, step: 1, text: chunk })
        expect(streaming).toEqual([{ turn: 1, step: 1, text: full }])
      }),
    )
  })

  it('a page load taken after newer deltas does not shorten the text; a longer one extends it', () => {
    fc.assert(
      fc.property(chunked, fc.nat(), fc.nat(), (chunks, heldAt, loadedAt) => {
        const h = heldAt % (chunks.length + 1)
        const l = loadedAt % (chunks.length + 1)
        const held: readonly DeltaFrame[] = h === 0 ? [] : [{ turn: 2, step: 3, text: chunks.slice(0, h).join('') }]
        const merged = mergeLoadedPartial(held, [], { turn: 2, step: 3, text: chunks.slice(0, l).join('') })
        expect(merged).toEqual(
          [{ turn: 2, step: 3, text: chunks.slice(0, Math.max(h, l)).join('') }].filter((item) => item.text !== '' || h === 0),
        )
      }),
    )
  })

  it('a settled step takes no more text, and a load drops it', () => {
    const held: readonly DeltaFrame[] = [
      { turn: 1, step: 1, text: 'Hello' },
      { turn: 1, step: 2, text: 'Next' },
    ]
    const logged = [message(1, 1)]
    expect(stepSettled(logged, 1, 1)).toBe(true)
    expect(stepSettled(logged, 1, 2)).toBe(false)
    expect(applyDelta(held, logged, { turn: 1, step: 1, text: ' world' })).toBe(held)
    expect(applyPartial(held, logged, { turn: 1, step: 1, text: 'Hello world' })).toBe(held)
    expect(mergeLoadedPartial(held, logged, undefined)).toEqual([{ turn: 1, step: 2, text: 'Next' }])
    expect(mergeLoadedPartial(held, [turnEnd(1)], { turn: 1, step: 2, text: 'Next step' })).toEqual([])
    expect(mergeLoadedPartial(held, [], undefined)).toBe(held)
    // a partial of a step not held yet is added, the others kept
    expect(applyPartial(held, [], { turn: 1, step: 3, text: 'Third' })).toEqual([...held, { turn: 1, step: 3, text: 'Third' }])
  })
})

describe('the open question ids of a stream', () => {
  it('keeps exactly the listed questions and names the others as closed', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        (ids, stillOpen) => {
          const held = ids.map(question)
          const open = ids.filter((_, index) => stillOpen[index])
          const { kept, dropped } = keepOpenQuestions(held, [...open, 'opened-later'])
          expect(kept.map((item) => item.id)).toEqual(open)
          expect(dropped).toEqual(ids.filter((_, index) => !stillOpen[index]))
        },
      ),
    )
    const held = [question('a')]
    expect(keepOpenQuestions(held, ['a']).kept).toBe(held)
  })
})
