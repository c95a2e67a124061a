import type { QuestionAnswerer, QuestionSettled, SessionEvent, UserAnswer, UserQuestion } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import { answererText, checkAnswerer, checkAnswers, SessionLogError, type AnswerDecision, type IncomingAnswer } from '@planmode/store'
import { messageOf } from '../error-text.js'

/** What won an ask: the local provider's answers, or an answer another process sent. */
export type AskWinner =
  | { readonly kind: 'local'; readonly answers: readonly UserAnswer[] }
  | {
      readonly kind: 'remote'
      readonly answers: readonly UserAnswer[]
      readonly submission: string
      readonly by: QuestionAnswerer | undefined
    }

/** How the ask's settlement ended: logged as this event, or not logged because of this error. */
type Settlement = { readonly logged: SessionEvent<'question/settled'> } | { readonly failed: unknown }

/**
 * One ask raced between the local provider and answers from other
 * processes (the store's answer desk). The first valid answer wins, in the
 * order they reach this process: JavaScript runs one at a time, so the
 * decision is made at once, before anything is awaited. The losing side is
 * told: a provider by its request's signal (aborted), a submission by its
 * reply (`ALREADY_ANSWERED`, naming who answered, once the winner's
 * `question/settled` is logged). An answer that does not fit the questions
 * is refused (`INVALID_ANSWER`) and decides nothing.
 */
export class AskRace {
  private winner: 'local' | 'remote' | 'ended' | undefined
  private winningSubmission: string | undefined
  /** Aborts the provider's signal when a remote answer wins. */
  readonly lost = new AbortController()
  private resolveRemote!: (winner: AskWinner) => void
  private readonly remote = new Promise<AskWinner>((resolve) => (this.resolveRemote = resolve))
  private resolveReady!: (ready: boolean) => void
  /** Resolves `true` once the ask's `question/asked` is logged, `false` when it could not be. */
  private readonly ready = new Promise<boolean>((resolve) => (this.resolveReady = resolve))
  private resolveSettlement!: (settlement: Settlement) => void
  private readonly settlement = new Promise<Settlement>((resolve) => (this.resolveSettlement = resolve))

  constructor(
    private readonly sessionId: string,
    private readonly questionId: string,
    private readonly questions: readonly UserQuestion[],
  ) {}

  /** The ask is in the log: answers may now be decided. */
  asked(): void {
    this.resolveReady(true)
  }

  /** The ask could not be logged: every answer is refused as for an unknown question. */
  notAsked(): void {
    this.winner ??= 'ended'
    this.resolveReady(false)
  }

  /** The ask's `question/settled` was logged (or failed): every answer waiting to hear the outcome hears it. */
  settled(settlement: Settlement): void {
    this.winner ??= 'ended'
    this.resolveSettlement(settlement)
  }

  /**
   * Races `provider` (the local provider's answers) against remote answers.
   * Settles with the winner, or rejects like the provider when it rejects
   * first. Its rejection (or answers) after a remote answer won is ignored.
   */
  run(provider: Promise<readonly UserAnswer[]>): Promise<AskWinner> {
    const local = provider.then(
      (answers): AskWinner | undefined => {
        if (this.winner !== undefined) return undefined
        this.winner = 'local'
        return { kind: 'local', answers }
      },
      (error: unknown): never | undefined => {
        if (this.winner !== undefined) return undefined
        this.winner = 'local'
        throw error
      },
    )
    return new Promise<AskWinner>((resolve, reject) => {
      local.then((won) => won !== undefined && resolve(won), reject)
      void this.remote.then(resolve)
    })
  }

  /** Ends the race without a winner (the ask's signal aborted): later answers hear how the ask was settled. */
  end(): void {
    this.winner ??= 'ended'
  }

  /** Decides an answer another process sent. */
  async offer(incoming: IncomingAnswer): Promise<AnswerDecision> {
    const ready = await this.ready
    const name = `question ${this.questionId} of session ${this.sessionId}`
    if (!ready)
      return { status: 'refused', code: 'UNKNOWN_QUESTION', message: `${name} was never asked: its question/asked could not be logged` }
    if (this.winner !== undefined) return this.afterSettlement(incoming.submission)
    const checked = checkAnswers(this.questions, incoming.answers)
    if (!checked.ok)
      return {
        status: 'refused',
        code: 'INVALID_ANSWER',
        message: `the answer does not fit ${name}: ${checked.problem}; the question is still open`,
      }
    const who = checkAnswerer(incoming.by)
    if (!who.ok)
      return {
        status: 'refused',
        code: 'INVALID_ANSWER',
        message: `the answer to ${name} says who answered wrongly: ${who.problem}; the question is still open`,
      }
    // Decided now, before any await: the local provider's answer, should it come later, loses.
    this.winner = 'remote'
    this.winningSubmission = incoming.submission
    const by = who.by
    const answers = by === undefined ? checked.answers : checked.answers.map((answer) => ({ ...answer, by }))
    this.lost.abort(new UserQuestionError('ASK_ABORTED', `${name} was answered from another process by ${answererText(by)}`))
    this.resolveRemote({ kind: 'remote', answers, submission: incoming.submission, by })
    return this.afterSettlement(incoming.submission)
  }

  /** The decision for `submission` once the ask's settlement is known. */
  private async afterSettlement(submission: string): Promise<AnswerDecision> {
    const settlement = await this.settlement
    const name = `question ${this.questionId} of session ${this.sessionId}`
    if ('logged' in settlement) {
      const settled: QuestionSettled = settlement.logged.data
      if (settled.outcome === 'answered' && settled.submission === submission) return { status: 'accepted', seq: settlement.logged.seq }
      if (settled.outcome === 'answered') {
        return {
          status: 'refused',
          code: 'ALREADY_ANSWERED',
          message: `${name} was already answered by ${answererText(settled.by)}; this answer was not applied`,
          ...(settled.by === undefined ? {} : { by: settled.by }),
        }
      }
      return {
        status: 'refused',
        code: 'QUESTION_CLOSED',
        message: `${name} is closed: it was settled ${settled.outcome} before this answer was taken; this answer was not applied`,
      }
    }
    // The settlement could not be logged. Whether it landed is unknown only for OUTCOME_UNKNOWN: the desk settles that from the log.
    if (
      this.winningSubmission === submission &&
      SessionLogError.isInstance(settlement.failed) &&
      settlement.failed.code === 'OUTCOME_UNKNOWN'
    )
      return { status: 'unknown' }
    return {
      status: 'refused',
      code: 'QUESTION_CLOSED',
      message: `${name} is closed: its ask ended without a settlement in the log (${messageOf(settlement.failed)}); this answer was not applied`,
    }
  }
}
