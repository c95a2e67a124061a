/**
 * The `/plan [off|message]` slash command: enter plan mode (optionally
 * steering a message into the next step), or leave it with `/plan off`.
 *
 * @packageDocumentation
 */
export { PLAN_COMMAND_REPLIES, createPlanCommand } from './plan-command.js'
export { planCommandsPlugin } from './plugin.js'
