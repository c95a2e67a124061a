import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import type { Agent, Session, UserMessage } from '@planmode/seams'
import { runTurn } from './step-loop.js'

/** An agent of the example: the seams' `Agent` plus what a host drives it with. */
export interface OwnAgent extends Agent {
  /** Sends a typed message (a turn starts when the agent is idle) and resolves once the agent is idle again. */
  prompt(text: string): Promise<void>
  /** Resolves once no turn runs and none is waiting. */
  idle(): Promise<void>
  /** Cancels the running turn (it ends `cancelled`). */
  cancel(): void
  /** Cancels the running turn for good and refuses new messages; a disposed owner no longer counts as live. */
  dispose(): void
  /** Whether `dispose` was called. */
  readonly disposed: boolean
  /** The model of the agent's requests, read at every step: a handoff with a model switches it from the next step on. */
  model: LanguageModelV3
  /** Starts a turn with no user message of its own (a handoff's new session: the layers' pre-step gives the first message). */
  begin(): void
  /** Ends the running turn after its step and then runs `next` (at once when idle): a handoff to a fresh session. */
  handOff(next: () => Promise<void>): void
}

/**
 * Creates an agent over `session`. Steered messages queue up; steering an
 * idle agent starts a turn, and turns run one after another while messages
 * wait (a message steered mid-turn is taken by that turn's next step).
 */
export function createAgent(ctx: Context, model: LanguageModelV3, session: Session, id: string, owner?: Agent): OwnAgent {
  const steered: UserMessage[] = []
  const handoffs: (() => Promise<void>)[] = []
  let unprompted = false
  let running: Promise<void> | undefined
  let controller = new AbortController()
  let disposed = false
  const runTurns = async (): Promise<void> => {
    try {
      while ((steered.length > 0 || unprompted) && !disposed) {
        unprompted = false
        await runTurn(ctx, agent, steered, (controller = new AbortController()).signal, () => handoffs.length > 0)
        for (const next of handoffs.splice(0)) await next() // the turn that handed off has ended
      }
    } catch (error) {
      ctx.logger.error(`agent ${id}: a turn could not be logged to the end`, error) // the log refused an append
    } finally {
      running = undefined
    }
  }
  const agent: OwnAgent = {
    id,
    session,
    ...(owner === undefined ? {} : { owner }),
    model,
    get disposed() {
      return disposed
    },
    begin() {
      unprompted = true
      running ??= runTurns()
    },
    handOff(next) {
      if (running === undefined) void next()
      else handoffs.push(next)
    },
    steer(message) {
      if (disposed) throw new Error(`agent ${id} was disposed`)
      steered.push(message)
      running ??= runTurns()
    },
    inject: async (message) => void (await session.append('user/message', message)),
    prompt(text) {
      agent.steer({ content: [{ type: 'text', text }], source: { kind: 'user' } })
      return agent.idle()
    },
    idle: () => running ?? Promise.resolve(),
    cancel: () => controller.abort(new Error(`agent ${id}: turn cancelled`)),
    dispose() {
      disposed = true
      agent.cancel()
    },
  }
  return agent
}
