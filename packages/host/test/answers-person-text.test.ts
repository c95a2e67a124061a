import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { localAnswers, sessionStorePlugin } from '@planmode/host'
import type { AnswerResult, QuestionAnswerer, QuestionSettled, SessionEvent, UserAnswer } from '@planmode/seams'
import { REVIEW_QUESTION, startChild, stopChildren } from '@planmode/testkit'
import { bundleChild, recordingLogger } from './helpers.js'

/**
 * SPEC §22.4 over the JSONL store's local channel, between real processes:
 * a writer child asks a plan review and waits; the test process answers it
 * from outside, with text a person may not write (U+0000, lone surrogates,
 * ANSI escapes, line breaks, bidi controls, names of nothing visible) in
 * `by`, the feedback, a comment or an edit. Each is refused `INVALID_ANSWER`
 * before anything is appended, whether the submitter checks it (the inbox)
 * or sends it raw on the socket (the writer checks it again); the question
 * stays open and a later valid answer settles it. And a settlement the store
 * cannot append (a write the kernel refuses: EFBIG under a file size limit)
 * never leaves the question open with nobody waiting: the writer settles it
 * `failed` at its next successful append, or, when it dies first, the next
 * writer settles it `interrupted`.
 */

// Modes: `wait` asks and waits for an answer from another process; `big-local` answers at its own terminal (when the
// parent writes `local`) with feedback too large for the file size limit the parent sets, then appends an event when the
// parent writes `next`.
const writerSource = `
import { Context } from '@planmode/context'
import { sessionInvariantsPlugin, sessionStorePlugin, userQuestionsPlugin } from './index.ts'
const [dir, id, mode] = process.argv.slice(2)
const quiet = () => {}
const ctx = new Context({ logger: { debug: quiet, info: quiet, warn: quiet, error: quiet } })
ctx.plugin(sessionInvariantsPlugin)
ctx.plugin(sessionStorePlugin, { dir, durability: 'never' })
ctx.plugin(userQuestionsPlugin)
const sessions = ctx.require('sessions')
const session = await sessions.create({ id })
ctx.on('session/event', ({ event }) => { if (event.type === 'question/asked') process.stdout.write('asked ' + event.data.questionId + '\\n') })
const lines = []
let heard
process.stdin.on('data', (chunk) => { lines.push(...String(chunk).split('\\n').filter(Boolean)); heard?.() })
const next = (word) => new Promise((resolve) => { const look = () => { const at = lines.indexOf(word); if (at >= 0) { lines.splice(at, 1); resolve() } else heard = look }; look() })
ctx.require('userQuestions').registerProvider({
  ask: ({ signal }) => new Promise((resolve, reject) => {
    if (mode === 'big-local') void next('local').then(() => resolve([{ id: 'plan-review', selected: ['Keep planning'], custom: 'x'.repeat(16384) }]))
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
  }),
})
const agent = { id: 'writer-agent', session, steer() {}, inject() {} }
try {
  const answers = await ctx.require('userQuestions').ask({ agent, questions: [${JSON.stringify(REVIEW_QUESTION)}] })
  process.stdout.write('answered ' + JSON.stringify(answers) + '\\n')
} catch (error) {
  process.stdout.write('rejected ' + (error.code ?? error.message) + '\\n')
  await next('next')
  await session.append('test/event', { turn: 1 })
  process.stdout.write('appended\\n')
}
await sessions.close(session)
ctx.dispose()
process.stdin.destroy()
`

let writerFile: string
let dir: string

beforeAll(async () => {
  writerFile = await bundleChild('person-text-writer', writerSource)
  dir = await mkdtemp(join(tmpdir(), 'planmode-person-text-'))
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

/** Sends one request on the session's socket as an old or hostile submitter would, skipping the inbox's own checks. */
async function sendRaw(id: string, questionId: string, answers: unknown, by?: unknown): Promise<AnswerResult> {
  const announcement = JSON.parse(await readFile(join(dir, `${id}.jsonl.answers`), 'utf8')) as { socket: string; token: string }
  const request = {
    v: 1,
    token: announcement.token,
    session: id,
    submission: `raw${Math.random().toString(36).slice(2, 10)}`,
    questionId,
    answers,
    ...(by === undefined ? {} : { by }),
  }
  return new Promise((resolve, reject) => {
    const socket = createConnection(announcement.socket)
    let reply = ''
    socket.on('data', (chunk) => (reply += chunk.toString()))
    socket.on('end', () => resolve(JSON.parse(reply) as AnswerResult))
    socket.on('error', reject)
    socket.write(JSON.stringify(request) + '\n')
  })
}

/** `by` values a person may not give (§22.4). */
const BAD_BY: [string, QuestionAnswerer][] = [
  ['U+0000 in by.id', { id: 'ada\u0000' }],
  ['a lone surrogate in by.id', { id: 'ada\uD800' }],
  ['an ANSI escape in by.name', { id: 'ada', name: '\u001b[2J\u001b[Hroot' }],
  ['a line break in by.name', { id: 'ada', name: 'Ada\nroot approved' }],
  ['a bidi override in by.id', { id: '\u202Eada' }],
  ['a zero-width-only by.name', { id: 'ada', name: '\u200B\u200D' }],
]

/** Answers whose text may not be logged (§22.4). */
const BAD_ANSWERS: [string, UserAnswer[]][] = [
  ['U+0000 in the feedback', [{ id: 'plan-review', selected: ['Keep planning'], custom: 'more\u0000' }]],
  ['a lone surrogate in the feedback', [{ id: 'plan-review', selected: ['Keep planning'], custom: 'more\uDC00' }]],
  ['a lone surrogate in a comment', [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 1, text: 'why\uD800' }] }]],
  ['U+0000 in an edit', [{ id: 'plan-review', selected: ['Approve'], edit: '# Plan\u0000\n\n1. read' }]],
  ['U+0000 in custom text alone', [{ id: 'plan-review', selected: [], custom: '\u0000' }]],
]

