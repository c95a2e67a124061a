import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin, userQuestionsPlugin, type HostAgent } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES, planToolPlugin } from '@planmode/plan-tool'
import type { AnswerResult, QuestionAnswerer, QuestionSettled, SessionEvent, UserAnswer } from '@planmode/seams'
import { assertBuilt, recordingLogger, REVIEW_QUESTION, scaledMs, startChild, stopChildren } from '@planmode/testkit'
import { asPostgresStore, postgresAnswers, postgresSessions } from '../src/index.js'
import { append, pgFile } from './support/stores.js'

/**
 * SPEC §22.4 over PostgreSQL. Before it, an answer whose text PostgreSQL
 * cannot index (U+0000, a lone surrogate) passed every check, then the
 * store refused its settlement: the model got the raw database error and
 * the question stayed open with nobody waiting. Now every string a person
 * writes is checked before anything is appended, whoever sends it (the
 * answers table, from another process; the writer's own provider), and a
 * settlement the database refuses is owed: settled `failed` at the next
 * commit, or `interrupted` by the next writer.
 */

const here = dirname(fileURLToPath(import.meta.url))
const writerFile = join(here, 'person-text-writer-child.mjs')
const db = pgFile('person_text')
const start = (mode: string, id: string) =>
  startChild(writerFile, [db.schema, id, mode], {
    env: { PLANMODE_PG_URL: db.url(), PLANMODE_TEST_REVIEW: JSON.stringify(REVIEW_QUESTION) },
  })
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

beforeAll(() => {
  assertBuilt('person text over PostgreSQL test', ['context', 'seams', 'store', 'host', 'store-postgres'])
})
afterAll(() => {
  stopChildren()
})

async function events(id: string): Promise<SessionEvent[]> {
  const found = await db.admin<{ seq: string; type: string; data: unknown }>(
    `SELECT seq, type, data FROM "${db.schema}".events WHERE session_id = $1 ORDER BY seq`,
    [id],
  )
  return found.map((row) => ({ type: row.type, seq: Number(row.seq), time: 0, data: row.data }) as SessionEvent)
}

const settlementsOf = (log: readonly SessionEvent[], questionId: string): QuestionSettled[] =>
  log
    .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).questionId === questionId)
    .map((event) => event.data as QuestionSettled)

/** Inserts a pending answer as an old or hostile submitter would, past the inbox's checks; resolves with the row once its writer decided it. */
async function insertRaw(
  sessionId: string,
  questionId: string,
  answers: unknown,
  by: unknown,
): Promise<{ status: string; code: string | null; message: string | null }> {
  const id = `raw_${randomBytes(6).toString('hex')}`
  await db.admin(
    `INSERT INTO "${db.schema}".answers (id, session_id, question_id, answers, answered_by) VALUES ($1, $2, $3, $4::json, $5::json)`,
    [id, sessionId, questionId, JSON.stringify(answers), JSON.stringify(by)],
  )
  const until = Date.now() + scaledMs(30_000)
  for (;;) {
    const [row] = await db.admin<{ status: string; code: string | null; message: string | null }>(
      `SELECT status, code, message FROM "${db.schema}".answers WHERE id = $1`,
      [id],
    )
    if (row!.status !== 'pending') return row!
    if (Date.now() > until) throw new Error(`answer ${id} is still pending: its writer never decided it`)
    await sleep(50)
  }
}

const BAD_BY: [string, QuestionAnswerer][] = [
  ['U+0000 in by.id', { id: 'ada\u0000' }],
  ['a lone surrogate in by.name', { id: 'ada', name: 'Ada\uDC00' }],
  ['an ANSI escape in by.name', { id: 'ada', name: '\u001b]0;pwned\u0007Ada' }],
  ['a line break in by.id', { id: 'ada\nroot' }],
  ['a bidi isolate in by.name', { id: 'ada', name: '\u2067Ada' }],
  ['a zero-width-only by.id', { id: '\u200B' }],
]

