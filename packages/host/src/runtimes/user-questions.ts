import type { Disposer, Logger, Plugin } from '@planmode/context'
import type { Agent, AskRequest, QuestionSettled, UserAnswer, UserQuestionProvider, UserQuestions } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import { answerTextProblem, NOTHING_OPENED, type OpenedQuestion } from '@planmode/store'
import { messageOf } from '../error-text.js'
import { newId } from '../ids.js'
import { untilAborted } from '../until-aborted.js'
import { AskRace, type AskWinner } from './ask-race.js'

/** The message of a `NO_PROVIDER` refusal. */
const NO_PROVIDER = 'no user-questions provider is registered'

function aborted(signal: AbortSignal): UserQuestionError {
  return new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered', { cause: signal.reason })
}

/**
 * The settlement of an answered ask: the answers as given, the first `by`
 * one of them names, and the submission when another process sent them.
 */
function answered(questionId: string, winner: AskWinner): QuestionSettled {
  const { answers } = winner
  const by = Array.isArray(answers) ? answers.find((answer) => answer?.by !== undefined)?.by : undefined
  return {
    questionId,
    outcome: 'answered',
    answer: answers,
    ...(by === undefined ? {} : { by }),
    ...(winner.kind === 'remote' ? { submission: winner.submission } : {}),
  }
}

/** The settlement of an ask that rejected with `error`: `cancelled` for a dismissal or an abort, else `failed`. */
function rejected(questionId: string, error: unknown, signal: AbortSignal | undefined): QuestionSettled {
  const cancelled = signal?.aborted === true || (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED')
  return cancelled ? { questionId, outcome: 'cancelled' } : { questionId, outcome: 'failed', error: messageOf(error) }
}

/**
 * The refusal of the writer's own provider's answers when their text may
 * not be logged (SPEC §22.4), or `undefined`. Answers from other processes
 * were checked when they were offered (`AskRace.offer`).
 */
function unloggable(winner: AskWinner): UserQuestionError | undefined {
  if (winner.kind !== 'local') return undefined
  const problem = answerTextProblem(winner.answers)
  if (problem === undefined) return undefined
  return new UserQuestionError('INVALID_ANSWER', `the answer cannot be logged: ${problem.message}`, { member: problem.member })
}

/** A signal that aborts when `signal` (if any) or `lost` does. */
function anySignal(signal: AbortSignal | undefined, lost: AbortSignal): AbortSignal {
  return signal === undefined ? lost : AbortSignal.any([signal, lost])
}

/**
 * Logs how an ask ended. A failing append rejects with the append's error:
 * the caller learns the ask is not settled in the log (the store owes it a
 * settlement: `failed` at its next successful append, or `interrupted` by
 * the next writer to open the session), and what the provider gave goes to
 * `logger.error`, so nothing is lost.
 */
async function logSettled(agent: Agent, settled: QuestionSettled, logger: Logger, race: AskRace): Promise<void> {
  try {
    race.settled({ logged: await agent.session.append('question/settled', settled) })
  } catch (error) {
    race.settled({ failed: error })
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
 * with the message of any other rejection. The provider's answers are
 * checked first (SPEC §22.4, `@planmode/store`'s `answerTextProblem`):
 * answers whose text may not be logged (a lone surrogate or U+0000 in any
 * string, a `by` that is not a name a person may have) settle the ask
 * `failed`, log nothing of the answers, and reject it with
 * `UserQuestionError` `INVALID_ANSWER` (its `member` names the member at
 * fault). Answers from other processes are checked when they arrive
 * (`checkAnswers`, `checkAnswerer`): a bad one is refused `INVALID_ANSWER`
 * and the question stays open. A failing `question/settled` append rejects
 * the ask with the append's error, whatever the provider did, and
 * `logger.error` gets the settlement that could not be logged, answers
 * included; the store owes the question a settlement (`failed`, at its
 * next successful append; `interrupted` by the next writer to open the
 * session, if this one never appends again).
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
    /** Opens the ask to answers from other processes when the store offers a desk; a desk that fails is a warning. */
    const openToOthers = async (agent: Agent, questionId: string, race: AskRace): Promise<{ opened: OpenedQuestion; remote: boolean }> => {
      const desk = ctx.get('answerDesk')
      if (desk === undefined) return { opened: NOTHING_OPENED, remote: false }
      try {
        const opened = await desk.open(agent.session, questionId, (incoming) => race.offer(incoming))
        return { opened, remote: opened !== NOTHING_OPENED }
      } catch (error) {
        ctx.logger.warn(
          `user-questions: question ${questionId} of session ${agent.session.id} takes no answers from other processes: ${messageOf(error)}`,
        )
        return { opened: NOTHING_OPENED, remote: false }
      }
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
        const race = new AskRace(agent.session.id, questionId, request.questions)
        // Open to answers from other processes before the ask is in the log, so none who read it finds nobody there.
        const desk = await openToOthers(agent, questionId, race)
        try {
          await agent.session.append('question/asked', { questionId, agent: agent.id, question: request.questions })
        } catch (error) {
          race.notAsked()
          await desk.opened.close()
          throw error
        }
        race.asked()
        let winner: AskWinner
        try {
          // Aborted while the question was being logged: settled without asking anyone.
          if (isAborted()) throw aborted(signal!)
          const asked = desk.remote ? provider.ask({ ...request, signal: anySignal(signal, race.lost.signal) }) : provider.ask(request)
          winner = await race.run(untilAborted(asked, signal, aborted))
        } catch (error) {
          race.end()
          await logSettled(agent, rejected(questionId, error, signal), ctx.logger, race).finally(() => desk.opened.close())
          throw error
        }
        const refused = unloggable(winner)
        if (refused !== undefined) {
          // Nothing of the answers is logged: the ask failed, as a provider's rejection does.
          await logSettled(agent, { questionId, outcome: 'failed', error: refused.message }, ctx.logger, race).finally(() =>
            desk.opened.close(),
          )
          throw refused
        }
        await logSettled(agent, answered(questionId, winner), ctx.logger, race).finally(() => desk.opened.close())
        return winner.answers
      },
    }
    ctx.provide('userQuestions', service)
  },
}
