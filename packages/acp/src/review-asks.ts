import type { ToolCallUpdate } from '@agentclientprotocol/sdk'
import type { Logger } from '@planmode/context'
import { planTitle } from '@planmode/plan-core'
import {
  UserQuestionError,
  openQuestionsOf,
  type AskRequest,
  type UserAnswer,
  type UserQuestion,
  type UserQuestionProvider,
} from '@planmode/seams'
import type { ClientLink } from './client-link.js'
import { permissionQuestion } from './review-options.js'
import type { ServedSession } from './served-session.js'

/** Where the provider finds a client to ask about a session: once a client serves it and may be asked. */
export interface AskableClients {
  /** Resolves with the session's served state and the client to ask, as soon as there is one; rejects when `signal` aborts first. */
  askable(sessionId: string, signal: AbortSignal | undefined): Promise<{ served: ServedSession; link: ClientLink }>
}

const FEEDBACK_MESSAGE = 'What should change in the plan? The agent revises it and presents it again (leave it empty to say nothing more).'

function aborted(signal: AbortSignal): UserQuestionError {
  return new UserQuestionError('ASK_ABORTED', 'the question was withdrawn before the ACP client answered', { cause: signal.reason })
}

function dismissed(why: string): UserQuestionError {
  return new UserQuestionError('ASK_CANCELLED', `the review was dismissed in the ACP client (${why})`)
}

/** The `questionId` of the ask `agent` is making: its latest question left open in the log. */
function openQuestionOf(request: AskRequest): string | undefined {
  return openQuestionsOf(request.agent.session.events)
    .filter((asked) => asked.data.agent === request.agent.id)
    .at(-1)?.data.questionId
}

/**
 * The user-questions provider of `@planmode/acp`: each question of a root
 * agent's ask becomes `session/request_permission` for the tool call that
 * asked it, sent to the client attached last to the agent's session (and,
 * while none is, to the first that attaches). Keep planning is followed by
 * a form elicitation for feedback when the client takes one.
 *
 * Never an approval but by an option the person chose: a `cancelled`
 * outcome (without the ask's signal aborting: `session/cancel` aborts it
 * first), an option id the request did not offer, and an error response
 * are dismissals (`ASK_CANCELLED`), the last two with a warning. A client
 * that disconnects leaves the question open for the next one. When the
 * ask's signal aborts (the turn was cancelled, or another process answered
 * first), the pending request is cancelled (`$/cancel_request`) and its
 * later answer ignored.
 */
export class ReviewAsks implements UserQuestionProvider {
  constructor(
    private readonly clients: AskableClients,
    private readonly logger: Logger,
  ) {}

  async ask(request: AskRequest): Promise<readonly UserAnswer[]> {
    const { agent, signal } = request
    if (agent.owner !== undefined) {
      throw new UserQuestionError(
        'NOT_ROOT_AGENT',
        `agent ${agent.id} is a child agent: only the root agent of a session asks the ACP client`,
      )
    }
    const questionId = openQuestionOf(request)
    const answers: UserAnswer[] = []
    for (const question of request.questions) answers.push(await this.askOne(agent.session.id, questionId, question, signal))
    return answers
  }

  private async askOne(
    sessionId: string,
    questionId: string | undefined,
    question: UserQuestion,
    signal: AbortSignal | undefined,
  ): Promise<UserAnswer> {
    const permission = permissionQuestion(question)
    for (;;) {
      let asked: { served: ServedSession; link: ClientLink }
      try {
        asked = await this.clients.askable(sessionId, signal)
      } catch (error) {
        if (signal?.aborted === true) throw aborted(signal)
        throw error
      }
      const { served, link } = asked
      const toolCallId = (questionId === undefined ? undefined : served.updates.callOf(questionId)) ?? questionId ?? question.id
      const review = question.intent?.kind === 'plan-review'
      const toolCall: ToolCallUpdate = {
        toolCallId,
        title: review && question.detail !== undefined ? `${question.header}: ${planTitle(question.detail)}` : question.question,
        kind: 'switch_mode',
        status: 'pending',
        content: question.detail === undefined ? [] : [{ type: 'content', content: { type: 'text', text: question.detail } }],
      }
      let outcome
      try {
        outcome = (
          await link.call((client) =>
            client.request(
              'session/request_permission',
              { sessionId, toolCall, options: permission.options },
              { ...(signal === undefined ? {} : { cancellationSignal: signal }), stopWaitingOnCancel: true },
            ),
          )
        ).outcome
      } catch (error) {
        if (signal?.aborted === true) throw aborted(signal)
        // Gone before it answered: the question stays open for the next client that loads the session.
        if (link.closed) continue
        this.logger.warn(
          `acp: client ${link.id} answered the permission request for ${toolCallId} with an error; the review counts as dismissed: ${error instanceof Error ? error.message : String(error)}`,
        )
        throw dismissed('the client answered with an error')
      }
      if (outcome.outcome === 'cancelled') {
        if (signal?.aborted === true) throw aborted(signal)
        throw dismissed('cancelled')
      }
      const optionId = outcome.outcome === 'selected' ? (outcome as { optionId: unknown }).optionId : undefined
      const choice = typeof optionId === 'string' ? permission.choice(optionId) : undefined
      if (choice === undefined) {
        this.logger.warn(
          `acp: client ${link.id} answered the permission request for ${toolCallId} with ${JSON.stringify(outcome)}, which it was not offered ` +
            `(offered: ${permission.options.map((option) => option.optionId).join(', ')}); the review counts as dismissed, never approved`,
        )
        throw dismissed('an outcome the agent did not offer')
      }
      if (!choice.keep || !link.formElicitation) return choice.answer
      const feedback = await this.feedback(link, sessionId, toolCallId, signal)
      return feedback === undefined ? choice.answer : { ...choice.answer, custom: feedback }
    }
  }

  /** Asks for Keep planning's feedback in a form; `undefined` when declined, cancelled, empty or failed. */
  private async feedback(
    link: ClientLink,
    sessionId: string,
    toolCallId: string,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    try {
      const result = await link.call((client) =>
        client.request(
          'elicitation/create',
          {
            mode: 'form',
            sessionId,
            toolCallId,
            message: FEEDBACK_MESSAGE,
            requestedSchema: {
              type: 'object',
              properties: {
                feedback: {
                  type: 'string',
                  title: 'Feedback',
                  description: 'What the agent should change before it presents the plan again.',
                },
              },
            },
          },
          { ...(signal === undefined ? {} : { cancellationSignal: signal }), stopWaitingOnCancel: true },
        ),
      )
      if (result.action !== 'accept') return undefined
      const value = (result as { content?: Record<string, unknown> | null }).content?.feedback
      return typeof value === 'string' && value.trim() !== '' ? value : undefined
    } catch (error) {
      if (signal?.aborted === true) throw aborted(signal)
      if (!link.closed)
        this.logger.warn(
          `acp: client ${link.id} could not take the feedback form for ${toolCallId}; keep planning without feedback: ${error instanceof Error ? error.message : String(error)}`,
        )
      return undefined
    }
  }
}
