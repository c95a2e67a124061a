import {
  closeInterruptedTurn,
  nextTurn,
  openTurnOf,
  type ToolResult,
  type ToolSchema,
  type TurnEndReason,
  type UserMessage,
} from '@planmode/seams'
import type { ToolModelMessage, ToolSet } from 'ai'
import { abortError, freshSessions, runningOn, type AgentCore, type FreshHandoff } from './agent-core.js'
import { approvalAnswersOf, deniedResult, isToolMessage, pendingApprovals, type PlanModeApprovalResponse } from './approvals.js'
import { jsonValue } from './json-value.js'
import { PlanModeAgentError } from './plan-mode-agent-error.js'
import { admitOwnTool, catalogOf, executeOwnTool, failed, messageOf, toolSetOf, type ApprovalGate } from './tool-set.js'
import { transcriptMessages } from './transcript.js'

/** One running turn: one `generate` or `stream` call. */
export interface TurnRun {
  readonly turn: number
  readonly controller: AbortController
  /** The tool catalog of this call, as the SDK received it (fixed for the call). */
  readonly schemas: readonly ToolSchema[]
  readonly toolSet: ToolSet
  /** How many assistant messages the transcript held when the call began (the SDK's initial messages). */
  readonly initialAssistants: number
  /** The step whose `step/start` is logged and whose `step/end` is not. */
  openStep: number | undefined
  /** Steps entered (pre-step accepted). */
  steps: number
  /** Tool calls of the last answered step. */
  lastCalls: number
  /** Client tool calls of the open step that have no logged result yet. */
  readonly unanswered: Map<string, string>
  /** The turn's tool calls, one after another. */
  chain: Promise<unknown>
  /**
   * An append the store refused where the AI SDK would swallow the error
   * (`onStepFinish`, a tool's result): the turn fails with it.
   */
  failure: unknown
  /** Set once the turn's end is being logged. */
  ending: Promise<void> | undefined
  /** Resolves once `turn/end` is logged (or could not be). */
  readonly ended: Promise<void>
  /** Resolves `ended`. */
  readonly markEnded: () => void
  /** Fresh sessions a handoff asked for during the turn: the turn takes no further step, and they start once it ended. */
  readonly freshes: FreshHandoff[]
  /**
   * Results decided before the SDK ran a call: a call of a tool with
   * `needsApproval` that the `tool/execute` waterfall refused when the SDK
   * asked whether it needs an approval (so nobody is asked), by call id.
   */
  readonly decided: Map<string, ToolResult>
  /** The approvals this call settled before its first step, with their calls' results (a stream opens with them). */
  readonly settled: SettledApproval[]
}

/** An approval a call settled, and the result its call got. */
export interface SettledApproval {
  readonly response: PlanModeApprovalResponse
  readonly toolName: string
  readonly input: unknown
  readonly result: ToolResult
}

/** What a call sends: a prompt, or the SDK's tool message of approval responses. */
export type TurnPrompt = string | UserMessage | ToolModelMessage

/** How a turn ended, for its `turn/end`. */
export interface TurnOutcome {
  readonly reason: TurnEndReason
  readonly error?: string
}

export { failed, messageOf }

function userMessageOf(prompt: string | UserMessage): UserMessage {
  return typeof prompt === 'string' ? { content: [{ type: 'text', text: prompt }], source: { kind: 'user' } } : prompt
}

/**
 * Fails a turn with an append the store refused: keeps the first such error
 * and aborts the turn (with an `AbortError`, so the SDK stops as it does for
 * a cancel); the turn then ends `error` with it and the call rejects with it.
 */
export function failRun(core: AgentCore, run: TurnRun, error: unknown): void {
  if (run.failure !== undefined) return
  run.failure = error
  core.ctx.logger.error(`agent ${core.agent.id}: turn ${run.turn} fails: the store refused an append`, error)
  if (!run.controller.signal.aborted) run.controller.abort(abortError(`the turn failed: ${messageOf(error)}`))
}

