import type { Disposer, Logger, Plugin } from '@planmode/context'
import type { Agent, AskRequest, QuestionSettled, UserAnswer, UserQuestionProvider, UserQuestions } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { newId } from '../ids.js'
import { untilAborted } from '../until-aborted.js'

/** The message of a `NO_PROVIDER` refusal. */
const NO_PROVIDER = 'no user-questions provider is registered'

function aborted(signal: AbortSignal): UserQuestionError {
  return new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered', { cause: signal.reason })
}

/** The settlement of an ask the provider answered: the answers as given, and the first `by` one of them names. */
function answered(questionId: string, answers: readonly UserAnswer[]): QuestionSettled {
  const by = Array.isArray(answers) ? answers.find((answer) => answer?.by !== undefined)?.by : undefined
  return { questionId, outcome: 'answered', answer: answers, ...(by === undefined ? {} : { by }) }
}

/** The settlement of an ask that rejected with `error`: `cancelled` for a dismissal or an abort, else `failed`. */
function rejected(questionId: string, error: unknown, signal: AbortSignal | undefined): QuestionSettled {
  const cancelled = signal?.aborted === true || (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED')
  return cancelled ? { questionId, outcome: 'cancelled' } : { questionId, outcome: 'failed', error: messageOf(error) }
}

/**
 * Logs how an ask ended. A failing append rejects with the append's error:
 * the caller learns the ask is not settled in the log (it stays open there,
 * and the next writer to open the session settles it `interrupted`), and
 * what the provider gave goes to `logger.error`, so nothing is lost.
 */
async function logSettled(agent: Agent, settled: QuestionSettled, logger: Logger): Promise<void> {
  try {
    await agent.session.append('question/settled', settled)
  } catch (error) {
    logger.error(
      `user-questions: could not log how question ${settled.questionId} of agent ${agent.id} ended (${settled.outcome}); ` +
        `the ask rejects with the log's error and the question stays open in the log: ${messageOf(error)}`,
      settled,
    )
    throw error
  }
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
 * @remarks
 * Every ask that passes the refusals is logged on the asking agent's
 * session (host duty `questions-in-log`):
 * `question/asked { questionId, agent, question }` first — a failing append rejects the ask
 * with the append's error and no provider is asked; a signal that aborted
 * meanwhile settles it `cancelled` without asking — then, before `ask`
 * settles, `question/settled`: `answered` with the provider's answers (and
 * `by`, the first one an answer names), `cancelled` for `ASK_CANCELLED` or
 * an aborted signal (at the abort, not when the provider gives up), `failed`
 * with the message of any other rejection. A failing `question/settled`
 * append rejects the ask with the append's error, whatever the provider
 * did: the question stays open in the log (the next writer to open the
 * session settles it `interrupted`), and `logger.error` gets the settlement
 * that could not be logged, answers included.
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
        const { agent, signal } = request
        const owner = agent.owner
        if (owner !== undefined && isLive(owner)) {
          throw new UserQuestionError(
            'NOT_ROOT_AGENT',
            `agent ${agent.id} is a child of agent ${owner.id} and cannot ask the user; ` +
              'put the open decision in your final result so that the agent that started you can decide or ask',
          )
        }
        const provider = providers[providers.length - 1]
        if (provider === undefined) throw new UserQuestionError('NO_PROVIDER', NO_PROVIDER)
        if (signal?.aborted === true) throw aborted(signal)
        const isAborted = (): boolean => signal?.aborted === true
        const questionId = newId('q')
        await agent.session.append('question/asked', { questionId, agent: agent.id, question: request.questions })
        let answers: readonly UserAnswer[]
        try {
          // Aborted while the question was being logged: settled without asking anyone.
          if (isAborted()) throw aborted(signal!)
          answers = await untilAborted(provider.ask(request), signal, aborted)
        } catch (error) {
          await logSettled(agent, rejected(questionId, error, signal), ctx.logger)
          throw error
        }
        await logSettled(agent, answered(questionId, answers), ctx.logger)
        return answers
      },
    }
    ctx.provide('userQuestions', service)
  },
}
