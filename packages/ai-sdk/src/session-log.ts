import type { Session, SessionEvent, ToolSchema } from '@planmode/seams'

/** The number of the next turn of a log: one past its last `turn/start` or `turn/end`. */
export function nextTurn(events: readonly SessionEvent[]): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'turn/start' || event.type === 'turn/end') return event.data.turn + 1
  }
  return 1
}

/** The turn the log leaves open (its last `turn/start` has no `turn/end`) and its open step, if any. */
export function openTurnOf(events: readonly SessionEvent[]): { turn: number; step: number | undefined } | undefined {
  let step: number | undefined
  let stepSeen = false
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'turn/end') return undefined
    if (!stepSeen && (event.type === 'step/start' || event.type === 'step/end')) {
      stepSeen = true
      if (event.type === 'step/start') step = event.data.step
    }
    if (event.type === 'turn/start') return { turn: event.data.turn, step }
  }
  return undefined
}

/**
 * Logs `request/header` — `initial` when the log has none, `change` when the
 * system text, the tools or the model differ from the last header in the
 * log (so the comparison survives a restart) — and nothing otherwise.
 */
export async function logHeaderIfChanged(
  session: Session,
  next: { readonly turn: number; readonly step: number; readonly model: string; readonly system: string; readonly tools: readonly ToolSchema[] },
): Promise<void> {
  const events = session.events
  let previous: Extract<SessionEvent, { type: 'request/header' }>['data'] | undefined
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'request/header') {
      previous = event.data
      break
    }
  }
  const changed =
    previous === undefined ||
    previous.model !== next.model ||
    previous.system !== next.system ||
    JSON.stringify(previous.tools) !== JSON.stringify(next.tools)
  if (!changed) return
  await session.append('request/header', {
    reason: previous === undefined ? 'initial' : 'change',
    turn: next.turn,
    step: next.step,
    model: next.model,
    system: next.system,
    tools: next.tools,
  })
}

/** A value the log can hold as JSON, or `undefined` when JSON cannot write it. */
export function jsonValue(value: unknown): unknown {
  if (value === undefined) return undefined
  try {
    return JSON.stringify(value) === undefined ? undefined : value
  } catch {
    return undefined
  }
}
