import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { localAnswers, sessionStorePlugin } from '@planmode/host'
import type { AnswerResult, QuestionSettled, SessionEvent } from '@planmode/seams'
import { REVIEW_QUESTION, startChild, stopChildren } from '@planmode/testkit'
import { bundleChild, recordingLogger } from './helpers.js'

/**
 * Answers over the JSONL store's local channel between real processes: a
 * writer child asks a plan review and waits; submitter children (and the
 * test itself) answer it. The writer is SIGKILLed at chosen points — just
 * before it logs an answer it took, just after — and at random moments
 * while several answers are in flight. After each round the log is read,
 * the session reopened (which settles a question left open `interrupted`),
 * and every submitter's result checked against the log: an answer is
 * accepted exactly when the log's settlement names it, none is applied
 * twice, none to another question, and every result is definite.
 */

const writerSource = `
import { Context } from '@planmode/context'
import { sessionInvariantsPlugin, sessionStorePlugin, userQuestionsPlugin } from './index.ts'
const [dir, id, mode] = process.argv.slice(2)
const quiet = () => {}
const ctx = new Context({ logger: { debug: quiet, info: quiet, warn: (m) => console.error(m), error: (m) => console.error(m) } })
ctx.plugin(sessionInvariantsPlugin)
ctx.plugin(sessionStorePlugin, { dir, durability: 'append' })
ctx.plugin(userQuestionsPlugin)
const sessions = ctx.require('sessions')
const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
let mine
// An invariant also reads the events already in the log when it is registered: only this process's ask counts.
const remote = (event) => event.type === 'question/settled' && event.data.questionId === mine && event.data.submission !== undefined
// Dies after it took an answer from another process, before its settlement is written (the invariant runs first).
if (mode === 'kill-before-log') ctx.require('sessionInvariants').register('kill', (event) => { if (remote(event)) process.kill(process.pid, 'SIGKILL') })
// Dies once that settlement is in the file, before the submitter hears back.
if (mode === 'kill-after-log') ctx.on('session/event', ({ event }) => { if (remote(event)) process.kill(process.pid, 'SIGKILL') })
ctx.on('session/event', ({ event }) => { if (event.type === 'question/asked') process.stdout.write('asked ' + (mine = event.data.questionId) + '\\n') })
let answerLocally
process.stdin.on('data', (chunk) => { if (String(chunk).includes('local')) answerLocally?.() })
ctx.require('userQuestions').registerProvider({
  ask: ({ signal }) => new Promise((resolve, reject) => {
    answerLocally = () => resolve([{ id: 'plan-review', selected: ['Keep planning'], custom: 'answered at the terminal' }])
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
  }),
})
const agent = { id: 'writer-agent', session, steer() {}, inject() {} }
const answers = await ctx.require('userQuestions').ask({ agent, questions: [${JSON.stringify(REVIEW_QUESTION)}] })
process.stdout.write('answered ' + JSON.stringify(answers) + '\\n')
await sessions.close(session)
ctx.dispose()
// Nothing of the host may keep the process alive now: it must exit by itself.
process.stdin.destroy()
`

const submitterSource = `
import { localAnswers } from './index.ts'
const [dir, id, questionId, label, by] = process.argv.slice(2)
const inbox = localAnswers({ dir })
process.stdout.write('ready\\n')
process.stdin.once('data', async () => {
  const result = await inbox.submit({ sessionId: id, questionId, answers: [{ id: 'plan-review', selected: [label] }], by: { id: by } })
  process.stdout.write('result ' + JSON.stringify(result) + '\\n')
})
`

let writerFile: string
let submitterFile: string
let dir: string

