/**
 * The reference planmode host: a JSONL session store, an agent loop over the
 * AI SDK language-model port, and the system-prompt, tool, command,
 * user-question, projection and invariant runtimes — each a plugin of
 * `@planmode/context` implementing `@planmode/seams`.
 *
 * @packageDocumentation
 */
import './services.js'

export { AgentError } from './agent-error.js'
export type { AgentErrorCode } from './agent-error.js'
export type {
  AgentRegistry,
  AgentStatus,
  AgentStatusPayload,
  CreateAgentOptions,
  HostAgent,
  TurnOutcome,
  UserInput,
} from './agent-types.js'
export { agentsPlugin, INTERRUPTED_TURN_ERROR } from './agents.js'
export type { AgentsConfig, AgentStreamPayload } from './agents.js'
export { commandsPlugin, parseCommandLine } from './commands.js'
export type { ParsedCommandLine } from './commands.js'
export { hostPlugin } from './host-plugin.js'
export type { HostConfig } from './host-plugin.js'
export { createDeepSeekModel, createOpenAICompatibleModel, modelFromEnv } from './providers.js'
export type { DeepSeekModelOptions, FetchFunction, OpenAICompatibleModelOptions } from './providers.js'
export { createScriptedModel, requestSystem } from './scripted-model.js'
export type {
  ScriptedAnswer,
  ScriptedFailure,
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedResponse,
  ScriptedToolCall,
} from './scripted-model.js'
export { sessionInvariantsPlugin, InvariantViolationError } from './session-invariants.js'
export type { HostSessionInvariants } from './session-invariants.js'
export { SessionLogError } from './session-log-error.js'
export type { SessionLogErrorCode } from './session-log-error.js'
export { sessionProjectionsPlugin, ProjectionViewError } from './session-projections.js'
export { sessionStorePlugin } from './session-store.js'
export type { CreateSessionOptions, Durability, HostSession, SessionStore, SessionStoreConfig } from './session-store.js'
export { systemPromptPlugin } from './system-prompt.js'
export { toolsPlugin } from './tools.js'
export { userQuestionsPlugin } from './user-questions.js'
