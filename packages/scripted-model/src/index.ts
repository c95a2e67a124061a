/**
 * A scripted AI SDK language model for tests: each request takes the next
 * response from a queue (text, reasoning, tool calls, a failure, or a
 * function of the request) and is recorded. `createScriptedModel` is the
 * offline model of `@planmode/host`; `createConformanceModel` is the one
 * `@planmode/host-conformance` hands to the host it checks. Both packages
 * re-export what they use from here.
 *
 * @packageDocumentation
 */
export { createScriptedModel, requestSystem } from './scripted-model.js'
export type { ScriptedModel, ScriptedModelOptions } from './scripted-model.js'
export type { ScriptedAnswer, ScriptedFailure, ScriptedReply, ScriptedResponse, ScriptedToolCall } from './scripted-reply.js'
export { createConformanceModel } from './conformance-model.js'
export type { ConformanceModel, ConformanceReply, ConformanceResponse, ConformanceToolCall } from './conformance-model.js'