beforeAll(async () => {
  writerFile = await bundleChild('answers-writer', writerSource)
  submitterFile = await bundleChild('answers-submitter', submitterSource)
  dir = await mkdtemp(join(tmpdir(), 'planmode-answers-proc-'))
})
afterAll(async () => {
  stopChildren()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const logOf = async (id: string): Promise<SessionEvent[]> =>
  (await readFile(join(dir, `${id}.jsonl`), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SessionEvent)

const settlementsOf = (events: readonly SessionEvent[], questionId: string): QuestionSettled[] =>
  events
    .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).questionId === questionId)
    .map((event) => event.data as QuestionSettled)

/** Reopens the session as the next writer would (settling what the killed one left open), then closes it. */
async function reopen(id: string): Promise<SessionEvent[]> {
  const ctx = new Context({ logger: recordingLogger() })
  ctx.plugin(sessionStorePlugin, { dir })
  const session = await ctx.require('sessions').open(id)
  const events = [...session.events]
  await ctx.require('sessions').close(session)
  ctx.dispose()
  return events
}

const approve = [{ id: 'plan-review', selected: ['Approve'] }]

describe('answers between processes over the JSONL store', () => {
  it('a writer killed after it took an answer and before it logged it: the submitter hears WRITER_GONE, the next open settles the question interrupted', async () => {
    const id = 'killed-before-log'
    const writer = startChild(writerFile, [dir, id, 'kill-before-log'])
    const questionId = await writer.line(/^asked (\S+)$/m)
    const announcement = JSON.parse(await readFile(join(dir, `${id}.jsonl.answers`), 'utf8')) as { socket: string }
    const result = await localAnswers({ dir }).submit({ sessionId: id, questionId, answers: approve, by: { id: 'ada' } })
    expect(result).toMatchObject({ status: 'refused', code: 'WRITER_GONE' })
    expect((await writer.exited).signal).toBe('SIGKILL')
    expect(settlementsOf(await logOf(id), questionId)).toEqual([])
    // Before anyone reopens: the stale announcement names a dead process.
    expect(await localAnswers({ dir }).submit({ sessionId: id, questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'NO_WRITER',
    })
    expect(existsSync(announcement.socket)).toBe(true)
    const reopened = await reopen(id)
    expect(settlementsOf(reopened, questionId)).toEqual([{ questionId, outcome: 'interrupted' }])
    expect(await localAnswers({ dir }).submit({ sessionId: id, questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'QUESTION_CLOSED',
      message: expect.stringContaining('interrupted'),
    })
    // The next writer's channel replaces the stale announcement, and leaves the socket it named: that may be anyone's
    // (the sweep of the writer's own socket folder removes it once nobody listens on it for a minute).
    const next = startChild(writerFile, [dir, id, 'plain'])
    const second = await next.line(/^asked (\S+)$/m)
    expect(existsSync(announcement.socket)).toBe(true)
    expect(JSON.parse(await readFile(join(dir, `${id}.jsonl.answers`), 'utf8')).socket).not.toBe(announcement.socket)
    expect(await localAnswers({ dir }).submit({ sessionId: id, questionId: second, answers: approve, by: { id: 'bob' } })).toMatchObject({
      status: 'accepted',
    })
    expect(await next.line(/^answered (.+)$/m)).toBe(JSON.stringify([{ id: 'plan-review', selected: ['Approve'], by: { id: 'bob' } }]))
    expect((await next.exited).code).toBe(0)
    expect(existsSync(join(dir, `${id}.jsonl.answers`))).toBe(false)
  })

  it('a writer killed after it logged the answer, before it replied: the submitter hears accepted from the log, and the next open settles nothing more', async () => {
    const id = 'killed-after-log'
    const writer = startChild(writerFile, [dir, id, 'kill-after-log'])
    const questionId = await writer.line(/^asked (\S+)$/m)
    const result = await localAnswers({ dir }).submit({ sessionId: id, questionId, answers: approve, by: { id: 'ada', name: 'Ada' } })
    expect(result).toMatchObject({ status: 'accepted', questionId })
    expect((await writer.exited).signal).toBe('SIGKILL')
    const log = await logOf(id)
    const settled = log.find((event) => event.type === 'question/settled')!
    expect(settled.seq).toBe((result as { seq: number }).seq)
    expect(settled.data).toMatchObject({
      outcome: 'answered',
      submission: (result as { submission: string }).submission,
      by: { id: 'ada', name: 'Ada' },
    })
    expect(settlementsOf(await reopen(id), questionId)).toHaveLength(1)
    expect(await localAnswers({ dir }).submit({ sessionId: id, questionId, answers: approve, by: { id: 'bob' } })).toMatchObject({
      status: 'refused',
      code: 'ALREADY_ANSWERED',
      by: { id: 'ada', name: 'Ada' },
    })
  })

  const ROUNDS = 10
  it(`${ROUNDS} rounds of three submitter processes answering at once while the writer is killed (before or after it logs the answer it took, at a random moment) or answers at its own terminal: each result is true to the log`, async () => {
    const id = 'random-kills'
    const labels = ['Approve', 'Keep planning', 'Stop planning']
    const tally = { accepted: 0, refusedAlready: 0, writerGone: 0, noWriter: 0, interrupted: 0, local: 0 }
    const submissions = new Set<string>()
    for (let round = 1; round <= ROUNDS; round++) {
      // Rounds cycle through: killed before it logs the answer it took, killed right after, killed at a random
      // moment, answered at the writer's own terminal (racing the submitters), and left alone.
      const mode = (['kill-before-log', 'kill-after-log', 'random', 'local', 'plain'] as const)[round % 5]!
      const writer = startChild(writerFile, [dir, id, mode === 'kill-before-log' || mode === 'kill-after-log' ? mode : 'plain'])
      const questionId = await writer.line(/^asked (\S+)$/m)
      const submitters = labels.map((label, index) => startChild(submitterFile, [dir, id, questionId, label, `user-${round}-${index}`]))
      await Promise.all(submitters.map((submitter) => submitter.line(/^(ready)$/m)))
      for (const submitter of submitters) submitter.child.stdin!.write('go\n')
      if (mode === 'local') setTimeout(() => writer.child.stdin!.write('local\n'), Math.floor(Math.random() * 40))
      if (mode === 'random') setTimeout(() => writer.child.kill('SIGKILL'), Math.floor(Math.random() * 150))
      const results = (await Promise.all(submitters.map((submitter) => submitter.line(/^result (.+)$/m)))).map(
        (line) => JSON.parse(line) as AnswerResult,
      )
      const exit = await writer.exited
      if (mode === 'local' || mode === 'plain') expect(exit.code, writer.output()).toBe(0)
      else if (mode !== 'random') expect(exit.signal).toBe('SIGKILL')
      const events = await reopen(id)
      const settlements = settlementsOf(events, questionId)
      // Settled exactly once: by an answer, or interrupted by the reopen.
      expect(settlements, JSON.stringify({ round, results, settlements })).toHaveLength(1)
      const [settled] = settlements
      for (const result of results) expect(result.status, JSON.stringify(result)).not.toBe('unknown')
      const accepted = results.filter((result) => result.status === 'accepted')
      if (settled!.outcome === 'answered' && settled!.submission !== undefined) {
        // The applied answer is the one its submitter was told was accepted, with its own label and identity.
        expect(accepted, JSON.stringify({ round, results, settled })).toHaveLength(1)
        const winner = results.indexOf(accepted[0]!)
        expect(settled!.submission).toBe((accepted[0] as { submission: string }).submission)
        expect(settled!.answer).toEqual([{ id: 'plan-review', selected: [labels[winner]], by: { id: `user-${round}-${winner}` } }])
        for (const [index, result] of results.entries())
          if (index !== winner)
            expect(result).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED', by: { id: `user-${round}-${winner}` } })
        tally.accepted += 1
        tally.refusedAlready += results.length - 1
      } else {
        expect(accepted, JSON.stringify({ round, results, settled })).toEqual([])
        if (settled!.outcome === 'answered') {
          tally.local += 1
          for (const result of results) expect(result).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED' })
        } else {
          expect(settled!.outcome).toBe('interrupted')
          tally.interrupted += 1
          for (const result of results) {
            expect(['WRITER_GONE', 'NO_WRITER'], JSON.stringify(result)).toContain((result as { code: string }).code)
            if ((result as { code: string }).code === 'WRITER_GONE') tally.writerGone += 1
            else tally.noWriter += 1
          }
        }
      }
      // No submission is applied to any other question, nor twice.
      for (const event of events) {
        const data = event.data as QuestionSettled
        if (event.type !== 'question/settled' || data.submission === undefined) continue
        if (data.questionId !== questionId) expect(submissions.has(data.submission)).toBe(true)
      }
      for (const result of results) if (result.status === 'accepted') submissions.add(result.submission)
      const applied = events
        .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).submission !== undefined)
        .map((event) => (event.data as QuestionSettled).submission)
      expect(new Set(applied).size).toBe(applied.length)
    }
    console.log(`answers-local-processes: ${ROUNDS} rounds: ${JSON.stringify(tally)}`)
    expect(tally.accepted + tally.local + tally.interrupted).toBe(ROUNDS)
  })
})
