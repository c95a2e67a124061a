import { closeInterruptedTurn, openTurnOf, type PreStepDecision, type TurnEndReason, type UserMessage } from '@planmode/seams'
import type { TurnOutcome } from './agent-types.js'
import { messageOf } from '../error-text.js'
import { runStep } from './step.js'
import type { TurnHost, TurnState } from './turn-host.js'

/**
 * Closes a turn the log leaves open — the process that ran it ended
 * mid-turn and the session's store did not close it at open — with the
 * questions it left open, unless an agent of this registry is running a
 * turn on the session right now. With no turn open it does nothing: an
 * open question is then this process's own (the store settled the dead
 * ones at open).
 */
async function closeLeftOpenTurn(host: TurnHost): Promise<void> {
  const { agent, ctx } = host
  if (host.peerRunning() || openTurnOf(agent.session.events) === undefined) return
  await closeInterruptedTurn(agent.session, (message) => ctx.logger.warn(`agent ${agent.id}: ${message}`))
}

function checkDecision(decision: PreStepDecision): void {
  const ok =
    decision !== null &&
    typeof decision === 'object' &&
    ((decision.kind === 'enter' && Array.isArray(decision.messages)) || (decision.kind === 'reject' && typeof decision.reason === 'string'))
  if (!ok) throw new TypeError(`agent/pre-step returned ${JSON.stringify(decision)}, not a pre-step decision`)
}

/**
 * Logs the steered messages no step took — the batch a running pre-step
 * holds first, then the waiting ones, oldest first — as `user/message`. The
 * appends are queued at once, in order, before this returns, so nothing
 * appended later can come between them. A message the store refuses is
 * dropped with an error in the log.
 */
export function logSteered(host: TurnHost): Promise<void> {
  const { agent, ctx } = host
  return Promise.all(
    host.steered
      .takeAll()
      .map((message) =>
        agent.session
          .append('user/message', message)
          .catch((error: unknown) => ctx.logger.error(`agent ${agent.id}: could not log a steered message`, error)),
      ),
  ).then(() => undefined)
}

/**
 * Runs one turn: `turn/start`, the initial message, then steps — each a
 * pre-step waterfall, then {@link runStep} — until the model stops calling
 * tools with no steered message waiting, a handoff to a fresh session (the
 * turn ends `completed` after the step that asked for it), the step limit,
 * a cancel, a rejection or a failure; always ends with exactly one
 * `turn/end`. Never rejects.
 */
export async function runTurn(host: TurnHost, turn: number, initial: UserMessage | undefined, signal: AbortSignal): Promise<TurnOutcome> {
  const { ctx, agent, steered } = host
  const session = agent.session
  let steps = 0
  let rejection: string | undefined
  const state: TurnState = { openStep: undefined }
  const end = async (reason: TurnEndReason, error?: string): Promise<TurnOutcome> => {
    if (state.openStep !== undefined) {
      const step = state.openStep
      state.openStep = undefined
      await session
        .append('step/end', { turn, step })
        .catch((e: unknown) => ctx.logger.error(`agent ${agent.id}: could not close step ${step}`, e))
    }
    // A completed turn took every steered message; any other end logs the ones no step took (the batch
    // a failed or rejected pre-step was proposed included), so they stay durable and ahead of whatever
    // the user sends next.
    if (reason !== 'completed') await logSteered(host)
    await session
      .append('turn/end', error === undefined ? { turn, reason } : { turn, reason, error })
      .catch((e: unknown) => ctx.logger.error(`agent ${agent.id}: could not log turn/end of turn ${turn}`, e))
    return {
      turn,
      reason,
      steps,
      ...(error === undefined ? {} : { error }),
      ...(rejection === undefined ? {} : { rejection }),
    }
  }
  try {
    await closeLeftOpenTurn(host)
    await session.append('turn/start', { turn })
    if (initial !== undefined) {
      // Messages steered into the turn before this one, which ended before a step took them (they came
      // while it logged its end): they were meant for that turn, so they go before this turn's own message.
      // Both are queued before anything awaits, so nothing can come between them.
      const early = logSteered(host)
      await Promise.all([early, session.append('user/message', initial)])
    }
    for (;;) {
      if (signal.aborted) return await end('cancelled')
      if (steps >= host.maxSteps) return await end('step-limit')
      const step = steps + 1
      // The proposed messages stay in flight until the decision's messages are queued for logging:
      // a dispose while the waterfall runs (a listener may await an append) logs them itself, and a
      // failed or rejected pre-step leaves them for the turn's end to log.
      const proposed = steered.propose()
      const decision: PreStepDecision = await ctx.waterfall(
        'agent/pre-step',
        { agent, turn, step, signal, messages: [...proposed] },
        async (payload): Promise<PreStepDecision> => ({ kind: 'enter', messages: payload.messages }),
      )
      checkDecision(decision)
      if (!steered.holds(proposed)) {
        // Disposed while the waterfall ran: the agent's dispose logged the proposed messages already.
        // A listener's own messages (a notice about state it logged meanwhile) are logged still, after them.
        if (decision.kind === 'enter') {
          const own = decision.messages.filter((message) => !proposed.includes(message))
          await Promise.all(own.map((message) => session.append('user/message', message)))
        }
        return await end('cancelled')
      }
      if (decision.kind === 'reject') {
        rejection = decision.reason
        ctx.logger.info(`agent ${agent.id}: step ${step} of turn ${turn} rejected: ${decision.reason}`)
        return await end('rejected')
      }
      // The decision's messages are logged even when the turn was cancelled while the waterfall ran:
      // steered ones are durable, and a listener's notice is about state it already logged. They are
      // queued at once, before the batch leaves the in-flight list, so a dispose from here on logs only
      // messages steered later, after these.
      const logging = decision.messages.map((message) => session.append('user/message', message))
      steered.settle(proposed)
      await Promise.all(logging)
      if (signal.aborted) return await end('cancelled')
      steps = step

      const result = await runStep(host, turn, step, state, signal)
      if (result.kind === 'cancelled') return await end('cancelled')
      if (result.kind === 'error') return await end('error', result.message)
      if (signal.aborted) return await end('cancelled')
      // A handoff to a fresh session (SPEC §18): no further request in this turn once the step that ran the tool ends.
      if (host.handingOff()) return await end('completed')
      if (result.calls === 0 && steered.waitingCount === 0) return await end('completed')
    }
  } catch (error) {
    ctx.logger.error(`agent ${agent.id}: turn ${turn} failed`, error)
    return await end(signal.aborted ? 'cancelled' : 'error', signal.aborted ? undefined : messageOf(error))
  }
}
