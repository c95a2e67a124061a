import { describe, expect, it } from 'vitest'
import type { Context } from '@planmode/context'
import { userQuestionsPlugin } from '@planmode/host'
import {
  UserQuestionError,
  type Agent,
  type AnswerResult,
  type QuestionSettled,
  type Session,
  type SessionEvent,
  type UserAnswer,
} from '@planmode/seams'
import pg from 'pg'
import { postgresAnswers, setup, SCHEMA_VERSION } from '../src/index.js'
import { REVIEW_QUESTION } from '@planmode/testkit'
import { pgFile } from './support/stores.js'

// Answers to a session's questions from processes that do not hold its
// lease: a row in the answers table and a NOTIFY to the writer, which
// checks the answer, races it against its own provider and logs the
// winner as the ask's question/settled; the submitter hears back through
// the row. Each "process" here is a store of its own (its own connections).

const db = pgFile('answers')

const approve = [{ id: 'plan-review', selected: ['Approve'] }]
const agentOver = (session: Session): Agent => ({ id: 'writer-agent', session, steer() {}, async inject() {} })

/** A writer process: a store with the user-questions runtime, one session, and a provider that holds each ask until the test answers it. */
async function writer(id: string) {
  const w = db.process({ answerPollMs: 50 }, [userQuestionsPlugin])
  const session = await w.store.create({ id })
  const held: { signal: AbortSignal | undefined; answer(answers: readonly UserAnswer[]): void }[] = []
  w.ctx.require('userQuestions').registerProvider({
    ask: ({ signal }) => new Promise((resolve) => held.push({ signal, answer: resolve })),
  })
  return { ...w, session, held }
}

/** Starts an ask on `session` and resolves once its question/asked is committed. */
async function ask(ctx: Context, session: Session, signal?: AbortSignal) {
  const before = session.events.length
  const pending = ctx
    .require('userQuestions')
    .ask({ agent: agentOver(session), questions: [REVIEW_QUESTION], ...(signal === undefined ? {} : { signal }) })
    .then(
      (answers) => ({ answers }),
      (error: unknown) => ({ error }),
    )
  while (!session.events.slice(before).some((event) => event.type === 'question/asked'))
    await new Promise((resolve) => setTimeout(resolve, 5))
  return {
    questionId: (session.events.findLast((event) => event.type === 'question/asked')!.data as { questionId: string }).questionId,
    pending,
  }
}

const settledOf = (events: readonly SessionEvent[], questionId: string): QuestionSettled[] =>
  events
    .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).questionId === questionId)
    .map((event) => event.data as QuestionSettled)

const rowOf = async (id: string) => (await db.admin(`SELECT * FROM "${db.schema}".answers WHERE id = $1`, [id]))[0]

