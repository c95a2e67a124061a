import {
  generateText,
  stepCountIs,
  streamText,
  wrapLanguageModel,
  type CallSettings,
  type ModelMessage,
  type TextStreamPart,
  type ToolModelMessage,
  type ToolSet,
} from 'ai'
import type { Context, Disposer } from '@planmode/context'
import type { Agent, AgentHandoffPayload, CommandResult, CommandSource, ImageAttachment, Session, UserMessage } from '@planmode/seams'
import { abortError, freshSessions, type AgentCore, type FreshHandoff } from './agent-core.js'
import { answerLogMiddleware } from './assistant-log.js'
import { PlanModeAgentError } from './plan-mode-agent-error.js'
import { answerSinkOf, onStepFinishOf, prepareStepOf } from './step.js'
import { SteeredQueue } from './steered.js'
import type { PlanModeLanguageModel, PlanModeProviderOptions } from './sdk-types.js'
import { ownToolsOf } from './tool-set.js'
import { transcriptMessages } from './transcript.js'
import { endTurn, failedOutcome, finishedOutcome, openTurn, type SettledApproval, type TurnRun } from './turn.js'

/**
 * The prefix of the system-prompt section the `system` option registers: the
 * section of an agent is `ai-sdk:system:<agent id>`, at order 0, and renders
 * its text only in that agent's assemblies (`''` in every other one).
 *
 * @public
 */
export const AI_SDK_SYSTEM_SECTION = 'ai-sdk:system'

/** Options of {@link createPlanModeAgent}. @public */
export interface PlanModeAgentOptions {
  /**
   * The context the plan layers are composed on. It must provide `tools` and
   * `systemPrompt` when the agent is created (they are looked up again at
   * every step, so a service disposed and provided again is the one used);
   * `commands` is needed by {@link PlanModeAgent.command}, `userQuestions`
   * by the plan tools' reviews.
   */
  readonly ctx: Context
  /** The session log: any seams `Session` (e.g. one of `@planmode/host`'s `sessions`). */
  readonly session: Session
  /** The model: an AI SDK v3 language model (a provider instance, not a gateway id string). */
  readonly model: PlanModeLanguageModel
  /**
   * AI SDK tools of this agent only: sent beside the `tools` registry's
   * catalog (listed in the `request/header`, logged, run one after another
   * through the `tool/execute` waterfall, so plan-guard applies), but not
   * registered in the registry, so other agents on the context neither see
   * nor collide with them. Each needs `execute`; provider-defined tools are
   * refused, and so is a name the registry already holds. A tool with
   * `needsApproval` asks as in the SDK (the call ends with a
   * `tool-approval-request`; the next call answers it, see
   * {@link PlanModePrompt}), after the `tool/execute` waterfall admitted the
   * call: plan-guard refuses a call before anyone is asked.
   */
  readonly tools?: ToolSet
  /**
   * A base system prompt of this agent: the section
   * `ai-sdk:system:<agent id>` ({@link AI_SDK_SYSTEM_SECTION}) at order 0,
   * rendered only for this agent, kept for the life of the agent and
   * registered again when a `systemPrompt` service returns.
   */
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
  /**
   * The models a handoff may switch to (SPEC §18), by the ids a layer names
   * in the seams' `agent/handoff` (plan-tool's `handoff.models`): a map, or
   * a function resolving an id (`undefined` when it does not know it). A
   * handoff with a model alone switches this agent from its next step
   * (`prepareStep` returns it, and the step's `request/header` names it);
   * an id that does not resolve keeps the model, with a `logger.warn`.
   */
  readonly models?: PlanModeModels
  /**
   * How a handoff to a fresh session is carried out (SPEC §18). With it, the
   * turn that handed off takes no further step (it ends `completed` once
   * the step that ran the tool ends); then, before the call returns, the
   * adapter makes the new session with `session()`, logs its first event,
   * creates an agent over it with this agent's options (the model chosen,
   * else this agent's; no `id`, no `owner`) and starts its first turn with
   * no prompt through `start` (default: `agent.generate()`). Without it a
   * fresh handoff is not carried out, with a `logger.warn` (offer one only
   * where it is: plan-tool's `handoff.fresh`).
   */
  readonly fresh?: PlanModeFreshSessions
}

