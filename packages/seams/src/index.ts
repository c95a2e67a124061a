/**
 * The contracts a host implements and the plan layers consume: session
 * logs, agents, the pre-step waterfall, and the registries for prompts,
 * tools, commands, user questions, projections and invariants.
 *
 * @remarks
 * Types, plus {@link UserQuestionError} and a few readers and writers of
 * the log that carry out host duties the same way for every host (the
 * transcript, request headers, turn numbers, open questions, closing an
 * interrupted turn and its questions).
 * Importing this package also types the matching services and events of
 * `@planmode/context`.
 *
 * @packageDocumentation
 */
import type { PreStepDecision, PreStepPayload, RequestErrorDecision, RequestErrorPayload } from './agent.js'
import type { CommandRegistry } from './commands.js'
import type { AgentHandoffPayload } from './handoff.js'
import type { AnswerInbox } from './answer-inbox.js'
import type { SessionInvariantRegistry } from './invariants.js'
import type { SessionProjectionRegistry } from './projections.js'
import type { SessionEventPayload } from './session.js'
import type { SystemPromptRegistry } from './system-prompt.js'
import type { ToolExecuteDecision, ToolExecutePayload, ToolRegistry } from './tools.js'
import type { UserQuestions } from './user-questions.js'

export type { Agent, PreStepDecision, PreStepPayload, RequestErrorDecision, RequestErrorPayload } from './agent.js'
export { AnswerInboxError } from './answer-inbox.js'
export type {
  AnswerAccepted,
  AnswerInbox,
  AnswerRefusalCode,
  AnswerRefused,
  AnswerResult,
  AnswerSubmission,
  AnswerUnknown,
  OpenAsk,
  OpenAsks,
} from './answer-inbox.js'
export type { AgentHandoffFresh, AgentHandoffPayload, SessionEventInput } from './handoff.js'
export type { CommandDefinition, CommandInput, CommandInvocation, CommandRegistry, CommandRequest, CommandResult } from './commands.js'
export type { SessionInvariant, SessionInvariantRegistry } from './invariants.js'
export type {
  AssistantContentBlock,
  AssistantMessage,
  ImageAttachment,
  ImageBlock,
  MessageSource,
  ReasoningBlock,
  TextBlock,
  ToolCallBlock,
  UserContentBlock,
  UserMessage,
} from './messages.js'
export type {
  ProjectionChange,
  ProjectionKey,
  ProjectionSnapshot,
  ProjectionUnit,
  SessionProjectionMap,
  SessionProjectionRegistry,
} from './projections.js'
export type {
  CommandSource,
  RequestHeader,
  Session,
  SessionEvent,
  SessionEventMap,
  SessionEventPayload,
  SessionEventType,
  TurnEndReason,
} from './session.js'
export type { JsonSchema, StandardSchemaV1 } from './standard-schema.js'
export type { AssembledRequest, AssemblyInput, RenderedSection, SystemPromptRegistry, SystemPromptSection } from './system-prompt.js'
export type {
  ToolAnnotations,
  ToolDefinition,
  ToolExecuteDecision,
  ToolExecutePayload,
  ToolExecution,
  ToolPresentation,
  ToolRegistry,
  ToolResult,
  ToolSchema,
} from './tools.js'
export { closeInterruptedTurn, INTERRUPTED_TURN_ERROR, isInterruptedTurnEnd } from './interrupted-turn.js'
export { escapeControlCharacters, isPersonName, isWellFormedText, personTextProblem } from './person-text.js'
export { openQuestionsOf } from './question-log.js'
export type { QuestionAsked, QuestionOutcome, QuestionSettled } from './question-log.js'
export { logRequestHeaderIfChanged } from './request-header-log.js'
export type { RequestHeaderInput } from './request-header-log.js'
export { transcriptEntries } from './transcript.js'
export type {
  TranscriptAssistantEntry,
  TranscriptEntry,
  TranscriptToolEntry,
  TranscriptToolResult,
  TranscriptUserEntry,
} from './transcript.js'
export { nextTurn, openTurnOf } from './turn-log.js'
export type { OpenTurn } from './turn-log.js'
export { UserQuestionError } from './user-question-error.js'
export type { UserQuestionErrorCode } from './user-question-error.js'
export type {
  AskRequest,
  PlanReviewHandoffOffer,
  PlanReviewIntent,
  QuestionAnswerer,
  QuestionIntent,
  QuestionOption,
  UserAnswer,
  UserAnswerComment,
  UserAnswerHandoff,
  UserQuestion,
  UserQuestionProvider,
  UserQuestions,
} from './user-questions.js'