describe('answers from any process over PostgreSQL', () => {
  it('an answer from another process wins over the waiting provider: logged with its submission and `by`, the provider aborted, the row accepted with the seq', async () => {
    const w = await writer('one-answer')
    const { questionId, pending } = await ask(w.ctx, w.session)
    const other = db.process({ answerPollMs: 50 })
    const result = await other.store.answers.submit({
      sessionId: 'one-answer',
      questionId,
      answers: approve,
      by: { id: 'ada', name: 'Ada' },
    })
    expect(result).toMatchObject({ status: 'accepted', questionId })
    const { submission, seq } = result as { submission: string; seq: number }
    expect(await pending).toEqual({ answers: [{ id: 'plan-review', selected: ['Approve'], by: { id: 'ada', name: 'Ada' } }] })
    const settled = w.session.events.find((event) => event.type === 'question/settled')!
    expect(settled.seq).toBe(seq)
    expect(settled.data).toEqual({
      questionId,
      outcome: 'answered',
      answer: [{ id: 'plan-review', selected: ['Approve'], by: { id: 'ada', name: 'Ada' } }],
      by: { id: 'ada', name: 'Ada' },
      submission,
    })
    expect(w.held[0]!.signal!.aborted).toBe(true)
    expect(UserQuestionError.isInstance(w.held[0]!.signal!.reason)).toBe(true)
    expect(await rowOf(submission)).toMatchObject({
      session_id: 'one-answer',
      question_id: questionId,
      status: 'accepted',
      seq: String(seq),
      answered_by: { id: 'ada', name: 'Ada' },
      db_user: expect.any(String),
    })
    // Later answers are refused, naming who answered; the log alone says so (nothing is written).
    const later = await other.store.answers.submit({ sessionId: 'one-answer', questionId, answers: approve })
    expect(later).toEqual({
      status: 'refused',
      code: 'ALREADY_ANSWERED',
      by: { id: 'ada', name: 'Ada' },
      message: expect.stringContaining('already answered by Ada (ada)'),
    })
    expect(await db.admin(`SELECT count(*)::int AS n FROM "${db.schema}".answers`)).toEqual([{ n: 1 }])
    // The writer's own process can submit too (its store's inbox), and a standalone submitter the same way.
    const standalone = postgresAnswers({ connection: db.url(), schema: db.schema })
    try {
      expect(await standalone.submit({ sessionId: 'one-answer', questionId, answers: approve })).toMatchObject({
        status: 'refused',
        code: 'ALREADY_ANSWERED',
      })
      expect(await standalone.questions('one-answer')).toEqual({ open: [], writer: true })
    } finally {
      await standalone.end()
    }
  })

  it("the writer's own process answers through its store too (a web server taking an answer for a session it writes)", async () => {
    const w = await writer('own-process')
    const { questionId, pending } = await ask(w.ctx, w.session)
    const inbox = w.ctx.require('answerInbox')
    expect(inbox).toBe(w.store.answers)
    expect(await inbox.questions('own-process')).toMatchObject({ writer: true, open: [{ questionId }] })
    const result = await inbox.submit({
      sessionId: 'own-process',
      questionId,
      answers: [{ id: 'plan-review', selected: ['Stop planning'], custom: 'later' }],
      by: { id: 'web:ada' },
    })
    expect(result).toMatchObject({ status: 'accepted', questionId })
    expect(await pending).toEqual({ answers: [{ id: 'plan-review', selected: ['Stop planning'], custom: 'later', by: { id: 'web:ada' } }] })
  })

  it('answers from several processes at once: exactly one is applied, every other is told who answered', async () => {
    const w = await writer('many-answers')
    const { questionId, pending } = await ask(w.ctx, w.session)
    const submitters = [db.process({ answerPollMs: 50 }), db.process({ answerPollMs: 50 }), db.process({ answerPollMs: 50 })]
    const labels = ['Approve', 'Keep planning', 'Stop planning']
    const results = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((index) =>
        submitters[index % 3]!.store.answers.submit({
          sessionId: 'many-answers',
          questionId,
          answers: [{ id: 'plan-review', selected: [labels[index % 3]!] }],
          by: { id: `user-${index}` },
        }),
      ),
    )
    const accepted = results.filter((result) => result.status === 'accepted')
    expect(accepted).toHaveLength(1)
    const winner = results.indexOf(accepted[0]!)
    expect(settledOf(w.session.events, questionId)).toEqual([
      {
        questionId,
        outcome: 'answered',
        answer: [{ id: 'plan-review', selected: [labels[winner % 3]], by: { id: `user-${winner}` } }],
        by: { id: `user-${winner}` },
        submission: (accepted[0] as { submission: string }).submission,
      },
    ])
    for (const [index, result] of results.entries())
      if (index !== winner) expect(result).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED', by: { id: `user-${winner}` } })
    await pending
    // Every row that was sent is decided.
    expect(
      await db.admin(`SELECT count(*)::int AS n FROM "${db.schema}".answers WHERE session_id = 'many-answers' AND status = 'pending'`),
    ).toEqual([{ n: 0 }])
  })

  it('the local provider answering first wins; answers that do not fit are refused and consume nothing; the writer checks what reaches the table itself', async () => {
    const w = await writer('local-wins')
    const { questionId, pending } = await ask(w.ctx, w.session)
    const inbox = db.process({ answerPollMs: 50 }).store.answers
    expect(await inbox.submit({ sessionId: 'local-wins', questionId, answers: [{ id: 'plan-review', selected: ['Ok'] }] })).toMatchObject({
      status: 'refused',
      code: 'INVALID_ANSWER',
      message: expect.stringContaining('"Ok" is not an option'),
    })
    expect(
      await inbox.submit({ sessionId: 'local-wins', questionId, answers: approve, by: { id: 'x', admin: true } as never }),
    ).toMatchObject({ status: 'refused', code: 'INVALID_ANSWER' })
    // A row written around the submitter's checks: the writer refuses it itself.
    await db.admin(
      `INSERT INTO "${db.schema}".answers (id, session_id, question_id, answers) VALUES ('a_raw_bad', 'local-wins', $1, $2::json)`,
      [questionId, JSON.stringify([{ id: 'plan-review', selected: ['Approve', 'Stop planning'] }])],
    )
    await db.admin(`SELECT pg_notify($1, 's local-wins')`, [`planmode_answers_${db.schema}`])
    for (let row = await rowOf('a_raw_bad'); row!.status === 'pending'; row = await rowOf('a_raw_bad'))
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await rowOf('a_raw_bad')).toMatchObject({
      status: 'refused',
      code: 'INVALID_ANSWER',
      message: expect.stringContaining('takes one option'),
    })
    expect(settledOf(w.session.events, questionId)).toEqual([])
    w.held[0]!.answer([{ id: 'plan-review', selected: ['Keep planning'], custom: 'from the terminal' }])
    expect(await pending).toEqual({ answers: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'from the terminal' }] })
    expect(await inbox.submit({ sessionId: 'local-wins', questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'ALREADY_ANSWERED',
      message: expect.stringContaining('by anonymous'),
    })
  })

  it('refuses an unknown session or question, a cancelled ask, and an open ask nobody holds the lease of (NO_WRITER); lists open asks', async () => {
    const w = await writer('refusals')
    const inbox = db.process({ answerPollMs: 50 }).store.answers
    expect(await inbox.submit({ sessionId: 'no-such', questionId: 'q', answers: approve })).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_SESSION',
    })
    expect(await inbox.submit({ sessionId: 'bad id!', questionId: 'q', answers: approve })).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_SESSION',
    })
    expect(await inbox.submit({ sessionId: 'refusals', questionId: 'q_none', answers: approve })).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_QUESTION',
    })
    const controller = new AbortController()
    const cancelled = await ask(w.ctx, w.session, controller.signal)
    controller.abort()
    await cancelled.pending
    expect(await inbox.submit({ sessionId: 'refusals', questionId: cancelled.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'QUESTION_CLOSED',
      message: expect.stringContaining('cancelled'),
    })
    const open = await ask(w.ctx, w.session)
    expect(await inbox.questions('refusals')).toEqual({
      writer: true,
      open: [{ questionId: open.questionId, agent: 'writer-agent', question: [REVIEW_QUESTION], seq: expect.any(Number) }],
    })
    await expect(inbox.questions('no-such')).rejects.toMatchObject({ code: 'UNKNOWN_SESSION' })
    // The writer goes away without settling (its store ends under the waiting ask): nobody holds the lease.
    await w.store.end()
    expect(await inbox.questions('refusals')).toMatchObject({ writer: false, open: [{ questionId: open.questionId }] })
    expect(await inbox.submit({ sessionId: 'refusals', questionId: open.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'NO_WRITER',
    })
    // The next writer settles it interrupted; an answer to it is then QUESTION_CLOSED.
    const next = db.process()
    await next.store.open('refusals')
    expect(await inbox.submit({ sessionId: 'refusals', questionId: open.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'QUESTION_CLOSED',
      message: expect.stringContaining('interrupted'),
    })
  })

  it('a submitter waiting on a writer that dies fences it off (the epoch goes up) and hears WRITER_GONE; the next writer settles the question interrupted', async () => {
    // A writer holding the lease with an ask open in its log that nothing here takes answers for: the answer waits.
    const w = db.process()
    const session = await w.store.create({ id: 'writer-dies' })
    await session.append('question/asked', { questionId: 'q_waiting', agent: 'writer-agent', question: [REVIEW_QUESTION] })
    const submitter = postgresAnswers({ connection: db.url(), schema: db.schema, pollMs: 50 })
    try {
      const submitted = submitter.submit({ sessionId: 'writer-dies', questionId: 'q_waiting', answers: approve, by: { id: 'ada' } })
      while ((await db.admin(`SELECT 1 FROM "${db.schema}".answers WHERE session_id = 'writer-dies'`)).length === 0)
        await new Promise((resolve) => setTimeout(resolve, 10))
      const [before] = await db.admin<{ epoch: string; pid: number }>(
        `SELECT epoch, holder_pid AS pid FROM "${db.schema}".sessions WHERE id = 'writer-dies'`,
      )
      // The writer "dies": the server ends its lease connection.
      await db.admin('SELECT pg_terminate_backend($1)', [before!.pid])
      const result = await submitted
      expect(result).toMatchObject({ status: 'refused', code: 'WRITER_GONE' })
      const [after] = await db.admin<{ epoch: string }>(`SELECT epoch FROM "${db.schema}".sessions WHERE id = 'writer-dies'`)
      expect(Number(after!.epoch)).toBe(Number(before!.epoch) + 1)
      // The dead writer's statements name the old epoch: nothing of it can land now.
      await expect(
        session.append('question/settled', { questionId: 'q_waiting', outcome: 'answered', answer: approve }),
      ).rejects.toMatchObject({ code: 'LEASE_LOST' })
    } finally {
      await submitter.end()
    }
    const reopened = await db.process().store.open('writer-dies')
    expect(settledOf(reopened.events, 'q_waiting')).toEqual([{ questionId: 'q_waiting', outcome: 'interrupted' }])
    expect(await db.admin(`SELECT status, code FROM "${db.schema}".answers WHERE session_id = 'writer-dies'`)).toEqual([
      { status: 'refused', code: 'WRITER_GONE' },
    ])
  })

  it('answers a dead writer left pending are decided by the next writer at open: accepted when it logged them, else WRITER_GONE', async () => {
    const w = db.process()
    const session = await w.store.create({ id: 'left-pending' })
    await session.append('question/asked', { questionId: 'q_logged', agent: 'writer-agent', question: [REVIEW_QUESTION] })
    await session.append('question/asked', { questionId: 'q_open', agent: 'writer-agent', question: [REVIEW_QUESTION] })
    // The writer logged a_logged's answer, then died before it marked the row.
    const logged = await session.append('question/settled', {
      questionId: 'q_logged',
      outcome: 'answered',
      answer: approve,
      submission: 'a_logged',
    })
    const insert = (id: string, questionId: string) =>
      db.admin(`INSERT INTO "${db.schema}".answers (id, session_id, question_id, answers) VALUES ($1, 'left-pending', $2, $3::json)`, [
        id,
        questionId,
        JSON.stringify(approve),
      ])
    await insert('a_logged', 'q_logged')
    await insert('a_late', 'q_logged')
    await insert('a_open', 'q_open')
    await w.store.end()
    await db.process().store.open('left-pending')
    expect(await rowOf('a_logged')).toMatchObject({ status: 'accepted', seq: String(logged.seq) })
    expect(await rowOf('a_late')).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED' })
    expect(await rowOf('a_open')).toMatchObject({ status: 'refused', code: 'WRITER_GONE' })
  })

  it('a writer whose lease goes while the settlement of an answer it took is on its way: the submitter is told the truth the log holds', async () => {
    const w = await writer('lease-lost-mid')
    const { questionId, pending } = await ask(w.ctx, w.session)
    // Hold the session row (not its key: answers still reference it): the writer's commit of the settlement waits behind it.
    const blocker = new pg.Client({ connectionString: db.url() })
    await blocker.connect()
    await blocker.query('BEGIN')
    await blocker.query(`SELECT 1 FROM "${db.schema}".sessions WHERE id = 'lease-lost-mid' FOR NO KEY UPDATE`)
    const inbox = db.process({ answerPollMs: 50 }).store.answers
    const submitted = inbox.submit({ sessionId: 'lease-lost-mid', questionId, answers: approve, by: { id: 'ada' } })
    while (w.held[0]?.signal?.aborted !== true) await new Promise((resolve) => setTimeout(resolve, 10))
    const [lease] = await db.admin<{ pid: number }>(`SELECT holder_pid AS pid FROM "${db.schema}".sessions WHERE id = 'lease-lost-mid'`)
    await db.admin('SELECT pg_terminate_backend($1)', [lease!.pid])
    await blocker.query('COMMIT')
    await blocker.end()
    const result = await submitted
    const outcome = await pending
    const reopened = await db.process().store.open('lease-lost-mid')
    const [settled] = settledOf(reopened.events, questionId)
    if (result.status === 'accepted') {
      expect(settled).toMatchObject({ outcome: 'answered', submission: result.submission })
      expect(outcome).toMatchObject({ answers: [{ selected: ['Approve'] }] })
    } else {
      expect(result).toMatchObject({ status: 'refused', code: expect.stringMatching(/^(WRITER_GONE|QUESTION_CLOSED)$/) })
      expect(settled).toEqual({ questionId, outcome: 'interrupted' })
    }
    expect(
      await db.admin(`SELECT count(*)::int AS n FROM "${db.schema}".answers WHERE session_id = 'lease-lost-mid' AND status = 'pending'`),
    ).toEqual([{ n: 0 }])
  })

  it("every connection of both ends cut at once while an answer is in flight (what a restart or a failover does to clients): each side recovers and the result is the log's", async () => {
    const tag = `answers-restart-${db.schema}`
    const w = db.process({ answerPollMs: 50, connection: { connectionString: db.url(), application_name: `${tag}-writer` } }, [
      userQuestionsPlugin,
    ])
    const session = await w.store.create({ id: 'restart' })
    let aborted: AbortSignal | undefined
    w.ctx.require('userQuestions').registerProvider({ ask: ({ signal }) => ((aborted = signal), new Promise(() => {})) })
    const { questionId, pending } = await ask(w.ctx, session)
    const blocker = new pg.Client({ connectionString: db.url() })
    await blocker.connect()
    await blocker.query('BEGIN')
    await blocker.query(`SELECT 1 FROM "${db.schema}".sessions WHERE id = 'restart' FOR NO KEY UPDATE`)
    const submitter = postgresAnswers({
      connection: { connectionString: db.url(), application_name: `${tag}-submitter` },
      schema: db.schema,
      pollMs: 50,
    })
    try {
      const submitted = submitter.submit({ sessionId: 'restart', questionId, answers: approve, by: { id: 'ada' } })
      while (aborted?.aborted !== true) await new Promise((resolve) => setTimeout(resolve, 10))
      const cut = await db.admin<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name LIKE $1`,
        [`${tag}-%`],
      )
      expect(cut[0]!.n).toBeGreaterThanOrEqual(3)
      await blocker.query('COMMIT')
      await blocker.end()
      const result = await submitted
      const outcome = await pending
      const reopened = await db.process().store.open('restart')
      const [settled] = settledOf(reopened.events, questionId)
      if (result.status === 'accepted') {
        expect(settled).toMatchObject({ outcome: 'answered', submission: result.submission })
        expect(outcome).toMatchObject({ answers: [{ selected: ['Approve'] }] })
      } else {
        expect(result, JSON.stringify({ result, settled })).toMatchObject({
          status: 'refused',
          code: expect.stringMatching(/^(WRITER_GONE|QUESTION_CLOSED)$/),
        })
        expect(settled).toEqual({ questionId, outcome: 'interrupted' })
        expect(outcome).toMatchObject({ error: expect.anything() })
      }
      expect(
        await db.admin(`SELECT count(*)::int AS n FROM "${db.schema}".answers WHERE session_id = 'restart' AND status = 'pending'`),
      ).toEqual([{ n: 0 }])
      console.log(
        `answers.test (connections cut mid-answer): the submitter heard ${result.status === 'refused' ? result.code : result.status}`,
      )
    } finally {
      await submitter.end()
    }
  })

  it('a submitter whose connections are all cut while it waits reconnects and still hears the true outcome', async () => {
    const w = await writer('submitter-cut')
    const { questionId, pending } = await ask(w.ctx, w.session)
    const blocker = new pg.Client({ connectionString: db.url() })
    await blocker.connect()
    await blocker.query('BEGIN')
    await blocker.query(`SELECT 1 FROM "${db.schema}".sessions WHERE id = 'submitter-cut' FOR NO KEY UPDATE`)
    const submitter = postgresAnswers({
      connection: { connectionString: db.url(), application_name: `answers-cut-${db.schema}` },
      schema: db.schema,
      pollMs: 50,
    })
    try {
      const submitted = submitter.submit({ sessionId: 'submitter-cut', questionId, answers: approve, by: { id: 'ada' } })
      while (w.held[0]?.signal?.aborted !== true) await new Promise((resolve) => setTimeout(resolve, 10))
      const cut = await db.admin<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1`,
        [`answers-cut-${db.schema}`],
      )
      expect(cut[0]!.n).toBeGreaterThan(0)
      await blocker.query('COMMIT')
      await blocker.end()
      const result: AnswerResult = await submitted
      expect(result).toMatchObject({ status: 'accepted', questionId })
      expect(settledOf(w.session.events, questionId)).toMatchObject([
        { outcome: 'answered', submission: (result as { submission: string }).submission },
      ])
      await pending
    } finally {
      await submitter.end()
    }
  })

  it('setup migrates a version-2 schema to this version: the answers table and the index of the question events are added', async () => {
    const schema = `${db.schema}_v2`
    await setup({ connection: db.url(), schema })
    await db.admin(`DROP TABLE "${schema}".answers`)
    await db.admin(`DROP INDEX "${schema}".events_questions`)
    await db.admin(`UPDATE "${schema}".meta SET value = '2' WHERE key = 'version'`)
    expect(await setup({ connection: db.url(), schema })).toEqual({ schema, from: 2, version: SCHEMA_VERSION })
    expect(await db.admin(`SELECT to_regclass($1)::text AS t`, [`"${schema}".answers`])).toEqual([{ t: `${schema}.answers` }])
    expect(await db.admin(`SELECT to_regclass($1)::text AS t`, [`"${schema}".events_questions`])).toEqual([
      { t: `${schema}.events_questions` },
    ])
    await db.admin(`DROP SCHEMA "${schema}" CASCADE`)
  })
})