/** The models of a handoff: id → model, or a resolver. @public */
export type PlanModeModels = Readonly<Record<string, PlanModeLanguageModel>> | ((id: string) => PlanModeLanguageModel | undefined)

/**
 * Where fresh sessions of handoffs come from and how their first turn runs
 * ({@link PlanModeAgentOptions.fresh}).
 *
 * @public
 */
export interface PlanModeFreshSessions {
  /** A new, empty session (from your store, e.g. `() => ctx.require('sessions').create()`). */
  session(from: PlanModeAgent): Session | Promise<Session>
  /**
   * Runs the new agent's first turn, with no prompt (plan-tool gives the
   * model the plan at its first step): `agent.generate()`, or
   * `agent.stream()` piped to your UI, which follows the new session from
   * here. Default: `agent.generate()`. Called once the new session's first
   * event is logged; a rejection is reported through `logger.error`.
   */
  start?(agent: PlanModeAgent, from: PlanModeAgent): unknown
}

/**
 * What a call sends: a prompt (text, or a seams `UserMessage`), or the AI
 * SDK's tool message of `tool-approval-response` parts, which answers the
 * approvals the session's log waits for (`pendingApprovals`): each approved
 * call runs, each denied one gets a failed result, then the model goes on.
 * Whatever a call sends, it settles every approval still waiting: the ones
 * it does not answer are denied ({@link APPROVAL_NOT_ANSWERED}).
 *
 * @public
 */
export type PlanModePrompt = string | UserMessage | ToolModelMessage

