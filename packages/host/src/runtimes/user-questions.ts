import type { Disposer, Plugin } from '@planmode/context'
import type { Agent, AskRequest, UserAnswer, UserQuestionProvider, UserQuestions } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import { untilAborted } from '../until-aborted.js'

/** The message of a `NO_PROVIDER` refusal. */
const NO_PROVIDER = 'no user-questions provider is registered'

function aborted(signal: AbortSignal): UserQuestionError {
  return new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered', { cause: signal.reason })
}

/**
 * Provides service `userQuestions`. `ask` refuses, in this order: an agent
 * whose `owner` is a live agent (`NOT_ROOT_AGENT`; "live" = still in the
 * `agents` registry and not disposed, or any owner when no registry is
 * composed), no registered provider (`NO_PROVIDER`), an aborted signal
 * (`ASK_ABORTED`, also when it aborts while the provider is answering). A
 * provider's own rejection passes through. The latest provider wins; its
 * disposer restores the previous one.
 *
 * @public
 */
export const userQuestionsPlugin: Plugin = {
  name: '@planmode/host/user-questions',
  apply(ctx) {
    const providers: UserQuestionProvider[] = []
    const isLive = (owner: Agent): boolean => {
      if ((owner as { disposed?: unknown }).disposed === true) return false
      const agents = ctx.get('agents')
      return agents === undefined || agents.get(owner.id) === owner
    }
    const service: UserQuestions = {
      registerProvider(provider: UserQuestionProvider): Disposer {
        if (typeof provider?.ask !== 'function') throw new TypeError('userQuestions.registerProvider: provider.ask must be a function')
        const entry = { ask: provider.ask.bind(provider) }
        providers.push(entry)
        return () => {
          const index = providers.indexOf(entry)
          if (index >= 0) providers.splice(index, 1)
        }
      },
      async ask(request: AskRequest): Promise<readonly UserAnswer[]> {
        const owner = request.agent.owner
        if (owner !== undefined && isLive(owner)) {
          throw new UserQuestionError(
            'NOT_ROOT_AGENT',
            `agent ${request.agent.id} is a child of agent ${owner.id} and cannot ask the user; ` +
              'put the open decision in your final result so that the agent that started you can decide or ask',
          )
        }
        const provider = providers[providers.length - 1]
        if (provider === undefined) throw new UserQuestionError('NO_PROVIDER', NO_PROVIDER)
        const signal = request.signal
        if (signal?.aborted === true) throw aborted(signal)
        return untilAborted(provider.ask(request), signal, aborted)
      },
    }
    ctx.provide('userQuestions', service)
  },
}
