import type { ToolResult, ToolSchema, TurnEndReason, UserMessage } from '@planmode/seams'
import type { ToolSet } from 'ai'
import type { AgentCore } from './agent-core.js'
import { PlanModeAgentError } from './plan-mode-agent-error.js'
import { jsonValue, nextTurn, openTurnOf } from './session-log.js'
import { toolSetOf } from './tool-set.js'
import { transcriptMessages } from './transcript.js'

/**
 * The `error` of the `turn/end` the agent appends, before its first turn, to
 * close a turn the log leaves open (the process that ran it ended mid-turn).
 *
 * @public
 */
export const INTERRUPTED_TURN_ERROR = 'interrupted: the process running this turn ended before the turn did'

/** One running turn: one `generate` or `stream` call. */
export interface TurnRun {
  readonly turn: number
  readonly controller: AbortController
  /** The tool catalog of this call, as the SDK received it (fixed for the call). */
  readonly schemas: readonly ToolSchema[]
  readonly toolSet: ToolSet
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
  /** Set once the turn's end is being logged. */
  ending: Promise<void> | undefined
  /** Resolves once `turn/end` is logged (or could not be). */
  readonly ended: Promise<void>
  /** Resolves `ended`. */
  readonly markEnded: () => void
}

/** How a turn ended, for its `turn/end`. */
export interface TurnOutcome {
  readonly reason: TurnEndReason
  readonly error?: string
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A failed tool result with the `Error: ` prefix the model reads. */
export function failed(message: string): ToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }] }
}

function userMessageOf(prompt: string | UserMessage): UserMessage {
  return typeof prompt === 'string' ? { content: [{ type: 'text', text: prompt }], source: { kind: 'user' } } : prompt
}

/** Logs one call's `tool/result` (its value only when JSON can hold it) and marks the call answered. */
export async function logToolResult(core: AgentCore, run: TurnRun, toolCallId: string, toolName: string, result: ToolResult): Promise<void> {
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

/**
 * Opens a turn: refuses a disposed or busy agent and a call with nothing to
 * send, closes a turn a dead process left open, snapshots the tool catalog
 * into the call's tool set, and logs `turn/start`, then (with a prompt) the
 * messages steered while no turn ran and the prompt.
 */
export async function openTurn(core: AgentCore, prompt: string | UserMessage | undefined, outer: AbortSignal | undefined): Promise<TurnRun> {
  const { agent, session, ctx } = core
  if (core.disposed) throw new PlanModeAgentError('DISPOSED', `agent ${agent.id} is disposed`)
  if (core.current !== undefined) throw new PlanModeAgentError('BUSY', `agent ${agent.id} is running turn ${core.current.turn}`)
  if (prompt === undefined && core.steered.size === 0 && transcriptMessages(session.events).length === 0) {
    throw new PlanModeAgentError('NOTHING_TO_SEND', `agent ${agent.id}: nothing to send (no prompt, no queued message, an empty transcript)`)
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
      resolve()
    }
  })
  const schemas = core.tools.schemas()
  const run: TurnRun & { turn: number; toolSet: ToolSet } = {
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
  core.current = run
  try {
    const open = openTurnOf(session.events)
    if (open !== undefined) {
      ctx.logger.warn(`agent ${agent.id}: closing turn ${open.turn} of session ${session.id}, left open by a process that ended mid-turn`)
      if (open.step !== undefined) await session.append('step/end', { turn: open.turn, step: open.step })
      await session.append('turn/end', { turn: open.turn, reason: 'error', error: INTERRUPTED_TURN_ERROR })
    }
    run.turn = nextTurn(session.events)
    run.toolSet = toolSetOf(schemas, (name, input, toolCallId, signal) => runToolCall(core, run, name, input, toolCallId, signal))
    await session.append('turn/start', { turn: run.turn })
    if (prompt !== undefined) {
      // Messages steered while no turn ran (the message of `/plan <message>`) were typed before this
      // prompt: they go first, in order. Without a prompt they are the first step's proposal instead.
      for (const message of core.steered.take()) await session.append('user/message', message)
      await session.append('user/message', userMessageOf(prompt))
    }
  } catch (error) {
    core.current = undefined
    markEnded()
    throw error
  }
  return run
}

/**
 * Runs one tool call through the registry (argument check, `tool/execute`
 * waterfall, the tool) after the turn's earlier calls, and logs its result —
 * unless the turn's end already answered the call.
 */
function runToolCall(core: AgentCore, run: TurnRun, name: string, input: unknown, toolCallId: string, signal: AbortSignal | undefined): Promise<ToolResult> {
  const next = run.chain.then(async () => {
    const result = run.controller.signal.aborted
      ? failed('the turn was cancelled before this call ran')
      : await core.tools.execute(name, input, { agent: core.agent, signal: signal ?? run.controller.signal, toolCallId })
    const answeredByEnd = run.ending !== undefined && !run.unanswered.has(toolCallId)
    if (!answeredByEnd) await logToolResult(core, run, toolCallId, name, result)
    return result
  })
  run.chain = next.catch(() => undefined)
  return next
}

/**
 * Ends a turn once: closes its open step (a failed result for every call
 * still unanswered, then `step/end`), logs the messages steered after its
 * last pre-step, then `turn/end`. Never rejects: a refused append is
 * reported through `logger.error`.
 */
export function endTurn(core: AgentCore, run: TurnRun, outcome: TurnOutcome): Promise<void> {
  const { session } = core
  run.ending ??= (async () => {
    try {
      if (run.openStep !== undefined) {
        const step = run.openStep
        run.openStep = undefined
        for (const [toolCallId, toolName] of [...run.unanswered]) await logToolResult(core, run, toolCallId, toolName, failed('the turn ended before this call ran'))
        await session.append('step/end', { turn: run.turn, step })
      }
      // Messages steered after the turn's last pre-step are logged now, so none lives only in memory
      // past its turn: the model reads them at the next call.
      for (const message of core.steered.take()) await session.append('user/message', message)
      const { reason, error } = outcome
      await session.append('turn/end', error === undefined ? { turn: run.turn, reason } : { turn: run.turn, reason, error })
    } catch (failure) {
      core.ctx.logger.error(`agent ${core.agent.id}: could not close turn ${run.turn}`, failure)
    } finally {
      if (core.current === run) core.current = undefined
      run.markEnded()
    }
  })()
  return run.ending
}

/** The outcome of a turn whose SDK call failed with `failure`. */
export function failedOutcome(run: TurnRun, failure: unknown): TurnOutcome {
  if (PlanModeAgentError.isInstance(failure) && failure.code === 'REJECTED') return { reason: 'rejected' }
  if (run.controller.signal.aborted) return { reason: 'cancelled' }
  return { reason: 'error', error: messageOf(failure) }
}

/** The outcome of a turn whose SDK call finished: `step-limit` when its last allowed step still called tools. */
export function finishedOutcome(core: AgentCore, run: TurnRun): TurnOutcome {
  return { reason: run.lastCalls > 0 && run.steps >= core.maxSteps ? 'step-limit' : 'completed' }
}
