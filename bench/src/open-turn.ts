import type { BenchEvent } from './generator.js'

/**
 * The events that open a turn after `log` (its first step done), as a host
 * logs them. A file of its own so the pre-step child loads it without the
 * plan rows' imports.
 */
export function openTurnEvents(log: readonly BenchEvent[]): BenchEvent[] {
  const last = log[log.length - 1]!
  let seq = last.seq
  let turn = 0
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i]!
    if (e.type === 'turn/end' || e.type === 'turn/start') {
      turn = (e.data as { turn: number }).turn
      break
    }
  }
  const time = last.time
  return [
    { type: 'turn/start', seq: ++seq, time, data: { turn: turn + 1 } },
    { type: 'user/message', seq: ++seq, time, data: { content: [{ type: 'text', text: 'go on' }], source: { kind: 'user' } } },
    { type: 'step/start', seq: ++seq, time, data: { turn: turn + 1, step: 1 } },
    {
      type: 'assistant/message',
      seq: ++seq,
      time,
      data: { turn: turn + 1, step: 1, content: [{ type: 'text', text: 'reading' }] },
    },
    { type: 'step/end', seq: ++seq, time, data: { turn: turn + 1, step: 1 } },
  ]
}
