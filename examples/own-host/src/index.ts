/**
 * A small, complete planmode host that does not use `@planmode/host`,
 * walked through duty by duty in `docs/own-host.md`.
 *
 * @packageDocumentation
 */
export { ARC_COMMAND, ARC_INSTRUCTIONS, ARC_PLAN, approvingReviewer, arcModel, describeEvent, runArc, workspaceTools } from './arc.js'
export { createOwnHost } from './host.js'
export type { OwnHost, OwnHostOptions } from './host.js'
export type { OwnAgent } from './agent.js'
export type { LogStore } from './session-log.js'
export { createScriptedModel } from './scripted-model.js'
export type { ScriptEntry, ScriptedModel, ScriptedReply } from './scripted-model.js'
