import { incrementalLogReader, PLAN_MODE_PLUGIN_ID } from '@planmode/plan-core'
import type { Session, SessionEvent, UserMessage } from '@planmode/seams'

/**
 * The text of the re-entry line (SPEC §24): what the model reads instead of
 * the whole guidance section when it comes back to plan mode and the same
 * section is already in the conversation.
 *
 * @public
 */
export const PLAN_GUIDANCE_AGAIN =
  'Plan mode is on again: follow the plan-mode instructions given earlier in this conversation until a plan is approved.'

/**
 * The re-entry line as a message (SPEC §24): a `user/message` from plugin
 * `plan-mode` with `form: 'guidance-again'` and {@link PLAN_GUIDANCE_AGAIN}
 * as its one text block. It counts as a guidance message for SPEC §13's
 * holding rule (plan-core reads it so).
 *
 * @public
 */
export function planGuidanceAgain(): UserMessage {
  return {
    content: [{ type: 'text', text: PLAN_GUIDANCE_AGAIN }],
    source: { kind: 'plugin', plugin: PLAN_MODE_PLUGIN_ID, form: 'guidance-again' },
  }
}

/**
 * The text of `event` when it is a full guidance message (a `user/message`
 * from plugin `plan-mode` with `form: 'guidance'`), else `undefined`. The
 * re-entry line is not a full guidance message.
 *
 * @public
 */
export function fullGuidanceText(event: SessionEvent): string | undefined {
  if (event.type !== 'user/message') return undefined
  const { source, content } = event.data as Partial<UserMessage>
  if (typeof source !== 'object' || source === null || source.kind !== 'plugin') return undefined
  if (source.plugin !== PLAN_MODE_PLUGIN_ID || source.form !== 'guidance' || !Array.isArray(content)) return undefined
  let text = ''
  for (const block of content) if (block.type === 'text') text += block.text
  return text
}

interface LoggedGuidance {
  /** The text of the latest full guidance message folded, `undefined` before the first. */
  readonly text: string | undefined
  readonly length: number
}

const readLoggedGuidance = incrementalLogReader<LoggedGuidance>(
  () => ({ text: undefined, length: 0 }),
  (log, events: readonly SessionEvent[], from) => {
    let text = log.text
    for (let index = from; index < events.length; index++) text = fullGuidanceText(events[index]!) ?? text
    return { text, length: events.length }
  },
)

/**
 * The text of the latest full guidance message of `session`'s log, or
 * `undefined` when none is logged. Incremental: each call folds only the
 * events appended since the last one (and refolds a replaced array).
 */
export function loggedGuidanceText(session: Session): string | undefined {
  return readLoggedGuidance(session).text
}
