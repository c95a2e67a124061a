import type { UserMessage } from '@planmode/seams'

/**
 * The plugin id plan mode uses in message sources (`source.plugin`).
 *
 * @public
 */
export const PLAN_MODE_PLUGIN_ID = 'plan-mode'

const ENTERING = 'The user switched this session to plan mode.'
const LEAVING = 'The user switched this session back to the default mode.'

/**
 * The notice told to the model when the user switches plan mode (SPEC
 * §3.4): a `user/message` from plugin `plan-mode` with `form: 'notice'`.
 * The controller adds it to an accepted pre-step's decision when one is due.
 *
 * @public
 */
export function planModeNotice(active: boolean): UserMessage {
  return {
    content: [{ type: 'text', text: active ? ENTERING : LEAVING }],
    source: {
      kind: 'plugin',
      plugin: PLAN_MODE_PLUGIN_ID,
      form: 'notice',
      summary: active ? 'Plan mode on' : 'Plan mode off',
    },
  }
}

/**
 * The guidance message of `placement: 'transcript'` (SPEC §13): a
 * `user/message` from plugin `plan-mode` with `form: 'guidance'` whose
 * single text block is `text` exactly.
 *
 * @public
 */
export function planModeGuidance(text: string): UserMessage {
  return {
    content: [{ type: 'text', text }],
    source: { kind: 'plugin', plugin: PLAN_MODE_PLUGIN_ID, form: 'guidance' },
  }
}

/**
 * What a logged `user/message` tells the model about plan mode: `'guidance'`
 * for a guidance message (or the re-entry line), the notice's state for a notice, `undefined` for
 * anything else. A notice is read by its text, else by its summary.
 */
export function planModeMessageForm(data: unknown): 'guidance' | boolean | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const source = (data as { source?: unknown }).source as
    { kind?: unknown; plugin?: unknown; form?: unknown; summary?: unknown } | undefined
  if (typeof source !== 'object' || source === null || source.kind !== 'plugin' || source.plugin !== PLAN_MODE_PLUGIN_ID) return undefined
  // SPEC §24: the re-entry line counts as a guidance message for the holding rule of §13.
  if (source.form === 'guidance' || source.form === 'guidance-again') return 'guidance'
  if (source.form !== 'notice') return undefined
  const content = (data as { content?: unknown }).content
  const first = Array.isArray(content) ? (content[0] as { type?: unknown; text?: unknown } | undefined) : undefined
  const text = first?.type === 'text' ? first.text : undefined
  if (text === ENTERING) return true
  if (text === LEAVING) return false
  if (source.summary === 'Plan mode on') return true
  if (source.summary === 'Plan mode off') return false
  return undefined
}