/** Logs one call's `tool/result` (its value only when JSON can hold it) and marks the call answered. */
export async function logToolResult(
  core: AgentCore,
  run: TurnRun,
  toolCallId: string,
  toolName: string,
  result: ToolResult,
): Promise<void> {
  run.unanswered.delete(toolCallId)
  const value = result.isError ? undefined : jsonValue(result.value)
  await core.session.append('tool/result', {
    toolCallId,
    toolName,
    isError: result.isError,
    content: result.content,
    ...(value === undefined ? {} : { value }),
  })
}

/** The assistant messages of a transcript. */
function assistantCount(messages: readonly { role: string }[]): number {
  return messages.filter((message) => message.role === 'assistant').length
}

/**
 * Opens a turn: refuses a disposed or busy agent, a session another live
 * agent of this process is running, and a call with nothing to send; closes
 * a turn the log leaves open when no agent of this process owns it (a dead
 * process's); snapshots the tool catalog (the registry's, plus the agent's
 * own tools) into the call's tool set; logs `turn/start`; settles every
 * approval the log waits for (the tool message's responses; the rest as not
 * answered): `ai-sdk/approval-response`, then the call's result (an approved
 * call runs now); then (with a prompt) the messages steered while no turn
 * ran and the prompt. A failure after `turn/start` logs `turn/end` `error`
 * (when the store takes it).
 */
export async function openTurn(core: AgentCore, sent: TurnPrompt | undefined, outer: AbortSignal | undefined): Promise<TurnRun> {
  const { agent, session, ctx } = core
  if (core.disposed) throw new PlanModeAgentError('DISPOSED', `agent ${agent.id} is disposed`)
  if (core.current !== undefined) throw new PlanModeAgentError('BUSY', `agent ${agent.id} is running turn ${core.current.turn}`)
  const other = runningOn.get(session)
  const otherRun = other !== undefined && other !== core ? other.current : undefined
  if (other !== undefined && otherRun !== undefined && !other.disposed) {
    throw new PlanModeAgentError('BUSY', `session ${session.id} is running turn ${otherRun.turn} of agent ${other.agent.id}`)
  }
  // Every call settles the approvals the log waits for: with the responses it sends, else as not answered.
  const pending = pendingApprovals(session.events)
  const answers = isToolMessage(sent) ? approvalAnswersOf(sent, pending) : new Map()
  const prompt = isToolMessage(sent) ? undefined : sent
  const initial = transcriptMessages(session.events)
  if (prompt === undefined && answers.size === 0 && core.steered.size === 0 && initial.length === 0 && !freshSessions.has(session)) {
    throw new PlanModeAgentError(
      'NOTHING_TO_SEND',
      `agent ${agent.id}: nothing to send (no prompt, no queued message, an empty transcript)`,
    )
  }
  const controller = new AbortController()
  let unlink = (): void => {}
  if (outer !== undefined) {
    const follow = (): void => controller.abort(outer.reason)
    if (outer.aborted) follow()
    else {
      outer.addEventListener('abort', follow, { once: true })
      unlink = () => outer.removeEventListener('abort', follow)
    }
  }
  let markEnded!: () => void
  const ended = new Promise<void>((resolve) => {
    markEnded = () => {
      unlink()
      if (runningOn.get(session) === core) runningOn.delete(session)
      resolve()
    }
  })
  const schemas = catalogOf(ctx.get('tools'), core.ownTools)
  const run: TurnRun & { turn: number; toolSet: ToolSet } = {
    turn: 0,
    controller,
    schemas,
    toolSet: {},
    initialAssistants: assistantCount(initial),
    openStep: undefined,
    steps: 0,
    lastCalls: 0,
    unanswered: new Map(),
    chain: Promise.resolve(),
    failure: undefined,
    ending: undefined,
    ended,
    markEnded,
    freshes: [],
    decided: new Map(),
    settled: [],
  }
  // Claimed before the first await, so a second call (of this agent or another on the session) sees it.
  core.current = run
  runningOn.set(session, core)
  let started = false
  const taken = prompt === undefined ? [] : core.steered.take()
  let logged = 0
  try {
    // A disposed agent's turn on this session is still closing: wait for its own turn/end.
    if (otherRun !== undefined) await otherRun.ended
    // A turn the log leaves open, no agent of this process running it (checked above): a dead process's.
    // Closed as the store closes one at open (one implementation, in the seams): step/end, turn/end interrupted.
    // Only with a turn open: an open question with none is this process's own (the store settled the dead ones at open).
    if (openTurnOf(session.events) !== undefined)
      await closeInterruptedTurn(session, (message) => ctx.logger.warn(`agent ${agent.id}: ${message}`))
    run.turn = nextTurn(session.events)
    run.toolSet = toolSetOf(
      schemas,
      (name, input, toolCallId, signal) => runToolCall(core, run, name, input, toolCallId, signal),
      approvalGate(core, run),
    )
    await session.append('turn/start', { turn: run.turn })
    started = true
    freshSessions.delete(session)
    for (const request of pending) {
      const answer = answers.get(request.approvalId)
      const response: PlanModeApprovalResponse = {
        approvalId: request.approvalId,
        toolCallId: request.toolCallId,
        approved: answer?.approved === true,
        ...(answer?.reason === undefined ? {} : { reason: answer.reason }),
        answered: answer !== undefined,
      }
      await session.append('ai-sdk/approval-response', response)
      // An approved call runs now, through the waterfall as any call does: the mode of this moment decides.
      const result = response.approved
        ? await runToolCall(core, run, request.toolName, request.input, request.toolCallId, undefined)
        : await logDenied(core, run, request.toolCallId, request.toolName, deniedResult(response))
      run.settled.push({ response, toolName: request.toolName, input: request.input, result })
    }
    if (prompt !== undefined) {
      // Messages steered while no turn ran (the message of `/plan <message>`) were typed before this
      // prompt: they go first, in order. Without a prompt they are the first step's proposal instead.
      for (const message of taken) {
        await session.append('user/message', message)
        logged += 1
      }
      await session.append('user/message', userMessageOf(prompt))
    }
  } catch (error) {
    // What was steered and not logged waits for the next call.
    core.steered.restore(taken.slice(logged))
    if (started) {
      try {
        await session.append('turn/end', { turn: run.turn, reason: 'error', error: messageOf(error) })
      } catch (failure) {
        ctx.logger.error(`agent ${agent.id}: could not close turn ${run.turn} after its prompt was refused`, failure)
      }
    }
    core.current = undefined
    markEnded()
    throw error
  }
  return run
}