describe('text a person writes cannot kill a review: the JSONL store’s answer inbox (SPEC §22.4)', () => {
  it('every bad by, feedback, comment, custom text or edit is refused INVALID_ANSWER by the inbox and by the writer itself; the question stays open; a valid answer then settles it', async () => {
    const id = 'bad-text'
    const writer = startChild(writerFile, [dir, id, 'wait'])
    const questionId = await writer.line(/^asked (\S+)$/m)
    const inbox = localAnswers({ dir })
    const approve = [{ id: 'plan-review', selected: ['Approve'] }]
    for (const [what, by] of BAD_BY) {
      expect(await inbox.submit({ sessionId: id, questionId, answers: approve, by }), what).toMatchObject({
        status: 'refused',
        code: 'INVALID_ANSWER',
      })
      expect(await sendRaw(id, questionId, approve, by), `${what}, sent raw`).toMatchObject({
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
      expect(await sendRaw(id, questionId, answers, { id: 'ada' }), `${what}, sent raw`).toMatchObject({
        status: 'refused',
        code: 'INVALID_ANSWER',
        message: expect.stringContaining('still open'),
      })
    }
    // Nothing was appended; the question is open and its writer still waits for it.
    expect(settlementsOf(await logOf(id), questionId)).toEqual([])
    expect(await inbox.questions(id)).toMatchObject({ open: [{ questionId }], writer: true })
    const accepted = await inbox.submit({
      sessionId: id,
      questionId,
      answers: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'two lines\nof feedback, 👩‍💻' }],
      by: { id: 'ada', name: 'Ada Lovelace' },
    })
    expect(accepted).toMatchObject({ status: 'accepted' })
    expect(await writer.line(/^(answered .+)$/m)).toContain('"by":{"id":"ada","name":"Ada Lovelace"}')
    expect((await writer.exited).code).toBe(0)
    expect(settlementsOf(await logOf(id), questionId)).toMatchObject([
      { outcome: 'answered', by: { id: 'ada', name: 'Ada Lovelace' }, submission: (accepted as { submission: string }).submission },
    ])
  })
})

describe('a settlement the store cannot append is never left open with nobody waiting (SPEC §22.4)', () => {
  /** Starts a writer whose own answer cannot be written: the log may grow by 1 KiB more than it has once the ask is logged. */
  async function refusedSettlement(id: string) {
    const writer = startChild(writerFile, [dir, id, 'big-local'])
    const questionId = await writer.line(/^asked (\S+)$/m)
    const size = (await stat(join(dir, `${id}.jsonl`))).size
    execFileSync('prlimit', ['--pid', String(writer.child.pid), `--fsize=${size + 1024}:${size + 1024}`])
    writer.child.stdin!.write('local\n')
    expect(await writer.line(/^rejected (\S+)$/m)).toBe('UNWRITABLE')
    // Refused: the question is open in the log, its ask is over.
    expect(settlementsOf(await logOf(id), questionId)).toEqual([])
    return { writer, questionId }
  }

  it('a write the kernel refuses (EFBIG): the writer settles the question failed at its next append, in the same write', async () => {
    const id = 'owed-failed'
    const { writer, questionId } = await refusedSettlement(id)
    writer.child.stdin!.write('next\n')
    await writer.line(/^(appended)$/m)
    expect((await writer.exited).code).toBe(0)
    const events = await logOf(id)
    expect(events.map((event) => event.type)).toEqual(['question/asked', 'question/settled', 'test/event'])
    expect(settlementsOf(events, questionId)).toEqual([
      { questionId, outcome: 'failed', error: expect.stringMatching(/^its settlement could not be logged \(.*cannot write session log/) },
    ])
    expect(
      await localAnswers({ dir }).submit({ sessionId: id, questionId, answers: [{ id: 'plan-review', selected: ['Approve'] }] }),
    ).toMatchObject({ status: 'refused', code: 'QUESTION_CLOSED' })
  })

  it('the writer killed before it appends again: the next writer settles the question interrupted when it opens the session', async () => {
    const id = 'owed-killed'
    const { writer, questionId } = await refusedSettlement(id)
    writer.child.kill('SIGKILL')
    await writer.exited
    const ctx = new Context({ logger: recordingLogger() })
    ctx.plugin(sessionStorePlugin, { dir })
    const session = await ctx.require('sessions').open(id)
    expect(settlementsOf(session.events, questionId)).toEqual([{ questionId, outcome: 'interrupted' }])
    ctx.dispose()
  })
})