const BAD_ANSWERS: [string, UserAnswer[]][] = [
  ['U+0000 in the feedback', [{ id: 'plan-review', selected: ['Keep planning'], custom: 'more\u0000' }]],
  ['a lone surrogate in the feedback', [{ id: 'plan-review', selected: ['Keep planning'], custom: '\uD83D' }]],
  ['U+0000 in a comment', [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 2, text: 'no\u0000' }] }]],
  ['a lone surrogate in an edit', [{ id: 'plan-review', selected: ['Approve'], edit: '# Plan\uDBFF\n\n1. read' }]],
]

describe('text a person writes cannot kill a review: PostgreSQL’s answer inbox (SPEC §22.4)', () => {
  it('from another process: every bad by, feedback, comment or edit is refused INVALID_ANSWER by the inbox and, sent raw into the answers table, by the writer; the question stays open; a valid answer settles it', async () => {
    const id = 'bad-text'
    const writer = start('wait', id)
    const questionId = await writer.line(/^asked (\S+)$/m)
    const inbox = postgresAnswers({ connection: db.url(), schema: db.schema, pollMs: 50 })
    try {
      const approve = [{ id: 'plan-review', selected: ['Approve'] }]
      for (const [what, by] of BAD_BY) {
        expect(await inbox.submit({ sessionId: id, questionId, answers: approve, by }), what).toMatchObject({
          status: 'refused',
          code: 'INVALID_ANSWER',
        })
        expect(await insertRaw(id, questionId, approve, by), `${what}, inserted raw`).toMatchObject({
          status: 'refused',
          code: 'INVALID_ANSWER',
          message: expect.stringContaining('still open'),
        })
      }
      for (const [what, answers] of BAD_ANSWERS) {
        expect(await inbox.submit({ sessionId: id, questionId, answers, by: { id: 'ada' } }), what).toMatchObject({
          status: 'refused',
          code: 'INVALID_ANSWER',
        })
        expect(await insertRaw(id, questionId, answers, { id: 'ada' }), `${what}, inserted raw`).toMatchObject({
          status: 'refused',
          code: 'INVALID_ANSWER',
          message: expect.stringContaining('still open'),
        })
      }
      expect(settlementsOf(await events(id), questionId)).toEqual([])
      expect(await inbox.questions(id)).toMatchObject({ open: [{ questionId }], writer: true })
      const accepted = (await inbox.submit({
        sessionId: id,
        questionId,
        answers: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'two lines\nof feedback' }],
        by: { id: 'ada', name: 'Ada Lovelace' },
      })) as AnswerResult
      expect(accepted).toMatchObject({ status: 'accepted' })
      expect(await writer.line(/^(answered .+)$/m)).toContain('"by":{"id":"ada","name":"Ada Lovelace"}')
      expect((await writer.exited).code).toBe(0)
      expect(settlementsOf(await events(id), questionId)).toMatchObject([
        { outcome: 'answered', submission: (accepted as { submission: string }).submission },
      ])
    } finally {
      await inbox.end()
    }
  })

  it('from the writer’s own provider: the review fails as a bad answer does, records nothing, and the question is settled failed (never the raw database error)', async () => {
    const root = new Context({ logger: recordingLogger() })
    root.plugin(hostPlugin, {
      sessions: postgresSessions({ connection: db.url(), schema: db.schema, poolSize: 2 }),
      model: createScriptedModel([]),
    })
    root.plugin(planCorePlugin)
    root.plugin(planToolPlugin)
    const store = asPostgresStore(root.require('sessions'))!
    try {
      for (const [what, custom, by, message] of [
        ['U+0000 in the feedback', 'more tests\u0000', undefined, EXIT_PLAN_MODE_MESSAGES.badAnswerText],
        ['a lone surrogate in the feedback', 'more tests\uD800', undefined, EXIT_PLAN_MODE_MESSAGES.badAnswerText],
        ['U+0000 in by.name', 'more tests', { id: 'ada', name: 'Ada\u0000' }, EXIT_PLAN_MODE_MESSAGES.badAnswerer],
      ] as const) {
        const provider = root.require('userQuestions').registerProvider({
          ask: async () => [{ id: 'plan-review', selected: ['Keep planning'], custom, ...(by === undefined ? {} : { by }) }],
        })
        const session = await store.create()
        const agent: HostAgent = root.require('agents').create({ session })
        await root.require('planMode').set(agent, true)
        const result = await root
          .require('tools')
          .execute(EXIT_PLAN_MODE, { plan: '# Plan\n\n1. read' }, { agent, signal: new AbortController().signal, toolCallId: 't1' })
        expect(result.content, what).toEqual([{ type: 'text', text: `Error: ${message}` }])
        const log = await events(session.id)
        const [asked] = log.filter((event) => event.type === 'question/asked')
        expect(settlementsOf(log, (asked!.data as { questionId: string }).questionId), what).toEqual([
          { questionId: expect.any(String), outcome: 'failed', error: expect.stringContaining('the answer cannot be logged') },
        ])
        expect(
          log.some((event) => event.type === 'plan/review'),
          what,
        ).toBe(false)
        agent.dispose()
        provider()
      }
    } finally {
      root.dispose()
      await store.end()
    }
  })
})

