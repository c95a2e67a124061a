import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnswerResult, QuestionSettled, SessionEvent } from '@planmode/seams'
import { assertBuilt, boundedWork, REVIEW_QUESTION, startChild, stopChildren, type StartedChild, type WorkLane } from '@planmode/testkit'
import { postgresAnswers } from '../src/index.js'
import { pgFile } from './support/stores.js'

/**
 * Answers over PostgreSQL between real processes: a writer child (the
 * reference host over the store, plain `node` over the BUILT packages) asks
 * a plan review; three submitter children answer it at once. The writer is
 * SIGKILLed just before it commits the settlement of an answer it took,
 * just after, or at a random moment, or answers at its own terminal, or is
 * left alone. After each round the session is reopened (the next writer
 * settles what the killed one left open and decides the answers it left
 * pending) and every submitter's result is checked against the rows: an
 * answer is accepted exactly when the log's settlement names it, none is
 * applied twice, none to another question, every result is definite, and
 * no row is left pending.
 */

const here = dirname(fileURLToPath(import.meta.url))
const writerFile = join(here, 'answers-writer-child.mjs')
const submitterFile = join(here, 'answers-submitter-child.mjs')
const db = pgFile('answers_proc')
const ROUNDS = 10
/** How long one step (a child starting and asking, answers coming back, a reopen) may take on an idle machine, times the load factor. */
const STEP_MS = 30_000

beforeAll(() => {
  assertBuilt('answers between processes test', ['context', 'seams', 'host', 'store-postgres'])
})
afterAll(() => {
  stopChildren()
})

/** A child over the test's database; the writer gets the review it asks as JSON. */
const start = (file: string, args: readonly string[]): StartedChild =>
  startChild(file, args, { env: { PLANMODE_PG_URL: db.url(), PLANMODE_TEST_REVIEW: JSON.stringify(REVIEW_QUESTION) } })

async function rows(id: string): Promise<SessionEvent[]> {
  const found = await db.admin<{ seq: string; time: number; type: string; data: unknown }>(
    `SELECT seq, time, type, data FROM "${db.schema}".events WHERE session_id = $1 ORDER BY seq`,
    [id],
  )
  return found.map((row) => ({ type: row.type, seq: Number(row.seq), time: row.time, data: row.data }) as SessionEvent)
}

const settlementsOf = (events: readonly SessionEvent[], questionId: string): QuestionSettled[] =>
  events
    .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).questionId === questionId)
    .map((event) => event.data as QuestionSettled)