/** AI SDK call settings passed through to `generateText` / `streamText` (temperature, headers, `abortSignal`, …). @public */
export interface PlanModeCallOptions extends CallSettings {
  /** Provider-specific options, as in `generateText`. */
  readonly providerOptions?: PlanModeProviderOptions
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
  /**
   * The seams `Agent` the plan layers see (`planMode.get(agent)`, commands,
   * tools). Its `steer` queues a message for the next step of the running
   * turn; on an idle agent it only queues (the next `generate()` or
   * `stream()` sends it; nothing starts a turn by itself). It also has a
   * `disposed` getter (true after {@link PlanModeAgent.dispose}), which the
   * user-questions seam reads to tell whether a child's owner still lives.
   */
  readonly agent: Agent
  /** True while a turn runs (between a `generate`/`stream` call and its `turn/end`). */
  readonly running: boolean
  /** Steered messages waiting for the next step (e.g. the message of `/plan <message>` sent between calls). */
  readonly queued: number
  /**
   * Runs one turn through `generateText`: logs `turn/start` and the prompt
   * (when given), then every step as SPEC §1 and §3.3 say, and `turn/end`.
   * Without a prompt the turn sends what is queued and logged; with a tool
   * message it answers the approvals the log waits for
   * ({@link PlanModePrompt}). Rejects with the SDK's error (after logging
   * `turn/end` `error` or `cancelled`), or a {@link PlanModeAgentError}:
   * `REJECTED` (a pre-step rejected a step), `BUSY`, `DISPOSED`,
   * `NOTHING_TO_SEND`, `UNKNOWN_APPROVAL`.
   */
  generate(prompt?: PlanModePrompt, options?: PlanModeCallOptions): Promise<PlanModeGenerateResult>
  /**
   * Runs one turn through `streamText`. Resolves once the turn is open and
   * the stream started; consume the result (any of its streams, or
   * `consumeStream()`): the turn ends, with its `turn/end` logged, when the
   * stream does (`idle()` resolves then). Rejections as for `generate`
   * before the stream starts; after, a rejected step or a failure ends the
   * stream with an `error` part. When the call settled approvals, the
   * stream opens (after its `start` part) with their calls' `tool-result`
   * or `tool-output-denied` parts.
   */
  stream(prompt?: PlanModePrompt, options?: PlanModeCallOptions): Promise<PlanModeStreamResult>
  /**
   * Runs a `/name args` line through the `commands` registry (which logs
   * `command/run` and `command/done`), between calls or during one. Resolves
   * `undefined` for an unknown command. Throws `MissingServiceError` when no
   * `commands` service is composed.
   */
  command(line: string, options?: PlanModeCommandOptions): Promise<CommandResult | undefined>
  /** The transcript the model reads next, built from the log ({@link transcriptMessages}). */
  messages(): ModelMessage[]
  /**
   * Aborts the running turn (model request, tools, questions) with a
   * `DOMException` named `AbortError`; resolves once its `turn/end` is
   * logged.
   */
  cancel(): Promise<void>
  /** Resolves when no turn runs. */
  idle(): Promise<void>
  /** Cancels a running turn (an `AbortError`, as `cancel`) and removes the agent's `system` section. Further calls reject `DISPOSED`. */
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
 * run; the tools of the `tools` registry (the plan tools among them) and the
 * agent's own `tools` become AI SDK tools whose calls run one after another
 * through the `tool/execute` waterfall and are logged as `tool/result`;
 * `onStepFinish` logs `step/end`. A refused append fails the turn even where
 * the SDK ignores errors (`onStepFinish`, tool results).
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
  checkModels(options.models)
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new TypeError(`@planmode/ai-sdk: maxSteps must be a positive integer, got ${JSON.stringify(options.maxSteps)}`)
  const tools = ctx.require('tools')
  const systemPrompt = ctx.require('systemPrompt')
  const steered = new SteeredQueue()
  const id = options.id ?? `ai-sdk:${session.id}`
  const ownTools = options.tools === undefined ? new Map() : ownToolsOf(options.tools, () => transcriptMessages(session.events))
  for (const name of ownTools.keys()) {
    if (tools.get(name) !== undefined) throw new Error(`@planmode/ai-sdk: tool "${name}" is already registered in the tools registry`)
  }
  const sectionName = `${AI_SDK_SYSTEM_SECTION}:${id}`
  if (options.system !== undefined && systemPrompt.assemble({}).sections.some((section) => section.name === sectionName)) {
    throw new Error(
      `@planmode/ai-sdk: system prompt section "${sectionName}" is already registered (another agent with id "${id}" on this context)`,
    )
  }
  let core!: AgentCore
  const agent: Agent & { readonly disposed: boolean } = {
    id,
    session,
    ...(options.owner === undefined ? {} : { owner: options.owner }),
    get disposed() {
      return core.disposed
    },
    steer(message) {
      steered.push(message)
    },
    async inject(message) {
      await session.append('user/message', message)
    },
  }
  const wrappedModels = new Map<PlanModeLanguageModel, ReturnType<typeof wrapLanguageModel>>()
  const wrap = (next: PlanModeLanguageModel): ReturnType<typeof wrapLanguageModel> => {
    let wrapped = wrappedModels.get(next)
    if (wrapped === undefined)
      wrappedModels.set(next, (wrapped = wrapLanguageModel({ model: next, middleware: answerLogMiddleware(answerSinkOf(core)) })))
    return wrapped
  }
  let self!: PlanModeAgent
  /** SPEC §18: each fresh session a turn's handoffs asked for, started in order; a failure is logged and that one dropped. */
  const startFresh = async (list: readonly FreshHandoff[]): Promise<void> => {
    for (const fresh of list) {
      if (core.disposed) return
      const setup = options.fresh
      if (setup === undefined) {
        ctx.logger.warn(`agent ${agent.id}: a handoff asked for a fresh session, but the agent has no \`fresh\` option; none is started`)
        continue
      }
      try {
        const next = await setup.session(self)
        await next.append(fresh.first.type, fresh.first.data as never)
        freshSessions.add(next)
        const { id: _id, owner: _owner, ...inherited } = options
        const planner = createPlanModeAgent({ ...inherited, session: next, model: fresh.model })
        const first = setup.start === undefined ? planner.generate() : setup.start(planner, self)
        Promise.resolve(first).catch((error: unknown) =>
          ctx.logger.error(`agent ${planner.agent.id}: the first turn of a fresh session failed`, error),
        )
      } catch (error) {
        ctx.logger.error(`agent ${agent.id}: could not start the fresh session of a handoff`, error)
      }
    }
  }
  core = {
    ctx,
    session,
    agent,
    ownTools,
    system: options.system,
    model,
    modelName: `${model.provider}:${model.modelId}`,
    maxSteps,
    steered,
    current: undefined,
    disposed: false,
    wrap,
    startFresh,
  }

