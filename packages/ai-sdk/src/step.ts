import type { ModelMessage, PrepareStepResult, StepResult, ToolSet } from 'ai'
import { logRequestHeaderIfChanged, type AssistantContentBlock, type PreStepDecision } from '@planmode/seams'
import type { AgentCore } from './agent-core.js'
import type { AnswerSink } from './assistant-log.js'
import { PlanModeAgentError } from './plan-mode-agent-error.js'
import { withSdkMetadata } from './sdk-metadata.js'
import { transcriptMessages } from './transcript.js'
import { failRun, failed, logToolResult, messageOf, type TurnRun } from './turn.js'

function checkDecision(decision: PreStepDecision): void {
  const ok =
    decision !== null &&
    typeof decision === 'object' &&
    ((decision.kind === 'enter' && Array.isArray(decision.messages)) || (decision.kind === 'reject' && typeof decision.reason === 'string'))
  if (!ok) throw new TypeError(`agent/pre-step returned ${JSON.stringify(decision)}, not a pre-step decision`)
}

/**
 * The `prepareStep` of a turn: throws the failure a refused append left on
 * the run; the `agent/pre-step` waterfall with the steered messages (a
 * rejection throws `REJECTED`, which ends the SDK loop; the proposed
 * messages go back to the queue for the turn's end to log), the decision's
 * messages logged as user messages, the assembly (the `systemPrompt` and
 * `tools` services looked up afresh), `request/header` when it changed,
 * `step/start`, and the step's system text, messages (the log's transcript,
 * with the reasoning and provider options of the SDK's own messages of this
 * call) and active tools for the SDK.
 */
export function prepareStepOf(core: AgentCore, run: TurnRun) {
  const { ctx, agent, session, steered } = core
  return async ({ stepNumber, messages }: { stepNumber: number; messages: ModelMessage[] }): Promise<PrepareStepResult<ToolSet>> => {
    if (run.failure !== undefined) throw run.failure
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
      throw new PlanModeAgentError('REJECTED', `step ${step} of turn ${run.turn} was rejected: ${decision.reason}`, {
        reason: decision.reason,
      })
    }
    for (const message of decision.messages) await session.append('user/message', message)
    signal.throwIfAborted()
    run.steps = step
    // Looked up at every step: a service disposed and provided again (hot reload) is the one used.
    const systemPrompt = ctx.get('systemPrompt')
    const registry = ctx.get('tools')
    const system = systemPrompt !== undefined ? systemPrompt.assemble({ agent }).system : (core.system ?? '')
    // The SDK's tool set is fixed per call: a tool registered since the call began waits for the next
    // call, one removed since is left out of this step.
    const tools = run.schemas.filter((schema) => core.ownTools.has(schema.name) || registry?.get(schema.name) !== undefined)
    await logRequestHeaderIfChanged(session, { turn: run.turn, step, model: core.modelName, system, tools })
    await session.append('step/start', { turn: run.turn, step })
    run.openStep = step
    run.unanswered.clear()
    return {
      model: core.wrap(core.model),
      // Every step names its own system text, and an empty list when there is none. Left out, `ai` 6
      // falls back to the call's own (none), but `ai` 7 carries the previous step's override forward:
      // the plan section would outlive the approval that removed it.
      system: system === '' ? [] : system,
      messages: withSdkMetadata(transcriptMessages(session.events), messages, run.initialAssistants),
      activeTools: tools.map((schema) => schema.name),
    }
  }
}

/**
 * The answer sink of the model middleware: logs the open step's
 * `assistant/message` and remembers its client tool calls as unanswered.
 * `undefined` outside a step of this agent.
 */
export function answerSinkOf(core: AgentCore): () => AnswerSink | undefined {
  return () => {
    const run = core.current
    if (run === undefined || run.openStep === undefined) return undefined
    const step = run.openStep
    return {
      async log(content: readonly AssistantContentBlock[]) {
        for (const block of content) if (block.type === 'tool-call') run.unanswered.set(block.toolCallId, block.toolName)
        await core.session.append('assistant/message', { content, turn: run.turn, step })
      },
    }
  }
}

/**
 * The `onStepFinish` of a turn: after the step's calls, an
 * `ai-sdk/approval-request` for every call that waits for approval, a failed
 * result for every other call the SDK did not run (with the SDK's error when
 * it has one), then `step/end`. The SDK ignores what `onStepFinish` throws, so a refused
 * append fails the turn here ({@link failRun}); the open step is then
 * closed by the turn's end.
 */
export function onStepFinishOf(core: AgentCore, run: TurnRun) {
  return async (result: StepResult<ToolSet>): Promise<void> => {
    const step = run.openStep
    if (step === undefined) return
    try {
      await run.chain
      run.lastCalls = result.toolCalls.length
      if (run.failure !== undefined) return
      // A call that waits for approval is not failed: the log keeps the request, and the next call answers it.
      for (const part of result.content) {
        if (part.type !== 'tool-approval-request' || !run.unanswered.has(part.toolCall.toolCallId)) continue
        const { toolCallId, toolName } = part.toolCall
        run.unanswered.delete(toolCallId)
        await core.session.append('ai-sdk/approval-request', { approvalId: part.approvalId, toolCallId, toolName })
      }
      for (const [toolCallId, toolName] of [...run.unanswered]) {
        const problem = result.content.find((part) => part.type === 'tool-error' && part.toolCallId === toolCallId)
        const text = problem !== undefined && problem.type === 'tool-error' ? messageOf(problem.error) : 'the call did not run'
        await logToolResult(core, run, toolCallId, toolName, failed(text))
      }
      await core.session.append('step/end', { turn: run.turn, step })
      run.openStep = undefined
    } catch (error) {
      failRun(core, run, error)
    }
  }
}