describe('a settlement the database refuses is never left open with nobody waiting (SPEC §22.4)', () => {
  /** A trigger that makes PostgreSQL refuse every answered settlement of session `id` (a real database error, SQLSTATE P0001). */
  async function refuseAnsweredSettlements(id: string): Promise<void> {
    const fn = `"${db.schema}".refuse_${id.replace(/\W/g, '_')}`
    await db.admin(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the test refuses this settlement'; END $$`,
    )
    await db.admin(
      `CREATE TRIGGER refuse_${id.replace(/\W/g, '_')} BEFORE INSERT ON "${db.schema}".events FOR EACH ROW
        WHEN (NEW.session_id = '${id}' AND NEW.type = 'question/settled' AND NEW.data->>'outcome' = 'answered') EXECUTE FUNCTION ${fn}()`,
    )
  }

  it('the writer settles the question failed in its next commit', async () => {
    const id = 'owed-failed'
    await refuseAnsweredSettlements(id)
    const { ctx, store } = db.process({}, [userQuestionsPlugin])
    const session = await store.create({ id })
    ctx.require('userQuestions').registerProvider({ ask: async () => [{ id: 'plan-review', selected: ['Approve'] }] })
    const agent = { id: 'writer-agent', session, steer() {}, async inject() {} }
    const question = { id: 'plan-review', header: 'Plan review', question: 'Approve?', options: [{ label: 'Approve', description: 'yes' }] }
    await expect(ctx.require('userQuestions').ask({ agent, questions: [question] })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('the test refuses this settlement'),
    })
    const [asked] = (await events(id)).filter((event) => event.type === 'question/asked')
    const questionId = (asked!.data as { questionId: string }).questionId
    expect(settlementsOf(await events(id), questionId)).toEqual([])
    await append(session, 'test/event', { turn: 1 })
    const log = await events(id)
    expect(log.map((event) => event.type)).toEqual(['question/asked', 'question/settled', 'test/event'])
    expect(settlementsOf(log, questionId)).toEqual([
      { questionId, outcome: 'failed', error: expect.stringContaining('its settlement could not be logged') },
    ])
  })

  it('the writer killed before it commits again: the next writer settles the question interrupted when it opens the session', async () => {
    const id = 'owed-killed'
    await refuseAnsweredSettlements(id)
    const writer = start('local', id)
    const questionId = await writer.line(/^asked (\S+)$/m)
    writer.child.stdin!.write('local\n')
    expect(await writer.line(/^rejected (\S+)$/m)).toBe('UNAVAILABLE')
    writer.child.kill('SIGKILL')
    await writer.exited
    const next = db.process()
    for (;;) {
      try {
        await next.store.open(id)
        break
      } catch (error) {
        // The lease of the killed writer goes once the server sees its connection close.
        if ((error as { code?: string }).code !== 'LOCKED') throw error
        await sleep(20)
      }
    }
    expect(settlementsOf(await events(id), questionId)).toEqual([{ questionId, outcome: 'interrupted' }])
  })
})