  const registrations: Disposer[] = []
  if (options.system !== undefined) {
    const text = options.system
    // Registered in every `systemPrompt` service that comes (a hot reload provides a new one).
    registrations.push(
      ctx.inject(['systemPrompt'], (child) => {
        child.effect(
          child.require('systemPrompt').section({ name: sectionName, order: 0, text: (input) => (input.agent === agent ? text : '') }),
        )
      }),
    )
  }
  // SPEC §18: a layer hands this agent's work on, to another model or to a fresh session.
  registrations.push(
    ctx.on('agent/handoff', (payload: AgentHandoffPayload) => {
      if (payload?.agent !== agent || core.disposed) return
      const id = typeof payload.model === 'string' ? payload.model : undefined
      const chosen =
        id === undefined
          ? undefined
          : resolveModel(options.models, id, (message, error) => ctx.logger.warn(`agent ${agent.id}: ${message}`, error))
      const first = payload.fresh?.first
      if (first === undefined) {
        if (chosen !== undefined) {
          core.model = chosen
          core.modelName = `${chosen.provider}:${chosen.modelId}`
        }
        return
      }
      const fresh = { first, model: chosen ?? core.model }
      if (core.current !== undefined && core.current.ending === undefined) core.current.freshes.push(fresh)
      else void startFresh([fresh])
    }),
  )

  /** The options both SDK calls share: the caller's settings, then what the agent owns. */
  const callOf = (call: PlanModeCallOptions | undefined, run: TurnRun) => ({
    ...call,
    abortSignal: run.controller.signal,
    model: core.wrap(core.model),
    tools: run.toolSet,
    // The SDK wants a non-empty prompt; prepareStep replaces it with the log's transcript before every step.
    messages: initialMessages(session),
    prepareStep: prepareStepOf(core, run),
    // A handoff to a fresh session ends the turn once the step that ran the tool ends (SPEC §18).
    stopWhen: [stepCountIs(maxSteps), () => run.freshes.length > 0],
    onStepFinish: onStepFinishOf(core, run),
  })

