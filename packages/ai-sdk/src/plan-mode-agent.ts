import type { LanguageModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider'
import {
  generateText,
  stepCountIs,
  streamText,
  wrapLanguageModel,
  type CallSettings,
  type ModelMessage,
  type TextStreamPart,
  type ToolSet,
} from 'ai'
import type { Context, Disposer } from '@planmode/context'
import type { Agent, CommandResult, CommandSource, ImageAttachment, Session, UserMessage } from '@planmode/seams'
import type { AgentCore } from './agent-core.js'
import { answerLogMiddleware } from './assistant-log.js'
import { PlanModeAgentError } from './plan-mode-agent-error.js'
import { answerSinkOf, onStepFinishOf, prepareStepOf } from './step.js'
import { SteeredQueue } from './steered.js'
import { registerAiSdkTools } from './tool-set.js'
import { transcriptMessages } from './transcript.js'
import { endTurn, failedOutcome, finishedOutcome, openTurn, type TurnRun } from './turn.js'

/** The name of the system-prompt section the `system` option registers. @public */
export const AI_SDK_SYSTEM_SECTION = 'ai-sdk:system'

/** Options of {@link createPlanModeAgent}. @public */
export interface PlanModeAgentOptions {
  /**
   * The context the plan layers are composed on. It must provide `tools` and
   * `systemPrompt`; `commands` is needed by {@link PlanModeAgent.command},
   * `userQuestions` by the plan tools' reviews.
   */
  readonly ctx: Context
  /** The session log: any seams `Session` (e.g. one of `@planmode/host`'s `sessions`). */
  readonly session: Session
  /** The model, any AI SDK `LanguageModelV3` (a provider instance, not a gateway id string). */
  readonly model: LanguageModelV3
  /**
   * AI SDK tools of the host, registered in the `tools` registry for the life
   * of the agent (so they are logged, listed in the `request/header` and go
   * through the `tool/execute` waterfall). Each needs `execute`; `needsApproval`
   * and provider-defined tools are refused.
   */
  readonly tools?: ToolSet
  /** A base system prompt, registered as the section `ai-sdk:system` at order 0 for the life of the agent. */
  readonly system?: string
  /** The agent's id (defaults to `ai-sdk:<session id>`). */
  readonly id?: string
  /**
   * The agent that spawned this one, when it is a child (a sub-agent of your
   * host). The user-questions seam refuses the reviews of a child owned by a
   * live agent (`NOT_ROOT_AGENT`).
   */
  readonly owner?: Agent
  /** Steps per call before the turn ends `step-limit` (`stopWhen: stepCountIs(maxSteps)`); default 20, the AI SDK's. */
  readonly maxSteps?: number
}

/** AI SDK call settings passed through to `generateText` / `streamText` (temperature, headers, `abortSignal`, …). @public */
export interface PlanModeCallOptions extends CallSettings {
  /** Provider-specific options, as in `generateText`. */
  readonly providerOptions?: SharedV3ProviderOptions
}

/** Options of {@link PlanModeAgent.command}. @public */
export interface PlanModeCommandOptions {
  /** Composer images sent with the line. */
  readonly attachments?: readonly ImageAttachment[]
  /** Who ran it; defaults to `{ kind: 'user' }`. */
  readonly source?: CommandSource
}

/** What `generate` resolves with: the AI SDK's own `GenerateTextResult` (text output). @public */
export type PlanModeGenerateResult = Awaited<ReturnType<typeof generateText<ToolSet>>>

/** What `stream` resolves with: the AI SDK's own `StreamTextResult` (text output). @public */
export type PlanModeStreamResult = ReturnType<typeof streamText<ToolSet>>

/**
 * Plan mode inside the AI SDK's loop: one agent over one session. See
 * {@link createPlanModeAgent}.
 *
 * @public
 */
export interface PlanModeAgent {
  /** The seams `Agent` the plan layers see (`planMode.get(agent)`, commands, tools). */
  readonly agent: Agent
  /** True while a turn runs (between a `generate`/`stream` call and its `turn/end`). */
  readonly running: boolean
  /** Steered messages waiting for the next step (e.g. the message of `/plan <message>` sent between calls). */
  readonly queued: number
  /**
   * Runs one turn through `generateText`: logs `turn/start` and the prompt
   * (when given), then every step as SPEC §1 and §3.3 say, and `turn/end`.
   * Without a prompt the turn sends what is queued and logged. Rejects with
   * the SDK's error (after logging `turn/end` `error` or `cancelled`), or a
   * {@link PlanModeAgentError}: `REJECTED` (a pre-step rejected a step),
   * `BUSY`, `DISPOSED`, `NOTHING_TO_SEND`.
   */
  generate(prompt?: string | UserMessage, options?: PlanModeCallOptions): Promise<PlanModeGenerateResult>
  /**
   * Runs one turn through `streamText`. Resolves once the turn is open and
   * the stream started; consume the result (any of its streams, or
   * `consumeStream()`): the turn ends, with its `turn/end` logged, when the
   * stream does (`idle()` resolves then). Rejections as for `generate`
   * before the stream starts; after, a rejected step or a failure ends the
   * stream with an `error` part.
   */
  stream(prompt?: string | UserMessage, options?: PlanModeCallOptions): Promise<PlanModeStreamResult>
  /**
   * Runs a `/name args` line through the `commands` registry (which logs
   * `command/run` and `command/done`), between calls or during one. Resolves
   * `undefined` for an unknown command. Throws `MissingServiceError` when no
   * `commands` service is composed.
   */
  command(line: string, options?: PlanModeCommandOptions): Promise<CommandResult | undefined>
  /** The transcript the model reads next, built from the log ({@link transcriptMessages}). */
  messages(): ModelMessage[]
  /** Aborts the running turn (model request, tools, questions); resolves once its `turn/end` is logged. */
  cancel(): Promise<void>
  /** Resolves when no turn runs. */
  idle(): Promise<void>
  /** Cancels a running turn and removes what the agent registered (its `tools`, its `system` section). Further calls reject `DISPOSED`. */
  dispose(): void
}

/**
 * Creates an agent that runs plan mode inside the AI SDK's own
 * `generateText` / `streamText` loop, logging into `session`.
 *
 * @remarks
 * Per call it logs `turn/start` (closing first a turn a dead process left
 * open), the prompt, and `turn/end`. Its `prepareStep` runs, before every
 * step, the `agent/pre-step` waterfall (plan-core's flush appends
 * `plan/mode` there), logs the decision's messages as user messages, then
 * assembles the system prompt from the `systemPrompt` sections, logs a
 * `request/header` when system text, tools or model changed, logs
 * `step/start` and returns `{ system, messages, activeTools }`, the messages
 * built from the log. A rejected pre-step throws, which ends the SDK loop. A
 * model middleware logs each step's `assistant/message` before its tools
 * run; the tools of the `tools` registry (the plan tools among them) become
 * AI SDK tools whose calls go through the registry one after another and are
 * logged as `tool/result`; `onStepFinish` logs `step/end`.
 *
 * @example
 * ```ts
 * const planning = createPlanModeAgent({ ctx, session, model })
 * await planning.command('/plan')
 * const result = await planning.generate('Add a --verbose flag.')
 * ```
 *
 * @public
 */
export function createPlanModeAgent(options: PlanModeAgentOptions): PlanModeAgent {
  const { ctx, session, model } = options
  const maxSteps = options.maxSteps ?? 20
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw new TypeError(`@planmode/ai-sdk: maxSteps must be a positive integer, got ${JSON.stringify(options.maxSteps)}`)
  const tools = ctx.require('tools')
  const systemPrompt = ctx.require('systemPrompt')
  const steered = new SteeredQueue()
  const agent: Agent = {
    id: options.id ?? `ai-sdk:${session.id}`,
    session,
    ...(options.owner === undefined ? {} : { owner: options.owner }),
    steer(message) {
      steered.push(message)
    },
    async inject(message) {
      await session.append('user/message', message)
    },
  }
  const core: AgentCore = { ctx, session, agent, tools, systemPrompt, modelName: `${model.provider}:${model.modelId}`, maxSteps, steered, current: undefined, disposed: false }

  const registrations: Disposer[] = []
  if (options.tools !== undefined) registrations.push(registerAiSdkTools(tools, options.tools, () => transcriptMessages(session.events)))
  if (options.system !== undefined) {
    try {
      registrations.push(systemPrompt.section({ name: AI_SDK_SYSTEM_SECTION, order: 0, text: options.system }))
    } catch (error) {
      for (const dispose of registrations.reverse()) dispose()
      throw error
    }
  }
  const wrapped = wrapLanguageModel({ model, middleware: answerLogMiddleware(answerSinkOf(core)) })

  /** The options both SDK calls share: the caller's settings, then what the agent owns. */
  const callOf = (call: PlanModeCallOptions | undefined, run: TurnRun) => ({
    ...call,
    abortSignal: run.controller.signal,
    model: wrapped,
    tools: run.toolSet,
    // The SDK wants a non-empty prompt; prepareStep replaces it with the log's transcript before every step.
    messages: initialMessages(session),
    prepareStep: prepareStepOf(core, run),
    stopWhen: stepCountIs(maxSteps),
    onStepFinish: onStepFinishOf(core, run),
  })

  return {
    agent,
    get running() {
      return core.current !== undefined
    },
    get queued() {
      return steered.size
    },
    async generate(prompt, call) {
      const run = await openTurn(core, prompt, call?.abortSignal)
      try {
        const result = await generateText(callOf(call, run))
        await endTurn(core, run, finishedOutcome(core, run))
        return result
      } catch (error) {
        await endTurn(core, run, failedOutcome(run, error))
        throw error
      }
    },
    async stream(prompt, call) {
      const run = await openTurn(core, prompt, call?.abortSignal)
      try {
        return streamText({
          ...callOf(call, run),
          onError: ({ error }) => {
            if (!(PlanModeAgentError.isInstance(error) && error.code === 'REJECTED')) ctx.logger.error(`agent ${agent.id}: turn ${run.turn} failed`, error)
          },
          experimental_transform: () => turnEndTransform(core, run),
        })
      } catch (error) {
        await endTurn(core, run, failedOutcome(run, error))
        throw error
      }
    },
    async command(line, command) {
      if (core.disposed) throw new PlanModeAgentError('DISPOSED', `agent ${agent.id} is disposed`)
      return ctx.require('commands').execute({
        agent,
        line,
        ...(command?.attachments === undefined ? {} : { attachments: command.attachments }),
        ...(command?.source === undefined ? {} : { source: command.source }),
      })
    },
    messages() {
      return transcriptMessages(session.events)
    },
    async cancel() {
      const run = core.current
      if (run === undefined) return
      run.controller.abort(new Error('the turn was cancelled'))
      await run.ended
    },
    async idle() {
      await core.current?.ended
    },
    dispose() {
      if (core.disposed) return
      core.disposed = true
      core.current?.controller.abort(new Error('the agent was disposed'))
      for (const dispose of registrations.reverse()) dispose()
    },
  }
}

function initialMessages(session: Session): ModelMessage[] {
  const messages = transcriptMessages(session.events)
  return messages.length > 0 ? messages : [{ role: 'user', content: '' }]
}

/**
 * The stream transform that ends a streamed turn when its stream ends:
 * `completed` (or `step-limit`) after a `finish` part, `cancelled` after an
 * abort, else `rejected` or `error` from the last `error` part.
 */
function turnEndTransform(core: AgentCore, run: TurnRun): TransformStream<TextStreamPart<ToolSet>, TextStreamPart<ToolSet>> {
  let finished = false
  let aborted = false
  let lastError: unknown
  return new TransformStream({
    transform(part, controller) {
      if (part.type === 'finish') finished = true
      else if (part.type === 'abort') aborted = true
      else if (part.type === 'error') lastError = part.error
      controller.enqueue(part)
    },
    async flush() {
      if (finished) await endTurn(core, run, finishedOutcome(core, run))
      else if (aborted || run.controller.signal.aborted) await endTurn(core, run, { reason: 'cancelled' })
      else await endTurn(core, run, failedOutcome(run, lastError ?? new Error('the stream ended without finishing')))
    },
  })
}
