import { randomUUID } from 'node:crypto'
import type { Agent, QuestionSettled, UserAnswer, UserQuestionProvider, UserQuestions } from '@planmode/seams'
import { personTextProblem, UserQuestionError } from '@planmode/seams'

const aborted = (): UserQuestionError => new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered')

/**
 * The user-questions seam. `ask` refuses, in this order: an agent owned by a
 * live agent (`NOT_ROOT_AGENT`), no provider (`NO_PROVIDER`), an aborted
 * signal (`ASK_ABORTED`, also while the provider is answering). The latest
 * provider wins; its disposer brings back the one before. Every ask that
 * passes them is logged: `question/asked` before the provider is asked,
 * `question/settled` (answered, cancelled or failed) before `ask` settles;
 * a failing append rejects the ask with its error. Answers whose text may
 * not be logged (SPEC §22.4: a lone surrogate, U+0000, or a `by` that is
 * not a name a person may have) settle the ask `failed` and reject it with
 * `INVALID_ANSWER`, naming the member at fault.
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
      const isAborted = (): boolean => signal?.aborted === true
      if (isAborted()) throw aborted()
      const questionId = randomUUID()
      await agent.session.append('question/asked', { questionId, agent: agent.id, question: request.questions })
      const settle = (how: Omit<QuestionSettled, 'questionId'>) => agent.session.append('question/settled', { questionId, ...how })
      let answer: readonly UserAnswer[]
      try {
        if (isAborted()) throw aborted()
        const asked = entry.provider.ask(request)
        answer = await (signal === undefined
          ? asked
          : Promise.race([
              asked,
              new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(aborted()), { once: true })),
            ]))
      } catch (error) {
        const cancelled = isAborted() || (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED')
        await settle(
          cancelled ? { outcome: 'cancelled' } : { outcome: 'failed', error: error instanceof Error ? error.message : String(error) },
        )
        throw error
      }
      const problem = personTextProblem(answer)
      if (problem !== undefined) {
        const refused = new UserQuestionError('INVALID_ANSWER', `the answer cannot be logged: ${problem}`, {
          member: problem.slice(0, problem.indexOf(' ')),
        })
        await settle({ outcome: 'failed', error: refused.message }) // nothing of the answers reaches the log
        throw refused
      }
      const by = answer.find((one) => one.by !== undefined)?.by
      await settle({ outcome: 'answered', answer, ...(by === undefined ? {} : { by }) })
      return answer
    },
  }
}
