/**
 * A small, complete planmode host that does not use `@planmode/host`,
 * walked through duty by duty in `docs/own-host.md`.
 *
 * @packageDocumentation
 */
export { ARC_COMMAND, ARC_INSTRUCTIONS, ARC_PLAN, approvingReviewer, arcModel, describeEvent, runArc, workspaceTools } from './arc.js'
export { createCommandRegistry } from './commands.js'
export { createOwnHost } from './host.js'
export type { OwnHost, OwnHostOptions } from './host.js'
export { createProjections } from './projections.js'
export { createScriptedModel } from './scripted-model.js'
export type { ScriptEntry, ScriptedModel, ScriptedReply } from './scripted-model.js'
export { createInvariants, openSession } from './session-log.js'
export type { LogStore } from './session-log.js'
export { createAgent } from './agent.js'
export type { Loop, OwnAgent } from './agent.js'
export { closeInterruptedTurn, runTurn } from './step-loop.js'
export { createSystemPrompt } from './system-prompt.js'
export { createToolRegistry, failed } from './tools.js'
export { buildPrompt } from './transcript.js'
export { createUserQuestions } from './user-questions.js'
