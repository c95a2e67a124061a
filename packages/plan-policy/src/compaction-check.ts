import type { SessionEvent } from '@planmode/seams'
import { fullGuidanceText } from './guidance-again.js'

/**
 * The latest full guidance message of a session log (a `user/message` from
 * plugin `plan-mode` with `form: 'guidance'`), or `undefined` when none is
 * logged: the instructions a `guidance-again` line refers to (SPEC §24), so
 * the message a host that compacts its transcript must keep. Reads the log
 * from its end (a host calls it when it compacts, not per step).
 *
 * @public
 */
export function latestFullGuidance(events: readonly SessionEvent[]): SessionEvent<'user/message'> | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (fullGuidanceText(event) !== undefined) return event as SessionEvent<'user/message'>
  }
  return undefined
}

/**
 * The host duty of SPEC §24 for compaction, as a check a host calls when it
 * compacts: `events` is the session's whole log, `kept` the events the
 * transcript is built from after the compaction (in log order, with their
 * `seq`). The duty holds when the log has no full guidance message, or when
 * its latest one is among `kept` — kept where it was, or logged again after
 * the cut (then it is the latest). Returns `undefined` when the duty holds,
 * else what is wrong, in a sentence.
 *
 * @remarks
 * Why: plan-policy sends the short `guidance-again` line instead of the
 * whole section when that section is already logged, and plan-core counts
 * the model as holding the guidance from a guidance message on (SPEC §13).
 * A transcript without the message both refer to leaves the model with
 * neither. Prefer keeping the message: logging the section again is right
 * only while the model holds the guidance (plan mode on), since a guidance
 * message logged in the default mode reads as an instruction to plan.
 *
 * @example
 * ```ts
 * const keptFrom = cutIndex // the transcript is built from events[cutIndex] on
 * const guidance = latestFullGuidance(session.events)
 * const kept = guidance !== undefined && session.events.indexOf(guidance) < keptFrom
 *   ? [guidance, ...session.events.slice(keptFrom)]
 *   : session.events.slice(keptFrom)
 * const problem = checkCompactedGuidance(session.events, kept) // undefined
 * ```
 *
 * @public
 */
export function checkCompactedGuidance(events: readonly SessionEvent[], kept: readonly SessionEvent[]): string | undefined {
  const latest = latestFullGuidance(events)
  if (latest === undefined) return undefined
  for (const event of kept) if (event.seq === latest.seq) return undefined
  return (
    `the compacted transcript drops the latest plan-mode guidance message (seq ${latest.seq}): keep it, ` +
    'or log the section again as a full guidance message, so that the plan-mode instructions a guidance-again line refers to stay in the conversation'
  )
}