/**
 * Runs one tool call after the turn's earlier calls — one of the agent's own
 * tools through the `tool/execute` waterfall, any other through the `tools`
 * registry (argument check, waterfall, the tool) — and logs its result,
 * unless the turn's end already answered the call. A refused `tool/result`
 * fails the turn ({@link failRun}).
 */
function runToolCall(
  core: AgentCore,
  run: TurnRun,
  name: string,
  input: unknown,
  toolCallId: string,
  signal: AbortSignal | undefined,
): Promise<ToolResult> {
  const next = run.chain.then(async () => {
    const execution = { agent: core.agent, signal: signal ?? run.controller.signal, toolCallId }
    const own = core.ownTools.get(name)
    const registry = core.ctx.get('tools')
    const decided = run.decided.get(toolCallId)
    run.decided.delete(toolCallId)
    const result = run.controller.signal.aborted
      ? failed('the turn was cancelled before this call ran')
      : decided !== undefined
        ? decided
        : own !== undefined
          ? await executeOwnTool(core.ctx, own, input, execution)
          : registry !== undefined
            ? await registry.execute(name, input, execution)
            : failed(`unknown tool "${name}"`)
    const answeredByEnd = run.ending !== undefined && !run.unanswered.has(toolCallId)
    if (!answeredByEnd) {
      try {
        await logToolResult(core, run, toolCallId, name, result)
      } catch (error) {
        failRun(core, run, error)
      }
    }
    return result
  })
  run.chain = next.catch(() => undefined)
  return next
}

/** Logs the failed result of a call whose approval was denied (a refused append fails the turn). */
async function logDenied(core: AgentCore, run: TurnRun, toolCallId: string, toolName: string, result: ToolResult): Promise<ToolResult> {
  await logToolResult(core, run, toolCallId, toolName, result)
  return result
}

