import type { Logger } from '@planmode/context'
import type { AnswerInbox } from '@planmode/seams'
import { ANSWER_POLL_MS, PostgresAnswerInbox } from './answer-inbox.js'
import { AnswerRows } from './answer-rows.js'
import { AnswerSignals } from './answer-signals.js'
import { endClient } from './client-end.js'
import { Database } from './database.js'
import { answersChannelOf, checkSchema, lockClass, poolConfig, type Connection } from './schema.js'

/** Options of {@link postgresAnswers}. @public */
export interface PostgresAnswersConfig {
  /** A connection string (`postgres://user@host:5432/db`) or `pg` pool options. */
  readonly connection: Connection
  /** The schema of the sessions; defaults to `planmode`. */
  readonly schema?: string
  /** How often, in ms, a waiting submission reads its row, the log and the lease besides each NOTIFY; defaults to 500. */
  readonly pollMs?: number
  /** Where a submission that cannot read its outcome for a while says so; defaults to silence. */
  readonly logger?: Logger
}

/** A submitter of answers over PostgreSQL that holds its own connections ({@link postgresAnswers}). @public */
export interface PostgresAnswers extends AnswerInbox {
  /** Ends its connections (a pool of at most two, and the LISTEN connection). Idempotent. */
  end(): Promise<void>
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * Answers to the questions of the sessions of a schema, from a process that
 * does not run a session store (a command line, a script): the same
 * submitter as a store's `answers`, with connections of its own. End it
 * when done.
 *
 * @example
 * ```ts
 * const answers = postgresAnswers({ connection: process.env.DATABASE_URL! })
 * try {
 *   const { open } = await answers.questions(sessionId)
 *   console.log(await answers.submit({ sessionId, questionId: open[0]!.questionId, answers: [{ id: 'plan-review', selected: ['Approve'] }] }))
 * } finally {
 *   await answers.end()
 * }
 * ```
 *
 * @public
 */
export function postgresAnswers(config: PostgresAnswersConfig): PostgresAnswers {
  if (typeof config !== 'object' || config === null) throw new TypeError('postgresAnswers: config must be an object with `connection`')
  const schema = config.schema ?? 'planmode'
  checkSchema(schema)
  const pollMs = config.pollMs ?? ANSWER_POLL_MS
  if (!Number.isInteger(pollMs) || pollMs < 1)
    throw new TypeError(`postgresAnswers: pollMs must be a positive integer, got ${String(config.pollMs)}`)
  const connection = poolConfig(config.connection)
  const logger = config.logger ?? silent
  const db = new Database(schema, connection, 2, logger)
  const rows = new AnswerRows(db, lockClass(schema) >>> 1, answersChannelOf(schema))
  let ended: Promise<void> | undefined
  const signals: AnswerSignals = new AnswerSignals(connection, rows.channel, logger, () => ended === undefined && signals.waiting)
  const inbox = new PostgresAnswerInbox(db, rows, signals, logger, pollMs)
  return {
    submit: (submission) => inbox.submit(submission),
    questions: (sessionId) => inbox.questions(sessionId),
    end: () =>
      (ended ??= (async () => {
        const listener = signals.detach()
        await Promise.allSettled([listener?.then((client) => endClient(client)), db.pool.end()])
      })()),
  }
}
