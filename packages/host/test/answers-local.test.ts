import { mkdtemp, readFile, rm, stat, writeFile, readdir, chmod } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import {
  localAnswers,
  sessionInvariantsPlugin,
  sessionStorePlugin,
  userQuestionsPlugin,
  type HostSession,
  type SessionStoreConfig,
} from '@planmode/host'
import {
  UserQuestionError,
  type AnswerResult,
  type QuestionSettled,
  type SessionEvent,
  type UserAnswer,
  type UserQuestion,
} from '@planmode/seams'
import { REVIEW_QUESTION } from '@planmode/testkit'
import { fakeAgent, recordingLogger } from './helpers.js'

const dirs: string[] = []
const contexts: Context[] = []
afterEach(async () => {
  for (const ctx of contexts.splice(0)) ctx.dispose()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function tempDir(prefix = 'planmode-answers-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

/** A writer: the JSONL store over `dir`, the user-questions runtime, one session and a bare agent. */
async function writer(dir: string, config: Partial<SessionStoreConfig> = {}) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  contexts.push(ctx)
  ctx.plugin(sessionInvariantsPlugin)
  ctx.plugin(sessionStorePlugin, { dir, durability: 'append', ...config })
  ctx.plugin(userQuestionsPlugin)
  const session = await ctx.require('sessions').create()
  return { ctx, logger, session, questions: ctx.require('userQuestions'), agent: fakeAgent(session, { id: 'writer-agent' }) }
}

/** A provider that holds every ask until the test answers it, recording its signal. */
function heldProvider() {
  const held: { signal: AbortSignal | undefined; answer(answers: readonly UserAnswer[]): void; fail(error: unknown): void }[] = []
  return {
    held,
    provider: {
      ask: ({ signal }: { signal?: AbortSignal }) =>
        new Promise<readonly UserAnswer[]>((resolve, reject) => {
          held.push({ signal, answer: resolve, fail: reject })
        }),
    },
  }
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5))
}

const asked = (session: HostSession): SessionEvent<'question/asked'>[] =>
  session.events.filter((event) => event.type === 'question/asked') as SessionEvent<'question/asked'>[]
const settledOf = (session: { events: readonly SessionEvent[] }, questionId: string): QuestionSettled[] =>
  session.events
    .filter((event) => event.type === 'question/settled' && (event.data as QuestionSettled).questionId === questionId)
    .map((event) => event.data as QuestionSettled)

/** Starts an ask and resolves once its question/asked is logged (its channel is open then). */
async function openAsk(
  w: Awaited<ReturnType<typeof writer>>,
  questions: readonly UserQuestion[] = [REVIEW_QUESTION],
  signal?: AbortSignal,
) {
  const before = asked(w.session).length
  const pending = w.questions.ask({ agent: w.agent, questions, ...(signal === undefined ? {} : { signal }) }).then(
    (answers) => ({ answers }),
    (error: unknown) => ({ error }),
  )
  await until(() => asked(w.session).length > before)
  return { questionId: asked(w.session).at(-1)!.data.questionId, pending }
}

const approve = [{ id: 'plan-review', selected: ['Approve'] }]