/**
 * The approval checks of a turn's calls (the SDK's `needsApproval`), for the
 * agent's own tools that have one: the tool's own `needsApproval` first;
 * when it asks, the call is admitted as it would be run (input check, the
 * `tool/execute` waterfall) before anyone is asked. A call the admission
 * refuses needs no approval: it fails with the refusal (plan-guard's text
 * in plan mode), which {@link runToolCall} takes from `run.decided`. A
 * `needsApproval` that throws fails the call the same way.
 */
function approvalGate(core: AgentCore, run: TurnRun): ApprovalGate {
  return (name) => {
    const own = core.ownTools.get(name)
    const asks = own?.needsApproval
    if (own === undefined || asks === undefined) return undefined
    return async (input, question) => {
      let needed: boolean
      try {
        needed = await asks(input, question)
      } catch (error) {
        run.decided.set(question.toolCallId, failed(`needsApproval of tool "${name}" failed: ${messageOf(error)}`))
        return false
      }
      if (!needed) return false
      const admission = await admitOwnTool(core.ctx, own, input, {
        agent: core.agent,
        signal: run.controller.signal,
        toolCallId: question.toolCallId,
      })
      if (admission.kind === 'run') return true
      run.decided.set(question.toolCallId, admission.result)
      return false
    }
  }
}

/**
 * Ends a turn once: closes its open step (a failed result for every call
 * still unanswered, then `step/end`), logs the messages steered after its
 * last pre-step, then `turn/end`, then starts the fresh sessions the turn's
 * handoffs asked for. Each append is tried on its own, so a refused one
 * does not keep `turn/end` out. Never rejects: a refused append is
 * reported through `logger.error`.
 */
export function endTurn(core: AgentCore, run: TurnRun, outcome: TurnOutcome): Promise<void> {
  const { session, ctx, agent } = core
  const attempt = async (what: string, append: () => Promise<unknown>): Promise<void> => {
    try {
      await append()
    } catch (failure) {
      ctx.logger.error(`agent ${agent.id}: could not log ${what} of turn ${run.turn}`, failure)
    }
  }
  run.ending ??= (async () => {
    try {
      if (run.openStep !== undefined) {
        const step = run.openStep
        run.openStep = undefined
        for (const [toolCallId, toolName] of [...run.unanswered]) {
          // A call whose own result was logged while this loop awaited is answered already.
          if (!run.unanswered.has(toolCallId)) continue
          await attempt('a tool result', () =>
            logToolResult(core, run, toolCallId, toolName, failed('the turn ended before this call ran')),
          )
        }
        await attempt('step/end', () => session.append('step/end', { turn: run.turn, step }))
      }
      // Messages steered after the turn's last pre-step are logged now, so none lives only in memory
      // past its turn: the model reads them at the next call.
      for (const message of core.steered.take()) await attempt('a steered message', () => session.append('user/message', message))
      const { reason, error } = outcome
      await attempt('turn/end', () =>
        session.append('turn/end', error === undefined ? { turn: run.turn, reason } : { turn: run.turn, reason, error }),
      )
      // SPEC §18: the fresh sessions of the turn's handoffs exist, their first turns started, before the call returns.
      if (run.freshes.length > 0) await core.startFresh(run.freshes.splice(0))
    } finally {
      if (core.current === run) core.current = undefined
      run.markEnded()
    }
  })()
  return run.ending
}

/** The outcome of a turn whose SDK call failed with `failure`. */
export function failedOutcome(run: TurnRun, failure: unknown): TurnOutcome {
  if (run.failure !== undefined) return { reason: 'error', error: messageOf(run.failure) }
  if (PlanModeAgentError.isInstance(failure) && failure.code === 'REJECTED') return { reason: 'rejected' }
  if (run.controller.signal.aborted) return { reason: 'cancelled' }
  return { reason: 'error', error: messageOf(failure) }
}

/** The outcome of a turn whose SDK call finished: `step-limit` when its last allowed step still called tools. */
export function finishedOutcome(core: AgentCore, run: TurnRun): TurnOutcome {
  // A turn stopped by a handoff to a fresh session is complete, even at the step limit.
  return { reason: run.lastCalls > 0 && run.steps >= core.maxSteps && run.freshes.length === 0 ? 'step-limit' : 'completed' }
}