  self = {
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
        // A refused append the SDK swallowed (onStepFinish) after the last step fails the turn here.
        if (run.failure !== undefined) throw run.failure
        await endTurn(core, run, finishedOutcome(core, run))
        return result
      } catch (error) {
        const failure = run.failure ?? error
        await endTurn(core, run, failedOutcome(run, failure))
        throw failure
      }
    },
    async stream(prompt, call) {
      const run = await openTurn(core, prompt, call?.abortSignal)
      try {
        return streamText({
          ...callOf(call, run),
          onError: ({ error }) => {
            if (!(PlanModeAgentError.isInstance(error) && error.code === 'REJECTED'))
              ctx.logger.error(`agent ${agent.id}: turn ${run.turn} failed`, error)
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
      run.controller.abort(abortError('the turn was cancelled'))
      await run.ended
    },
    async idle() {
      await core.current?.ended
    },
    dispose() {
      if (core.disposed) return
      core.disposed = true
      core.current?.controller.abort(abortError('the agent was disposed'))
      for (const dispose of registrations.reverse()) dispose()
    },
  }
  return self
}

/** Checks the `models` option: a map of AI SDK v3 models, or a function. */
function checkModels(models: unknown): void {
  if (models === undefined || typeof models === 'function') return
  const plain = typeof models === 'object' && models !== null && !Array.isArray(models)
  const bad = plain ? Object.entries(models).find(([, model]) => !isLanguageModel(model)) : undefined
  if (!plain || bad !== undefined) {
    throw new TypeError(
      `@planmode/ai-sdk: models must be a map of model id → language model (v3 or v4), or a function resolving an id${bad === undefined ? '' : ` (models["${bad[0]}"] is not a v3 or v4 model)`}`,
    )
  }
}

/** Whether a value is a language model of a specification the adapter takes (v3 with `ai` 6 or 7, v4 with `ai` 7). */
function isLanguageModel(model: unknown): model is PlanModeLanguageModel {
  const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion
  return version === 'v3' || version === 'v4'
}

/** The model `id` resolves to, or `undefined` (with a warning saying why). */
function resolveModel(
  models: PlanModeModels | undefined,
  id: string,
  warn: (message: string, error?: unknown) => void,
): PlanModeLanguageModel | undefined {
  let model: PlanModeLanguageModel | undefined
  try {
    model = typeof models === 'function' ? models(id) : models !== undefined && Object.hasOwn(models, id) ? models[id] : undefined
  } catch (error) {
    warn(`the \`models\` resolver threw for "${id}"`, error)
    return undefined
  }
  if (isLanguageModel(model)) return model
  warn(`a handoff chose model "${id}", which the \`models\` option does not resolve to an AI SDK v3 or v4 model; it is not used`)
  return undefined
}

function initialMessages(session: Session): ModelMessage[] {
  const messages = transcriptMessages(session.events)
  return messages.length > 0 ? messages : [{ role: 'user', content: '' }]
}

/** A stream transformer with the `cancel` hook (called when the stream errors or is cancelled; Node 20's streams run it). */
type CancellableTransformer<I, O> = {
  transform(part: I, controller: TransformStreamDefaultController<O>): void
  flush(controller: TransformStreamDefaultController<O>): Promise<void>
  cancel(reason: unknown): Promise<void>
}

/**
 * The stream transform that ends a streamed turn when its stream ends:
 * `completed` (or `step-limit`) after a `finish` part, `cancelled` after an
 * abort, `error` when a refused append failed the turn (its `abort` part
 * becomes an `error` part carrying the store's error), else `rejected` or
 * `error` from the last `error` part; a stream that errors or is cancelled
 * aborts the turn and ends it too.
 */
function turnEndTransform(core: AgentCore, run: TurnRun): TransformStream<TextStreamPart<ToolSet>, TextStreamPart<ToolSet>> {
  let finished = false
  let aborted = false
  let lastError: unknown
  let failureShown = false
  const transformer: CancellableTransformer<TextStreamPart<ToolSet>, TextStreamPart<ToolSet>> = {
    transform(part, controller) {
      if (part.type === 'abort' && run.failure !== undefined) {
        // The turn was aborted because the store refused an append: the reader learns that error.
        if (!failureShown) controller.enqueue({ type: 'error', error: run.failure })
        failureShown = true
        return
      }
      if (part.type === 'start') {
        controller.enqueue(part)
        // The approvals this call settled: their calls' outcomes, as the SDK streams a call's.
        for (const settled of run.settled.splice(0)) controller.enqueue(settledPart(settled))
        return
      }
      if (part.type === 'finish') finished = true
      else if (part.type === 'abort') aborted = true
      else if (part.type === 'error') {
        lastError = part.error
        if (part.error === run.failure) failureShown = true
      }
      controller.enqueue(part)
    },
    async flush(controller) {
      if (run.failure !== undefined) {
        if (!failureShown) controller.enqueue({ type: 'error', error: run.failure })
        failureShown = true
        await endTurn(core, run, failedOutcome(run, run.failure))
      } else if (finished) await endTurn(core, run, finishedOutcome(core, run))
      else if (aborted || run.controller.signal.aborted) await endTurn(core, run, { reason: 'cancelled' })
      else await endTurn(core, run, failedOutcome(run, lastError ?? new Error('the stream ended without finishing')))
    },
    async cancel(reason) {
      // The stream errored (a refused answer append, a provider's broken stream) or was cancelled: the
      // SDK loop is told to stop, and the turn ends with what ended the stream.
      const outcome = failedOutcome(run, reason)
      if (!run.controller.signal.aborted) run.controller.abort(abortError(`the stream ended: ${outcome.error ?? outcome.reason}`))
      await endTurn(core, run, outcome)
    },
  }
  return new TransformStream(transformer)
}

/** The stream part of an approval a call settled: the call's result, or the SDK's denial part. */
function settledPart({ response, toolName, input, result }: SettledApproval): TextStreamPart<ToolSet> {
  const { toolCallId } = response
  const part = response.approved
    ? { type: 'tool-result', toolCallId, toolName, input, output: result }
    : { type: 'tool-output-denied', toolCallId, toolName }
  return part as TextStreamPart<ToolSet>
}