describe('answers from another process over the JSONL store (local channel)', () => {
  it('an answer sent while the local provider waits wins: logged with its submission and `by`, the provider told by its signal, the channel gone after', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    const { held, provider } = heldProvider()
    w.questions.registerProvider(provider)
    const { questionId, pending } = await openAsk(w)
    const announcement = join(dir, `${w.session.id}.jsonl.answers`)
    expect(existsSync(announcement)).toBe(true)
    const result = await localAnswers({ dir }).submit({
      sessionId: w.session.id,
      questionId,
      answers: approve,
      by: { id: 'ada', name: 'Ada' },
    })
    expect(result).toMatchObject({ status: 'accepted', questionId })
    const outcome = await pending
    expect(outcome).toEqual({ answers: [{ id: 'plan-review', selected: ['Approve'], by: { id: 'ada', name: 'Ada' } }] })
    const [settled] = settledOf(w.session, questionId)
    expect(settled).toEqual({
      questionId,
      outcome: 'answered',
      answer: [{ id: 'plan-review', selected: ['Approve'], by: { id: 'ada', name: 'Ada' } }],
      by: { id: 'ada', name: 'Ada' },
      submission: (result as { submission: string }).submission,
    })
    expect(w.session.events.find((event) => event.type === 'question/settled')!.seq).toBe((result as { seq: number }).seq)
    // The provider was told: its signal aborted with a reason that says who answered.
    expect(held[0]!.signal!.aborted).toBe(true)
    expect(UserQuestionError.isInstance(held[0]!.signal!.reason) && held[0]!.signal!.reason.message).toContain(
      'answered from another process by Ada (ada)',
    )
    // Its answer now is ignored: the question is settled once.
    held[0]!.answer([{ id: 'plan-review', selected: ['Keep planning'] }])
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(settledOf(w.session, questionId)).toHaveLength(1)
    expect(existsSync(announcement)).toBe(false)
    // A later answer is refused, naming who answered.
    const later = await localAnswers({ dir }).submit({ sessionId: w.session.id, questionId, answers: approve, by: { id: 'bob' } })
    expect(later).toEqual({
      status: 'refused',
      code: 'ALREADY_ANSWERED',
      by: { id: 'ada', name: 'Ada' },
      message: expect.stringContaining('already answered by Ada (ada)'),
    })
  })

  it('the local provider answering first wins: a later answer is refused ALREADY_ANSWERED, anonymous when the answer named nobody', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    const { held, provider } = heldProvider()
    w.questions.registerProvider(provider)
    const { questionId, pending } = await openAsk(w)
    held[0]!.answer([{ id: 'plan-review', selected: ['Keep planning'], custom: 'more tests' }])
    expect(await pending).toEqual({ answers: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'more tests' }] })
    const result = await localAnswers({ dir }).submit({ sessionId: w.session.id, questionId, answers: approve })
    expect(result).toMatchObject({
      status: 'refused',
      code: 'ALREADY_ANSWERED',
      message: expect.stringContaining('already answered by anonymous'),
    })
    expect(result).not.toHaveProperty('by')
    expect(settledOf(w.session, questionId)).toEqual([
      { questionId, outcome: 'answered', answer: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'more tests' }] },
    ])
  })

  it('several answers at once: exactly one is applied, every other is told who answered', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    w.questions.registerProvider(heldProvider().provider)
    const { questionId, pending } = await openAsk(w)
    const inbox = localAnswers({ dir })
    const labels = ['Approve', 'Keep planning', 'Stop planning', 'Approve', 'Keep planning', 'Stop planning']
    const results = await Promise.all(
      labels.map((label, index) =>
        inbox.submit({
          sessionId: w.session.id,
          questionId,
          answers: [{ id: 'plan-review', selected: [label] }],
          by: { id: `user-${index}` },
        }),
      ),
    )
    const accepted = results.filter((result) => result.status === 'accepted')
    expect(accepted).toHaveLength(1)
    const winner = results.indexOf(accepted[0]!)
    const [settled] = settledOf(w.session, questionId)
    expect(settled).toMatchObject({
      outcome: 'answered',
      submission: (accepted[0] as { submission: string }).submission,
      by: { id: `user-${winner}` },
    })
    expect(settled!.answer).toEqual([{ id: 'plan-review', selected: [labels[winner]], by: { id: `user-${winner}` } }])
    for (const [index, result] of results.entries()) {
      if (index !== winner) expect(result).toMatchObject({ status: 'refused', code: 'ALREADY_ANSWERED', by: { id: `user-${winner}` } })
    }
    expect(await pending).toMatchObject({ answers: settled!.answer })
  })

  it('an answer that does not fit is refused INVALID_ANSWER and consumes nothing; a valid one is applied after', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    w.questions.registerProvider(heldProvider().provider)
    const { questionId, pending } = await openAsk(w)
    const inbox = localAnswers({ dir })
    const submit = (answers: unknown, by?: unknown) =>
      inbox.submit({
        sessionId: w.session.id,
        questionId,
        answers: answers as UserAnswer[],
        ...(by === undefined ? {} : { by: by as never }),
      })
    const bad: [unknown, string][] = [
      ['approve', 'answers must be an array'],
      [[], 'question "plan-review" has no answer'],
      [[{ id: 'other', selected: ['Approve'] }], 'is not a question of this ask'],
      [[{ id: 'plan-review', selected: ['Approve please'] }], '"Approve please" is not an option'],
      [[{ id: 'plan-review', selected: ['Approve', 'Keep planning'] }], 'takes one option'],
      [[{ id: 'plan-review', selected: [] }], 'selects no option and has no custom text'],
      [
        [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 9, text: 'no such line' }] }],
        "must be a line of the question's detail (1 to 4)",
      ],
      [[{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 1, text: '  ' }] }], 'must be a non-blank string'],
      [[{ id: 'plan-review', selected: ['Approve'], handoff: { fresh: true } }], 'offers no handoff'],
      [[{ id: 'plan-review', selected: ['Approve'], by: { id: 'eve' } }], 'unknown member "by"'],
      [
        [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 1, text: 'x', by: { id: ' ' } }] }],
        'comments[0].by.id must be a non-blank string',
      ],
      [
        [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 1, text: 'x', by: { id: 'rita', role: 'x' } }] }],
        'comments[0].by has an unknown member "role"',
      ],
      [
        [
          { id: 'plan-review', selected: ['Approve'] },
          { id: 'plan-review', selected: ['Approve'] },
        ],
        'answered twice',
      ],
    ]
    for (const [answers, problem] of bad) {
      const result = await submit(answers)
      expect(result, JSON.stringify(answers)).toMatchObject({
        status: 'refused',
        code: 'INVALID_ANSWER',
        message: expect.stringContaining(problem),
      })
    }
    expect(await submit(approve, { id: '' })).toMatchObject({
      status: 'refused',
      code: 'INVALID_ANSWER',
      message: expect.stringContaining('by.id must be a non-blank string'),
    })
    expect(await submit(approve, { id: 'x', role: 'admin' })).toMatchObject({
      status: 'refused',
      code: 'INVALID_ANSWER',
      message: expect.stringContaining('unknown member "role"'),
    })
    expect(settledOf(w.session, questionId)).toEqual([])
    // A comment may name its own author (several reviewers commented on one review).
    const ok = await submit([
      {
        id: 'plan-review',
        selected: ['Keep planning'],
        custom: 'split step 2',
        comments: [
          { line: 3, text: 'why first?' },
          { line: 1, text: 'title?', by: { id: 'rita', name: 'Rita' } },
        ],
      },
    ])
    expect(ok).toMatchObject({ status: 'accepted' })
    expect(await pending).toEqual({
      answers: [
        {
          id: 'plan-review',
          selected: ['Keep planning'],
          custom: 'split step 2',
          comments: [
            { line: 3, text: 'why first?' },
            { line: 1, text: 'title?', by: { id: 'rita', name: 'Rita' } },
          ],
        },
      ],
    })
  })

  it('the writer checks what reaches its socket itself: a bad answer, a wrong token, another session, garbage; the question stays open', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    w.questions.registerProvider(heldProvider().provider)
    const { questionId } = await openAsk(w)
    const announcement = JSON.parse(await readFile(join(dir, `${w.session.id}.jsonl.answers`), 'utf8')) as { socket: string; token: string }
    const send = (line: string) =>
      new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
        const socket = createConnection(announcement.socket)
        let text = ''
        socket.on('data', (chunk) => (text += chunk.toString()))
        socket.on('end', () => resolve(text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>)))
        socket.on('error', reject)
        socket.write(line + '\n')
      })
    const base = { v: 1, token: announcement.token, session: w.session.id, submission: 'a_test_1', questionId }
    expect(await send(JSON.stringify({ ...base, answers: [{ id: 'plan-review', selected: ['Nope'] }] }))).toMatchObject({
      status: 'refused',
      code: 'INVALID_ANSWER',
    })
    expect(await send(JSON.stringify({ ...base, token: 'f'.repeat(32), answers: approve }))).toMatchObject({
      status: 'refused',
      code: 'UNAVAILABLE',
    })
    expect(await send(JSON.stringify({ ...base, session: 'other', answers: approve }))).toMatchObject({
      status: 'refused',
      code: 'UNAVAILABLE',
    })
    expect(await send(JSON.stringify({ ...base, submission: 'has space', answers: approve }))).toMatchObject({
      status: 'refused',
      code: 'INVALID_ANSWER',
    })
    expect(await send('not json')).toMatchObject({ status: 'refused', code: 'INVALID_ANSWER' })
    expect(await send(JSON.stringify({ ...base, questionId: 'q_unknown', answers: approve }))).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_QUESTION',
    })
    expect(settledOf(w.session, questionId)).toEqual([])
    // The same submission sent twice is applied once: the second hears it was accepted.
    const first = await send(JSON.stringify({ ...base, submission: 'a_twice', answers: approve }))
    expect(first).toMatchObject({ status: 'accepted' })
    expect(settledOf(w.session, questionId)).toHaveLength(1)
  })

  it('refuses answers to an unknown session, an unknown question, a cancelled or failed ask, and an ask whose process ended (NO_WRITER)', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    const inbox = localAnswers({ dir })
    expect(await inbox.submit({ sessionId: 'no-such-session', questionId: 'q', answers: approve })).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_SESSION',
    })
    expect(await inbox.submit({ sessionId: '../etc/passwd', questionId: 'q', answers: approve })).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_SESSION',
    })
    expect(await inbox.submit({ sessionId: w.session.id, questionId: 'q_nope', answers: approve })).toMatchObject({
      status: 'refused',
      code: 'UNKNOWN_QUESTION',
    })
    const { held, provider } = heldProvider()
    w.questions.registerProvider(provider)
    const controller = new AbortController()
    const cancelled = await openAsk(w, [REVIEW_QUESTION], controller.signal)
    controller.abort()
    await cancelled.pending
    expect(await inbox.submit({ sessionId: w.session.id, questionId: cancelled.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'QUESTION_CLOSED',
      message: expect.stringContaining('cancelled'),
    })
    const failed = await openAsk(w)
    held.at(-1)!.fail(new Error('the terminal went away'))
    await failed.pending
    expect(await inbox.submit({ sessionId: w.session.id, questionId: failed.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'QUESTION_CLOSED',
      message: expect.stringContaining('the terminal went away'),
    })
    // An ask whose process is gone: its announcement names a process that no longer runs.
    const open = await openAsk(w)
    const file = join(dir, `${w.session.id}.jsonl.answers`)
    const announcement = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    await writeFile(file, JSON.stringify({ ...announcement, pid: 2 ** 22 + 17 }))
    expect(await inbox.submit({ sessionId: w.session.id, questionId: open.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'NO_WRITER',
      message: expect.stringContaining('has ended'),
    })
    expect((await inbox.questions(w.session.id)).writer).toBe(false)
    await rm(file)
    expect(await inbox.submit({ sessionId: w.session.id, questionId: open.questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'NO_WRITER',
    })
    expect(settledOf(w.session, open.questionId)).toEqual([])
  })

  it('lists the open asks of a session and whether a writer waits', async () => {
    const dir = await tempDir()
    const w = await writer(dir)
    const inbox = localAnswers({ dir })
    expect(await inbox.questions(w.session.id)).toEqual({ open: [], writer: false })
    w.questions.registerProvider(heldProvider().provider)
    const { questionId } = await openAsk(w)
    const listed = await inbox.questions(w.session.id)
    expect(listed).toEqual({ writer: true, open: [{ questionId, agent: 'writer-agent', question: [REVIEW_QUESTION], seq: 0 }] })
    await expect(inbox.questions('missing')).rejects.toMatchObject({ code: 'UNKNOWN_SESSION' })
  })

  it("who may answer: the socket gets the log's owner and group read-write bits, the announcement its read bits (written by nobody), both the log's group; the socket folder is private, and a long session folder still works", async () => {
    const base = await tempDir()
    const dir = join(base, 'a-very-long-folder-name-to-pass-the-unix-socket-path-limit'.repeat(3))
    const socketDir = join(await tempDir('pm-s-'), 'sockets')
    const w = await writer(dir, { answers: { socketDir } })
    expect(Buffer.byteLength(join(dir, `${w.session.id}.jsonl`))).toBeGreaterThan(108)
    await chmod(w.session.file!, 0o664)
    w.questions.registerProvider(heldProvider().provider)
    const { questionId, pending } = await openAsk(w)
    const file = join(dir, `${w.session.id}.jsonl.answers`)
    const announcement = JSON.parse(await readFile(file, 'utf8')) as { socket: string }
    expect((await stat(file)).mode & 0o777).toBe(0o640)
    expect(announcement.socket.startsWith(socketDir + '/')).toBe(true)
    expect((await stat(announcement.socket)).isSocket()).toBe(true)
    expect((await stat(announcement.socket)).mode & 0o777).toBe(0o660)
    expect((await stat(socketDir)).mode & 0o777).toBe(0o711)
    expect(await localAnswers({ dir }).submit({ sessionId: w.session.id, questionId, answers: approve })).toMatchObject({
      status: 'accepted',
    })
    await pending
    expect(await readdir(socketDir)).toEqual([])
  })

  it('a socket folder others can write is refused: the ask goes on without answers from other processes, with a warning', async () => {
    const dir = await tempDir()
    const socketDir = await tempDir('pm-open-')
    await chmod(socketDir, 0o777)
    const w = await writer(dir, { answers: { socketDir } })
    const { held, provider } = heldProvider()
    w.questions.registerProvider(provider)
    const { questionId, pending } = await openAsk(w)
    expect(
      w.logger.lines.some(
        (line) =>
          line.level === 'warn' &&
          line.message.includes('takes no answers from other processes') &&
          line.message.includes('can be written by others'),
      ),
    ).toBe(true)
    expect(await localAnswers({ dir }).submit({ sessionId: w.session.id, questionId, answers: approve })).toMatchObject({
      status: 'refused',
      code: 'NO_WRITER',
    })
    // Without a channel the provider gets the request's own signal, unchanged.
    expect(held[0]!.signal).toBeUndefined()
    held[0]!.answer(approve)
    expect(await pending).toEqual({ answers: approve })
  })

  it('answers: false turns the channel off (no answerDesk, no answerInbox); so does a store in memory', async () => {
    const dir = await tempDir()
    const off = await writer(dir, { answers: false })
    expect(off.ctx.get('answerDesk')).toBeUndefined()
    expect(off.ctx.get('answerInbox')).toBeUndefined()
    const memory = new Context({ logger: recordingLogger() })
    contexts.push(memory)
    memory.plugin(sessionStorePlugin)
    expect(memory.get('answerDesk')).toBeUndefined()
    const on = await writer(await tempDir())
    expect(on.ctx.get('answerInbox')).toBeDefined()
  })
})

export type { AnswerResult }
