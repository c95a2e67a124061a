import type { Agent, UserQuestionProvider, UserQuestions } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'

const aborted = (): UserQuestionError => new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered')

/**
 * The user-questions seam. `ask` refuses, in this order: an agent owned by a
 * live agent (`NOT_ROOT_AGENT`), no provider (`NO_PROVIDER`), an aborted
 * signal (`ASK_ABORTED`, also while the provider is answering). The latest
 * provider wins; its disposer brings back the one before.
 */
export function createUserQuestions(isLive: (agent: Agent) => boolean): UserQuestions {
  const providers = new Set<{ provider: UserQuestionProvider }>()
  return {
    registerProvider(provider) {
      const entry = { provider }
      providers.add(entry)
      return () => void providers.delete(entry)
    },
    async ask(request) {
      const { agent, signal } = request
      if (agent.owner !== undefined && isLive(agent.owner)) {
        throw new UserQuestionError('NOT_ROOT_AGENT', `agent ${agent.id} is a child of agent ${agent.owner.id} and cannot ask the user`)
      }
      const entry = [...providers].at(-1)
      if (entry === undefined) throw new UserQuestionError('NO_PROVIDER', 'no user-questions provider is registered')
      if (signal?.aborted === true) throw aborted()
      const answer = entry.provider.ask(request)
      if (signal === undefined) return answer
      return Promise.race([answer, new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(aborted()), { once: true }))])
    },
  }
}
