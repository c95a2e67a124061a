import type { UserMessage } from '@planmode/seams'

/**
 * The plugin id plan mode uses in message sources (`source.plugin`).
 *
 * @public
 */
export const PLAN_MODE_PLUGIN_ID = 'plan-mode'

/**
 * The notice told to the model when the user switches plan mode: a
 * `user/message` from plugin `plan-mode` with `form: 'notice'`.
 *
 * @public
 */
export function planModeNotice(active: boolean): UserMessage {
  return {
    content: [
      {
        type: 'text',
        text: active
          ? 'The user switched this session to plan mode.'
          : 'The user switched this session back to the default mode.',
      },
    ],
    source: {
      kind: 'plugin',
      plugin: PLAN_MODE_PLUGIN_ID,
      form: 'notice',
      summary: active ? 'Plan mode on' : 'Plan mode off',
    },
  }
}
