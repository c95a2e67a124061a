import { isInterruptedTurnEnd, nextTurn, type SessionEvent } from '@planmode/seams'

/** A tool call of an interrupted turn that has no result: the process ended before it was answered. */
export interface UnansweredCall {
  readonly toolCallId: string
  readonly toolName: string
}

/** A turn whose process ended before it did, and its calls that were never answered. */
export interface InterruptedTurn {
  readonly turn: number
  /** The calls of its steps without a `tool/result`, in call order. */
  readonly unanswered: readonly UnansweredCall[]
}

/**
 * The turns of a log closed as interrupted — `turn/end { reason: 'interrupted' }`,
 * or, in logs written before that reason, `reason: 'error'` with the
 * seams' `INTERRUPTED_TURN_ERROR` — each with its calls left without a result.
 */
export function interruptedTurns(events: readonly SessionEvent[]): InterruptedTurn[] {
  const turns: InterruptedTurn[] = []
  let open = new Map<string, string>()
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        open = new Map()
        break
      case 'assistant/message':
        for (const block of event.data.content) if (block.type === 'tool-call') open.set(block.toolCallId, block.toolName)
        break
      case 'tool/result':
        open.delete(event.data.toolCallId)
        break
      case 'turn/end':
        if (isInterruptedTurnEnd(event.data)) {
          turns.push({ turn: event.data.turn, unanswered: [...open].map(([toolCallId, toolName]) => ({ toolCallId, toolName })) })
        }
        open = new Map()
        break
      default:
        break
    }
  }
  return turns
}

/** The log's last turn, when it was interrupted (what a resume after a crash finds). */
export function lastTurnInterrupted(events: readonly SessionEvent[]): InterruptedTurn | undefined {
  const last = interruptedTurns(events).at(-1)
  return last !== undefined && last.turn === nextTurn(events) - 1 ? last : undefined
}

/** The ids of every call an interrupted turn left without a result: a review open then is interrupted, not open. */
export function interruptedCallIds(events: readonly SessionEvent[]): ReadonlySet<string> {
  return new Set(interruptedTurns(events).flatMap((turn) => turn.unanswered.map((call) => call.toolCallId)))
}
