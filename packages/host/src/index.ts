/**
 * The reference planmode host: a JSONL session store, an agent loop over the
 * AI SDK language-model port, and the system-prompt, tool, command,
 * user-question, projection and invariant runtimes — each a plugin of
 * `@planmode/context` implementing `@planmode/seams`. Its session store
 * implements the contract of `@planmode/store`.
 *
 * @packageDocumentation
 */
import './services.js'

export { AgentError } from './loop/agent-error.js'
export type { AgentErrorCode } from './loop/agent-error.js'
export type {
  AgentHandedOffPayload,
  AgentRegistry,
  AgentStatus,
  AgentStatusPayload,
  AgentStreamPayload,
  CreateAgentOptions,
  HostAgent,
  TurnOutcome,
  UserInput,
} from './loop/agent-types.js'
export { agentsPlugin } from './loop/agents-plugin.js'
export type { AgentModels, AgentsConfig } from './loop/agents-config.js'
// One implementation for every host, in the seams: re-exported for the stores and hosts built on this one.
export { closeInterruptedTurn, INTERRUPTED_TURN_ERROR } from '@planmode/seams'
export { commandsPlugin, parseCommandLine } from './runtimes/commands.js'
export type { ParsedCommandLine } from './runtimes/commands.js'
export { hostPlugin } from './host-plugin.js'
export type { HostConfig } from './host-plugin.js'
export { createDeepSeekModel, createOpenAICompatibleModel, modelFromEnv } from './model/providers.js'
export type { DeepSeekModelOptions, FetchFunction, OpenAICompatibleModelOptions } from './model/providers.js'
export { ModelTimeoutError } from './model/model-timeout-error.js'
export type { ModelTimeoutKind } from './model/model-timeout-error.js'
export { createScriptedModel, requestSystem } from '@planmode/scripted-model'
export type {
  ScriptedAnswer,
  ScriptedFailure,
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedResponse,
  ScriptedToolCall,
} from '@planmode/scripted-model'
export { sessionInvariantsPlugin, InvariantViolationError } from './runtimes/session-invariants.js'
export type { HostSessionInvariants } from './runtimes/session-invariants.js'
export { sessionProjectionsPlugin, ProjectionViewError } from './runtimes/session-projections.js'
export { sessionStorePlugin } from './session/session-store.js'
export type { SessionStoreConfig } from './session/session-store.js'
export { systemPromptPlugin } from './runtimes/system-prompt.js'
export { toolsPlugin } from './runtimes/tools.js'
export { userQuestionsPlugin } from './runtimes/user-questions.js'
export { questionsProjection, questionsProjectionPlugin } from './runtimes/questions-projection.js'
export { localAnswers } from './answers/local-inbox.js'
export type { LocalAnswersOptions } from './answers/local-inbox.js'
export {
  AppendQueue,
  answererText,
  checkAnswerer,
  checkAnswers,
  NOTHING_OPENED,
  questionStateOf,
  SessionLogError,
  verdictOfLog,
} from './moved-to-store.js'
export type {
  AnswerCheck,
  AnswerDecision,
  AnswerDesk,
  CreateSessionOptions,
  Durability,
  HostSession,
  IncomingAnswer,
  OpenedQuestion,
  PendingAppend,
  QuestionState,
  SessionLogErrorCode,
  SessionStore,
} from './moved-to-store.js'
export type { OpenQuestion, QuestionsView } from './runtimes/questions-projection.js'
