import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ModelMessage } from 'ai'
import { MISSING_TOOL_RESULT, transcriptMessages } from '@planmode/ai-sdk'
import type { SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'

/** One piece of a generated log: a user message, or a step (an answer, then results for some of its calls). */
type Segment =
  | { readonly kind: 'user'; readonly text: string }
  | {
      readonly kind: 'step'
      readonly text: string | undefined
      /** Per call: whether its result was logged, and whether it failed. */
      readonly calls: readonly { readonly logged: boolean; readonly failed: boolean }[]
      /** A user message logged in the middle of the batch, before the result of this call index. */
      readonly injectBefore: number | undefined
      /** A result logged for a call nobody made. */
      readonly orphan: boolean
    }

const segment: fc.Arbitrary<Segment> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), text: fc.string({ minLength: 1, maxLength: 6 }) }),
  fc.record({
    kind: fc.constant('step' as const),
    text: fc.option(fc.string({ minLength: 1, maxLength: 6 }), { nil: undefined }),
    calls: fc.array(fc.record({ logged: fc.boolean(), failed: fc.boolean() }), { maxLength: 3 }),
    injectBefore: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
    orphan: fc.boolean(),
  }),
)

interface Built {
  readonly events: SessionEvent[]
  /** Log lengths at which no call is open: a step boundary. */
  readonly boundaries: number[]
  /** Every user text, in log order. */
  readonly userTexts: string[]
  /** For every assistant message with calls: the ids, and which have no logged result. */
  readonly answers: { ids: string[]; missing: Set<string> }[]
}

function build(segments: readonly Segment[]): Built {
  const events: SessionEvent[] = []
  const push = <T extends SessionEventType>(type: T, data: SessionEventMap[T]): void => {
    events.push({ type, seq: events.length, time: 0, data } as SessionEvent)
  }
  const boundaries: number[] = [0]
  const userTexts: string[] = []
  const answers: Built['answers'] = []
  const user = (text: string): void => {
    userTexts.push(text)
    push('user/message', { content: [{ type: 'text', text }], source: { kind: 'user' } })
  }
  segments.forEach((piece, n) => {
    if (piece.kind === 'user') {
      user(piece.text)
      if (answers.length === 0 || answers.at(-1)!.missing.size === 0) boundaries.push(events.length)
      return
    }
    const ids = piece.calls.map((_, i) => `c${n}-${i}`)
    push('assistant/message', {
      turn: 1,
      step: n + 1,
      content: [
        ...(piece.text === undefined ? [] : [{ type: 'text' as const, text: piece.text }]),
        ...ids.map((toolCallId) => ({ type: 'tool-call' as const, toolCallId, toolName: 'read', input: { n } })),
      ],
    })
    const missing = new Set<string>()
    piece.calls.forEach((call, i) => {
      if (piece.injectBefore === i) user(`injected ${n}`)
      if (call.logged)
        push('tool/result', {
          toolCallId: ids[i]!,
          toolName: 'read',
          isError: call.failed,
          content: [{ type: 'text', text: `r${n}-${i}` }],
        })
      else missing.add(ids[i]!)
    })
    if (piece.orphan)
      push('tool/result', { toolCallId: `ghost-${n}`, toolName: 'read', isError: false, content: [{ type: 'text', text: 'ghost' }] })
    if (ids.length > 0) answers.push({ ids, missing })
    // Log-only events never reach the model.
    push('step/end', { turn: 1, step: n + 1 })
    if (missing.size === 0) boundaries.push(events.length)
  })
  return { events, boundaries, userTexts, answers }
}

function userTextsOf(messages: readonly ModelMessage[]): string[] {
  return messages
    .filter((message) => message.role === 'user')
    .map((message) => (message.content as { text: string }[]).map((part) => part.text).join(''))
}

describe('transcriptMessages, against a model of the log', () => {
  it('answers every call right after its message, keeps user messages in order, drops orphans, and extends at step boundaries', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 12 }), (segments) => {
        const built = build(segments)
        const messages = transcriptMessages(built.events)

        expect(userTextsOf(messages)).toEqual(built.userTexts)
        let answer = 0
        messages.forEach((message, index) => {
          if (message.role === 'tool') {
            const previous = messages[index - 1]
            expect(previous?.role).toBe('assistant')
          }
          if (message.role !== 'assistant' || typeof message.content === 'string') return
          const ids = message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId)
          if (ids.length === 0) return
          const expected = built.answers[answer++]!
          expect(ids).toEqual(expected.ids)
          const results = messages[index + 1]
          expect(results?.role).toBe('tool')
          const parts = results!.content as { toolCallId: string; output: { type: string; value: string } }[]
          expect(parts.map((part) => part.toolCallId).sort()).toEqual([...expected.ids].sort())
          for (const part of parts) {
            if (expected.missing.has(part.toolCallId)) expect(part.output).toEqual({ type: 'error-text', value: MISSING_TOOL_RESULT })
            else expect(part.output.value).not.toBe(MISSING_TOOL_RESULT)
          }
        })
        expect(answer).toBe(built.answers.length)
        expect(JSON.stringify(messages)).not.toContain('ghost')

        // The prompt-cache property: the transcript of a log cut at a step boundary is a prefix of the whole one.
        for (const end of built.boundaries) {
          const prefix = transcriptMessages(built.events.slice(0, end))
          expect(messages.slice(0, prefix.length)).toEqual(prefix)
        }
      }),
      { numRuns: 300 },
    )
  })
})
