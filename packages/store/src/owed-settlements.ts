import type { QuestionSettled, SessionEvent } from '@planmode/seams'
import type { PendingAppend } from './append-queue.js'
import { questionStateOf } from './question-state.js'

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The settlements one session owes (SPEC §22.4: a question is never left
 * open in the log with nobody waiting for it). When an append of
 * `question/settled` is refused (the write failed, the database refused
 * it, an invariant threw), the asking runtime has already given up on the
 * ask: nobody waits for the question any more. So the store owes it a
 * settlement, and pays at its next batch: each owed question the log still
 * leaves open is settled `failed` first, in the same write as the appends
 * that follow. If the store never writes again (the process dies, the log
 * stays unwritable), the next writer settles the question `interrupted`
 * when it opens the session ({@link closeInterruptedAtOpen}).
 *
 * Owed questions are kept in memory only: a store that restarts finds them
 * open in the log, and that is the rule above. A payment that fails is owed
 * again; one for a question the log shows settled by then (an append whose
 * outcome was unknown, and that landed) is dropped.
 *
 * @example
 * ```ts
 * append(type, data) {
 *   return this.owed.watch(type, data, this.queue.add(type, data))
 * }
 * commit(batch) {
 *   const all = [...this.owed.due(this.events), ...batch]
 *   // check, write and settle every append of `all`
 * }
 * ```
 *
 * @public
 */
export class OwedSettlements {
  /** Owed questions: id → why their settlement could not be appended. */
  private readonly owed = new Map<string, string>()

  /** How many questions are owed a settlement. */
  get size(): number {
    return this.owed.size
  }

  /**
   * `appended` (the append of `type`/`data`), watched: when it is a
   * `question/settled` and rejects, its question is owed. Resolves and
   * rejects as `appended` does.
   */
  watch<T>(type: string, data: unknown, appended: Promise<T>): Promise<T> {
    if (type !== 'question/settled') return appended
    const questionId = (data as { readonly questionId?: unknown } | null | undefined)?.questionId
    if (typeof questionId !== 'string') return appended
    return appended.then(undefined, (error: unknown) => {
      this.owed.set(questionId, messageOf(error))
      throw error
    })
  }

  /**
   * The appends that pay what is owed, to put first in the next batch: a
   * `question/settled` `failed` for each owed question still open in
   * `events`. They are no longer owed once handed out; one that is refused
   * again is owed again.
   */
  due(events: readonly SessionEvent[]): PendingAppend[] {
    if (this.owed.size === 0) return []
    const due: PendingAppend[] = []
    for (const [questionId, why] of [...this.owed]) {
      this.owed.delete(questionId)
      if (questionStateOf(events, questionId).state !== 'open') continue
      const data: QuestionSettled = { questionId, outcome: 'failed', error: `its settlement could not be logged (${why})` }
      due.push({ type: 'question/settled', data, resolve: () => {}, reject: (error) => void this.owed.set(questionId, messageOf(error)) })
    }
    return due
  }
}