declare module '@planmode/context' {
  /**
   * The host provides `systemPrompt`, `tools`, `commands`, `userQuestions`
   * and `sessionProjections` (`sessionInvariants` is optional); a missing
   * one switches its plan layer off silently (host duty `services` of
   * `@planmode/host-conformance`).
   */
  interface Services {
    /** System-prompt sections and request assembly. */
    systemPrompt: SystemPromptRegistry
    /** The tool catalog and tool execution. */
    tools: ToolRegistry
    /** Slash commands. */
    commands: CommandRegistry
    /** Questions put to the person at the keyboard. */
    userQuestions: UserQuestions
    /** Projection units folded from session logs. */
    sessionProjections: SessionProjectionRegistry
    /** Checks every appended event. */
    sessionInvariants: SessionInvariantRegistry
    /**
     * Answers to a session's open questions from any process, carried by
     * the session store to the process that writes the session (optional:
     * `@planmode/host`'s JSONL store and `@planmode/store-postgres` provide it).
     */
    answerInbox: AnswerInbox
  }

  interface Events {
    /**
     * Waterfall before every step of a turn (not before a same-step retry).
     * Listeners await `next()` for the downstream decision and may amend it.
     *
     * @remarks
     * The host runs it once before each step (host duty `services`), its
     * final decision being `{ kind: 'enter', messages: payload.messages }`.
     * The host logs an `enter` decision's `messages` as `user/message`
     * events, in the decision's order, after everything the waterfall's
     * listeners appended while it ran (plan-core's flush appends the
     * selected `plan/mode` inside it), and before the step's
     * `request/header` and `step/start`. Do not log steered messages
     * yourself before or inside the waterfall: the decision decides them
     * (host duty `pre-step-order`). After a `reject` no step is taken, and the
     * host logs the proposed messages before the turn's `turn/end`. This
     * order is what lets a plan-mode notice reach the request it is about
     * (duty `notices`).
     */
    'agent/pre-step': (payload: PreStepPayload, next: (payload?: PreStepPayload) => Promise<PreStepDecision>) => Promise<PreStepDecision>
    /** Waterfall when a model request fails; decides between retrying the frozen request and failing. */
    'agent/request-error': (
      payload: RequestErrorPayload,
      next: (payload?: RequestErrorPayload) => Promise<RequestErrorDecision>,
    ) => Promise<RequestErrorDecision>
    /**
     * Waterfall before the tool registry runs a tool: the host runs it for
     * every call that will execute (the model's and a host's direct ones),
     * after the tool was found and its arguments validated, and never for a
     * call that fails before that (unknown tool, invalid arguments,
     * cancelled before it started). Its final decision is `run`. A listener
     * awaits `next()` for the downstream decision and may return
     * `{ kind: 'refuse', message }` instead; the host then does not run the
     * tool and its result is a failed one whose text is `Error: <message>`.
     * A listener that throws (or rejects) fails the call the same way,
     * closed: the tool does not run. The host runs the tool with the
     * original call, whatever payload a listener passes to `next`.
     *
     * @remarks
     * No duty of `@planmode/host-conformance` checks this waterfall: a
     * registry that does not run it leaves `@planmode/plan-guard` loaded
     * and doing nothing, so check it with your host's own tests.
     */
    'tool/execute': (
      payload: ToolExecutePayload,
      next: (payload?: ToolExecutePayload) => Promise<ToolExecuteDecision>,
    ) => Promise<ToolExecuteDecision>
    /**
     * After every append, once the event is in `session.events`: exactly
     * once per append, in `seq` order, before `append` resolves (host duty
     * `session-event`). `payload.session` is the session object itself,
     * and its `events` is the same array while the log only grows.
     * plan-core and the projection registry listen to it.
     */
    'session/event': (payload: SessionEventPayload) => void
    /**
     * A layer hands an agent's work on (SPEC §18): emitted by
     * `@planmode/plan-tool` during an approved `exit_plan_mode` call whose
     * review chose a handoff, right after its `plan/reviewed`.
     *
     * @remarks
     * Host duties `handoff-model` and `handoff-fresh`: with `model` alone,
     * the agent's requests from its next step use that model and its
     * `request/header` records the change; with `fresh`, no further request
     * in the agent's turn once the running step ends, then a new session
     * whose first event is `fresh.first`, its first turn started with no
     * user message. Offer a handoff (plan-tool's `handoff` config) only on a
     * host that does this: the model reads that the plan will be carried
     * out elsewhere, and stops. See {@link AgentHandoffPayload}.
     */
    'agent/handoff': (payload: AgentHandoffPayload) => void
  }
}