/** Opens the session as the next writer would (settling and deciding what a killed writer left), then ends the store. */
async function reopen(lane: WorkLane, id: string): Promise<void> {
  const next = db.process()
  for (;;) {
    try {
      await lane.wait(next.store.open(id), `reopening ${id}`)
      break
    } catch (error) {
      if ((error as { code?: string }).code !== 'LOCKED') throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  await next.store.end()
}

describe('answers between processes over PostgreSQL', () => {
  it(`${ROUNDS} rounds of three submitter processes answering at once while the writer is killed (before or after it commits the answer it took, at a random moment) or answers at its own terminal: each result is true to the rows`, ({
    signal,
  }) =>
    boundedWork({ what: `answers between processes (${ROUNDS} rounds)`, stepMs: STEP_MS, signal }, async (work) => {
      const id = 'answer-kills'
      const labels = ['Approve', 'Keep planning', 'Stop planning']
      const tally = { accepted: 0, refusedAlready: 0, writerGone: 0, noWriter: 0, interrupted: 0, local: 0 }
      const applied = new Map<string, string>()
      for (let round = 1; round <= ROUNDS; round++) {
        const mode = (['kill-before-log', 'kill-after-log', 'random', 'local', 'plain'] as const)[round % 5]!
        const writer = start(writerFile, [db.schema, id, mode === 'kill-before-log' || mode === 'kill-after-log' ? mode : 'plain'])
        const questionId = await work.wait(
          writer.line(/^asked (\S+)$/m),
          `round ${round} (${mode}): writer pid ${String(writer.child.pid)} starting and asking`,
          writer.output,
        )
        const submitters = labels.map((label, index) => start(submitterFile, [db.schema, id, questionId, label, `user-${round}-${index}`]))
        await work.wait(
          Promise.all(submitters.map((submitter) => submitter.line(/^(ready)$/m))),
          `round ${round}: three submitters starting`,
        )
        for (const submitter of submitters) submitter.child.stdin!.write('go\n')
        if (mode === 'local') setTimeout(() => writer.child.stdin!.write('local\n'), Math.floor(Math.random() * 40))
        if (mode === 'random') setTimeout(() => writer.child.kill('SIGKILL'), Math.floor(Math.random() * 150))
        const results = (
          await work.wait(
            Promise.all(submitters.map((submitter) => submitter.line(/^result (.+)$/m))),
            `round ${round}: waiting for the three results`,
            () => submitters.map((s) => s.output()).join('; '),
          )
        ).map((line) => JSON.parse(line) as AnswerResult)
        const exit = await work.wait(writer.exited, `round ${round}: waiting for the writer to exit`, writer.output)
        if (mode === 'local' || mode === 'plain') expect(exit.code, writer.output()).toBe(0)
        else if (mode !== 'random') expect(exit.signal).toBe('SIGKILL')
        await reopen(work, id)
        const events = await rows(id)
        const settlements = settlementsOf(events, questionId)
        const context = JSON.stringify({ round, mode, results, settlements })
        expect(settlements, context).toHaveLength(1)
        const [settled] = settlements
        for (const result of results) expect(result.status, context).not.toBe('unknown')
        const accepted = results.filter((result) => result.status === 'accepted')
        if (settled!.outcome === 'answered' && settled!.submission !== undefined) {
          expect(accepted, context).toHaveLength(1)
          const winner = results.indexOf(accepted[0]!)
          expect(settled!.submission).toBe((accepted[0] as { submission: string }).submission)
          expect(settled!.answer).toEqual([{ id: 'plan-review', selected: [labels[winner]], by: { id: `user-${round}-${winner}` } }])
          for (const [index, result] of results.entries())
            if (index !== winner)
              expect(result, context).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED', by: { id: `user-${round}-${winner}` } })
          tally.accepted += 1
          tally.refusedAlready += results.length - 1
        } else if (settled!.outcome === 'answered') {
          expect(accepted, context).toEqual([])
          tally.local += 1
          for (const result of results) expect(result, context).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED' })
        } else {
          expect(accepted, context).toEqual([])
          expect(settled!.outcome, context).toBe('interrupted')
          tally.interrupted += 1
          for (const result of results) {
            expect(['WRITER_GONE', 'NO_WRITER'], context).toContain((result as { code: string }).code)
            if ((result as { code: string }).code === 'WRITER_GONE') tally.writerGone += 1
            else tally.noWriter += 1
          }
        }
        // Every row is decided, and says what its submitter was told.
        const decided = await db.admin<{ id: string; status: string; code: string | null }>(
          `SELECT id, status, code FROM "${db.schema}".answers WHERE session_id = $1 AND question_id = $2`,
          [id, questionId],
        )
        expect(
          decided.filter((row) => row.status === 'pending'),
          context,
        ).toEqual([])
        for (const result of results) {
          if (result.status === 'accepted') expect(decided.find((row) => row.id === result.submission)?.status).toBe('accepted')
        }
        // No submission is applied twice, or to another question.
        for (const event of events) {
          const data = event.data as QuestionSettled
          if (event.type !== 'question/settled' || data.submission === undefined) continue
          const before = applied.get(data.submission)
          expect(before === undefined || before === data.questionId, context).toBe(true)
          applied.set(data.submission, data.questionId)
        }
        const named = events
          .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).submission !== undefined)
          .map((event) => (event.data as QuestionSettled).submission)
        expect(new Set(named).size).toBe(named.length)
        work.done()
      }
      console.log(`answers-processes (PostgreSQL): ${ROUNDS} rounds: ${JSON.stringify(tally)}`)
      expect(tally.accepted + tally.local + tally.interrupted).toBe(ROUNDS)
    }))

  it('a standalone submitter of a session nobody writes is refused NO_WRITER without writing anything', async () => {
    const w = db.process()
    const session = await w.store.create({ id: 'nobody-writes' })
    await session.append('question/asked', {
      questionId: 'q_left',
      agent: 'a',
      question: [{ id: 'q', header: 'Q', question: 'Yes?', options: [{ label: 'Yes', description: 'yes' }] }],
    })
    await w.store.end()
    const answers = postgresAnswers({ connection: db.url(), schema: db.schema })
    try {
      expect(
        await answers.submit({ sessionId: 'nobody-writes', questionId: 'q_left', answers: [{ id: 'q', selected: ['Yes'] }] }),
      ).toMatchObject({ status: 'refused', code: 'NO_WRITER' })
    } finally {
      await answers.end()
    }
    expect(await db.admin(`SELECT count(*)::int AS n FROM "${db.schema}".answers WHERE session_id = 'nobody-writes'`)).toEqual([{ n: 0 }])
  })
})
