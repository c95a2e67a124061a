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
}

/**
 * Creates an agent over `session`. Steered messages queue up; steering an
 * idle agent starts a turn, and turns run one after another while messages
 * wait (a message steered mid-turn is taken by that turn's next step).
 */
export function createAgent(ctx: Context, model: LanguageModelV3, session: Session, id: string, owner?: Agent): OwnAgent {
  const steered: UserMessage[] = []
  let running: Promise<void> | undefined
  let controller = new AbortController()
  let disposed = false
  const runTurns = async (): Promise<void> => {
    try {
      while (steered.length > 0 && !disposed) await runTurn(ctx, model, agent, steered, (controller = new AbortController()).signal)
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
    get disposed() {
      return disposed
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
