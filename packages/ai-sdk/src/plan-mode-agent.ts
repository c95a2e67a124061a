import type { LanguageModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider'
import {
  generateText,
  stepCountIs,
  streamText,
  wrapLanguageModel,
  type CallSettings,
  type GenerateTextResult,
  type ModelMessage,
  type OutputInterface,
  type PrepareStepResult,
  type StepResult,
  type StreamTextResult,
  type TextStreamPart,
  type ToolSet,
} from 'ai'
import type { Context, Disposer } from '@planmode/context'
import type {
  Agent,
  AssistantContentBlock,
  CommandResult,
  CommandSource,
  ImageAttachment,
  PreStepDecision,
  Session,
  ToolResult,
  ToolSchema,
  TurnEndReason,
  UserMessage,
} from '@planmode/seams'
import { answerLogMiddleware, type AnswerSink } from './assistant-log.js'
import { PlanModeAgentError } from './plan-mode-agent-error.js'
import { jsonValue, logHeaderIfChanged, nextTurn, openTurnOf } from './session-log.js'
import { SteeredQueue } from './steered.js'
import { registerAiSdkTools, toolSetOf } from './tool-set.js'
import { transcriptMessages } from './transcript.js'

/**
 * The `error` of the `turn/end` the agent appends, before its first turn, to
 * close a turn the log leaves open (the process that ran it ended mid-turn).
 *
 * @public
 */
export const INTERRUPTED_TURN_ERROR = 'interrupted: the process running this turn ended before the turn did'

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

/** What `generate` resolves with: the AI SDK's own result. @public */
export type PlanModeGenerateResult = GenerateTextResult<ToolSet, OutputInterface<string, string>>

/** What `stream` resolves with: the AI SDK's own stream result. @public */
export type PlanModeStreamResult = StreamTextResult<ToolSet, OutputInterface<string, string, never>>

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

/** One running turn. */
interface TurnRun {
  readonly turn: number
  readonly controller: AbortController
  /** The tool catalog of this call, as the SDK received it. */
  readonly schemas: readonly ToolSchema[]
  readonly toolSet: ToolSet
  /** The step whose `step/start` is logged and whose `step/end` is not. */
  openStep: number | undefined
  /** Steps taken (pre-step accepted). */
  steps: number
  /** Tool calls of the last answered step. */
  lastCalls: number
  /** Client tool calls of the open step that have no logged result yet. */
  readonly unanswered: Map<string, string>
  /** The tool calls of the turn, one after another. */
  chain: Promise<unknown>
  /** Set once `turn/end` is being logged. */
  ending: Promise<void> | undefined
  readonly ended: Promise<void>
  markEnded(): void
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function checkDecision(decision: PreStepDecision): void {
  const ok =
    decision !== null &&
    typeof decision === 'object' &&
    ((decision.kind === 'enter' && Array.isArray(decision.messages)) || (decision.kind === 'reject' && typeof decision.reason === 'string'))
  if (!ok) throw new TypeError(`agent/pre-step returned ${JSON.stringify(decision)}, not a pre-step decision`)
}

function userMessageOf(prompt: string | UserMessage): UserMessage {
  return typeof prompt === 'string' ? { content: [{ type: 'text', text: prompt }], source: { kind: 'user' } } : prompt
}

function failed(message: string): ToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }] }
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
  const registry = ctx.require('tools')
  const systemPrompt = ctx.require('systemPrompt')
  const modelName = `${model.provider}:${model.modelId}`
  const steered = new SteeredQueue()
  let current: TurnRun | undefined
  let disposed = false

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

  const registrations: Disposer[] = []
  if (options.tools !== undefined) registrations.push(registerAiSdkTools(registry, options.tools, () => transcriptMessages(session.events)))
  if (options.system !== undefined) {
    try {
      registrations.push(systemPrompt.section({ name: AI_SDK_SYSTEM_SECTION, order: 0, text: options.system }))
    } catch (error) {
      for (const dispose of registrations.reverse()) dispose()
      throw error
    }
  }

  const sink = (): AnswerSink | undefined => {
    const run = current
    if (run === undefined || run.openStep === undefined) return undefined
    const step = run.openStep
    return {
      async log(content: readonly AssistantContentBlock[]) {
        for (const block of content) if (block.type === 'tool-call') run.unanswered.set(block.toolCallId, block.toolName)
        await session.append('assistant/message', { content, turn: run.turn, step })
      },
    }
  }
  const wrapped = wrapLanguageModel({ model, middleware: answerLogMiddleware(sink) })

  const logResult = async (toolCallId: string, toolName: string, result: ToolResult, run: TurnRun): Promise<void> => {
    run.unanswered.delete(toolCallId)
    const value = result.isError ? undefined : jsonValue(result.value)
    await session.append('tool/result', {
      toolCallId,
      toolName,
      isError: result.isError,
      content: result.content,
      ...(value === undefined ? {} : { value }),
    })
  }

  const begin = async (prompt: string | UserMessage | undefined, call: PlanModeCallOptions | undefined): Promise<TurnRun> => {
    if (disposed) throw new PlanModeAgentError('DISPOSED', `agent ${agent.id} is disposed`)
    if (current !== undefined) throw new PlanModeAgentError('BUSY', `agent ${agent.id} is running turn ${current.turn}`)
    if (prompt === undefined && steered.size === 0 && transcriptMessages(session.events).length === 0) {
      throw new PlanModeAgentError('NOTHING_TO_SEND', `agent ${agent.id}: nothing to send (no prompt, no queued message, an empty transcript)`)
    }
    const controller = new AbortController()
    const outer = call?.abortSignal
    let unlink = (): void => {}
    if (outer !== undefined) {
      const follow = (): void => controller.abort(outer.reason)
      if (outer.aborted) follow()
      else {
        outer.addEventListener('abort', follow, { once: true })
        unlink = () => outer.removeEventListener('abort', follow)
      }
    }
    const schemas = registry.schemas()
    let markEnded!: () => void
    const ended = new Promise<void>((resolve) => {
      markEnded = () => {
        unlink()
        resolve()
      }
    })
    const run: TurnRun = {
      turn: 0,
      controller,
      schemas,
      toolSet: {},
      openStep: undefined,
      steps: 0,
      lastCalls: 0,
      unanswered: new Map(),
      chain: Promise.resolve(),
      ending: undefined,
      ended,
      markEnded,
    }
    current = run
    try {
      const open = openTurnOf(session.events)
      if (open !== undefined) {
        ctx.logger.warn(`agent ${agent.id}: closing turn ${open.turn} of session ${session.id}, left open by a process that ended mid-turn`)
        if (open.step !== undefined) await session.append('step/end', { turn: open.turn, step: open.step })
        await session.append('turn/end', { turn: open.turn, reason: 'error', error: INTERRUPTED_TURN_ERROR })
      }
      Object.assign(run, { turn: nextTurn(session.events) })
      Object.assign(run, {
        toolSet: toolSetOf(schemas, (name, input, toolCallId, signal) => {
          const next = run.chain.then(async () => {
            const result = controller.signal.aborted
              ? failed('the turn was cancelled before this call ran')
              : await registry.execute(name, input, { agent, signal: signal ?? controller.signal, toolCallId })
            await logResult(toolCallId, name, result, run)
            return result
          })
          run.chain = next.catch(() => undefined)
          return next
        }),
      })
      await session.append('turn/start', { turn: run.turn })
      if (prompt !== undefined) await session.append('user/message', userMessageOf(prompt))
    } catch (error) {
      current = undefined
      markEnded()
      throw error
    }
    return run
  }

  const end = (run: TurnRun, reason: TurnEndReason, error?: string): Promise<void> => {
    run.ending ??= (async () => {
      try {
        if (run.openStep !== undefined) {
          const step = run.openStep
          run.openStep = undefined
          for (const [toolCallId, toolName] of run.unanswered) await logResult(toolCallId, toolName, failed('the turn ended before this call ran'), run)
          await session.append('step/end', { turn: run.turn, step })
        }
        // Messages steered after the turn's last pre-step are logged now, so none lives only in memory
        // past its turn: the model reads them at the next call.
        for (const message of steered.take()) await session.append('user/message', message)
        await session.append('turn/end', error === undefined ? { turn: run.turn, reason } : { turn: run.turn, reason, error })
      } catch (failure) {
        ctx.logger.error(`agent ${agent.id}: could not close turn ${run.turn}`, failure)
      } finally {
        if (current === run) current = undefined
        run.markEnded()
      }
    })()
    return run.ending
  }

  const outcomeOf = (run: TurnRun, failure: unknown): { reason: TurnEndReason; error?: string } => {
    if (PlanModeAgentError.isInstance(failure) && failure.code === 'REJECTED') return { reason: 'rejected' }
    if (run.controller.signal.aborted) return { reason: 'cancelled' }
    return { reason: 'error', error: messageOf(failure) }
  }

  const finishedReason = (run: TurnRun): TurnEndReason => (run.lastCalls > 0 && run.steps >= maxSteps ? 'step-limit' : 'completed')

  const prepareStep = (run: TurnRun) =>
    async ({ stepNumber }: { stepNumber: number }): Promise<PrepareStepResult<ToolSet>> => {
      const step = stepNumber + 1
      const signal = run.controller.signal
      const proposed = steered.take()
      let decision: PreStepDecision
      try {
        decision = await ctx.waterfall(
          'agent/pre-step',
          { agent, turn: run.turn, step, signal, messages: [...proposed] },
          async (payload): Promise<PreStepDecision> => ({ kind: 'enter', messages: payload.messages }),
        )
        checkDecision(decision)
      } catch (error) {
        steered.restore(proposed)
        throw error
      }
      if (decision.kind === 'reject') {
        steered.restore(proposed)
        ctx.logger.info(`agent ${agent.id}: step ${step} of turn ${run.turn} rejected: ${decision.reason}`)
        throw new PlanModeAgentError('REJECTED', `step ${step} of turn ${run.turn} was rejected: ${decision.reason}`, { reason: decision.reason })
      }
      for (const message of decision.messages) await session.append('user/message', message)
      signal.throwIfAborted()
      run.steps = step
      const assembled = systemPrompt.assemble({ agent })
      const sent = new Set(run.schemas.map((schema) => schema.name))
      const current = new Set(assembled.tools.map((schema) => schema.name))
      // The SDK's tool set is fixed per call: a tool registered since the call began waits for the next call,
      // one removed since is left out of this step.
      const tools = run.schemas.filter((schema) => current.has(schema.name) && sent.has(schema.name))
      await logHeaderIfChanged(session, { turn: run.turn, step, model: modelName, system: assembled.system, tools })
      await session.append('step/start', { turn: run.turn, step })
      run.openStep = step
      run.unanswered.clear()
      return {
        system: assembled.system === '' ? undefined : assembled.system,
        messages: transcriptMessages(session.events),
        activeTools: tools.map((schema) => schema.name),
      }
    }

  const onStepFinish = (run: TurnRun) =>
    async (result: StepResult<ToolSet>): Promise<void> => {
      const step = run.openStep
      if (step === undefined) return
      await run.chain
      for (const [toolCallId, toolName] of [...run.unanswered]) {
        const problem = result.content.find((part) => part.type === 'tool-error' && part.toolCallId === toolCallId)
        const text = problem !== undefined && problem.type === 'tool-error' ? messageOf(problem.error) : 'the call did not run'
        await logResult(toolCallId, toolName, failed(text), run)
      }
      run.openStep = undefined
      run.lastCalls = result.toolCalls.length
      await session.append('step/end', { turn: run.turn, step })
    }

  const settingsOf = (call: PlanModeCallOptions | undefined, run: TurnRun): CallSettings & { providerOptions?: SharedV3ProviderOptions } => ({
    ...call,
    abortSignal: run.controller.signal,
  })

  const initialMessages = (): ModelMessage[] => {
    const messages = transcriptMessages(session.events)
    // The SDK wants a non-empty prompt; prepareStep replaces it with the log's transcript before every step.
    return messages.length > 0 ? messages : [{ role: 'user', content: '' }]
  }

  return {
    agent,
    get running() {
      return current !== undefined
    },
    get queued() {
      return steered.size
    },
    async generate(prompt, call) {
      const run = await begin(prompt, call)
      try {
        const result = await generateText({
          ...settingsOf(call, run),
          model: wrapped,
          tools: run.toolSet,
          messages: initialMessages(),
          prepareStep: prepareStep(run),
          stopWhen: stepCountIs(maxSteps),
          onStepFinish: onStepFinish(run),
        })
        await end(run, finishedReason(run))
        return result
      } catch (error) {
        const outcome = outcomeOf(run, error)
        await end(run, outcome.reason, outcome.error)
        throw error
      }
    },
    async stream(prompt, call) {
      const run = await begin(prompt, call)
      let finished = false
      let aborted = false
      let lastError: unknown
      try {
        return streamText({
          ...settingsOf(call, run),
          model: wrapped,
          tools: run.toolSet,
          messages: initialMessages(),
          prepareStep: prepareStep(run),
          stopWhen: stepCountIs(maxSteps),
          onStepFinish: onStepFinish(run),
          onError: ({ error }) => {
            if (!(PlanModeAgentError.isInstance(error) && error.code === 'REJECTED')) ctx.logger.error(`agent ${agent.id}: turn ${run.turn} failed`, error)
          },
          experimental_transform: () =>
            new TransformStream<TextStreamPart<ToolSet>, TextStreamPart<ToolSet>>({
              transform(part, controller) {
                if (part.type === 'finish') finished = true
                else if (part.type === 'abort') aborted = true
                else if (part.type === 'error') lastError = part.error
                controller.enqueue(part)
              },
              async flush() {
                if (finished) await end(run, finishedReason(run))
                else if (aborted || run.controller.signal.aborted) await end(run, 'cancelled')
                else {
                  const outcome = outcomeOf(run, lastError ?? new Error('the stream ended without finishing'))
                  await end(run, outcome.reason, outcome.error)
                }
              },
            }),
        })
      } catch (error) {
        const outcome = outcomeOf(run, error)
        await end(run, outcome.reason, outcome.error)
        throw error
      }
    },
    async command(line, command) {
      if (disposed) throw new PlanModeAgentError('DISPOSED', `agent ${agent.id} is disposed`)
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
      const run = current
      if (run === undefined) return
      run.controller.abort(new Error('the turn was cancelled'))
      await run.ended
    },
    async idle() {
      await current?.ended
    },
    dispose() {
      if (disposed) return
      disposed = true
      current?.controller.abort(new Error('the agent was disposed'))
      for (const dispose of registrations.reverse()) dispose()
    },
  }
}
