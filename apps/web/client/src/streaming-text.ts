/**
 * Streamed assistant text as the client holds it: one entry per turn and
 * step whose `assistant/message` is not logged yet. Pure functions, so the
 * fold is tested in Node (test/client).
 */
import type { DeltaFrame, PendingQuestion, SessionEvent } from './wire.js'

/** Whether a step streams nothing more: its `assistant/message` is logged, or its turn ended. */
export function stepSettled(events: readonly SessionEvent[], turn: number, step: number): boolean {
  return events.some(
    (event) =>
      (event.type === 'assistant/message' && event.data.turn === turn && event.data.step === step) ||
      (event.type === 'turn/end' && event.data.turn === turn),
  )
}

/** `event: delta`: appends the text to its step (ignored once the step is settled). */
export function applyDelta(streaming: readonly DeltaFrame[], events: readonly SessionEvent[], delta: DeltaFrame): readonly DeltaFrame[] {
  if (stepSettled(events, delta.turn, delta.step)) return streaming
  const index = streaming.findIndex((item) => item.turn === delta.turn && item.step === delta.step)
  if (index === -1) return [...streaming, { turn: delta.turn, step: delta.step, text: delta.text }]
  const next = [...streaming]
  next[index] = { turn: delta.turn, step: delta.step, text: streaming[index]!.text + delta.text }
  return next
}

/**
 * `event: partial` of a stream's opening burst: the whole text of that step so far, which the stream's next deltas
 * continue, so it replaces what is held for the step (ignored once the step is settled).
 */
export function applyPartial(
  streaming: readonly DeltaFrame[],
  events: readonly SessionEvent[],
  partial: DeltaFrame,
): readonly DeltaFrame[] {
  if (stepSettled(events, partial.turn, partial.step)) return streaming
  const index = streaming.findIndex((item) => item.turn === partial.turn && item.step === partial.step)
  const entry = { turn: partial.turn, step: partial.step, text: partial.text }
  if (index === -1) return [...streaming, entry]
  const next = [...streaming]
  next[index] = entry
  return next
}

/**
 * `partial` of a page load (`GET /api/sessions/:id`). The load may answer after the stream has sent newer deltas, and a
 * step's text only grows, so it is taken only when it is longer than what is held. Settled steps are dropped.
 */
export function mergeLoadedPartial(
  streaming: readonly DeltaFrame[],
  events: readonly SessionEvent[],
  partial: DeltaFrame | undefined,
): readonly DeltaFrame[] {
  const kept = streaming.filter((item) => !stepSettled(events, item.turn, item.step))
  if (partial === undefined) return kept.length === streaming.length ? streaming : kept
  const held = kept.find((item) => item.turn === partial.turn && item.step === partial.step)
  if (held !== undefined && held.text.length >= partial.text.length) return kept
  return applyPartial(kept, events, partial)
}

/** `event: questions { open }`: the held questions that are still open, and the ids of those that closed meanwhile. */
export function keepOpenQuestions(
  questions: readonly PendingQuestion[],
  open: readonly string[],
): { kept: readonly PendingQuestion[]; dropped: readonly string[] } {
  const still = new Set(open)
  const dropped = questions.filter((question) => !still.has(question.id)).map((question) => question.id)
  return { kept: dropped.length === 0 ? questions : questions.filter((question) => still.has(question.id)), dropped }
}
