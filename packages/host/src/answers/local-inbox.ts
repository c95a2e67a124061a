import { lstatSync, type Stats } from 'node:fs'
import { createConnection, type Socket } from 'node:net'
import { join } from 'node:path'
import {
  AnswerInboxError,
  openQuestionsOf,
  type AnswerInbox,
  type AnswerResult,
  type AnswerSubmission,
  type OpenAsks,
  type SessionEvent,
} from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { newId } from '../ids.js'
import { readLogEvents } from '../session/jsonl-read.js'
import { checkAnswerer, checkAnswers, questionStateOf, SessionLogError, verdictOfLog } from '@planmode/store'
import { untrustedChannel } from './channel-trust.js'
import { announcementOf, readAnnouncement, writerState, type Announcement } from './local-announce.js'
import { readLine } from './local-wire.js'

// The submitter's side of the local answer channel of a JSONL session.
// - It reads the log (read-only, no lock) first: an unknown or settled
//   question, or answers that do not fit it, are refused at once.
// - Then it sends the answer to the writer announced next to the log, and
//   waits for one reply line.
// - When the connection ends without a reply, the writer ended (a kill
//   closes its sockets only once it can write nothing more), or closed the
//   channel: the log then says what became of the answer. While the writer
//   still runs, the log is read again until it does (or the signal aborts).

/** Options of {@link localAnswers}. @public */
export interface LocalAnswersOptions {
  /** The folder of the JSONL session logs (`<dir>/<id>.jsonl`), as the writer's `sessionStorePlugin` has it. */
  readonly dir: string
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** How often the log is read again while a writer that dropped the connection still runs. */
const REREAD_MS = 100
/** How long the log is read again for, while that writer still runs, before the outcome is called unknown. */
const REREAD_FOR_MS = 10_000

const refused = (
  code: 'UNKNOWN_SESSION' | 'INVALID_ANSWER' | 'NO_WRITER' | 'WRITER_GONE' | 'UNAVAILABLE',
  message: string,
): AnswerResult => ({ status: 'refused', code, message })
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** What a reply line says, checked: a result, or `undefined` when it is not one. */
function resultOf(line: string, questionId: string, submission: string): AnswerResult | undefined {
  let value: Record<string, unknown>
  try {
    value = JSON.parse(line) as Record<string, unknown>
  } catch {
    return undefined
  }
  if (value?.status === 'accepted' && Number.isSafeInteger(value.seq))
    return { status: 'accepted', questionId, submission, seq: value.seq as number }
  if (value?.status === 'refused' && typeof value.code === 'string' && typeof value.message === 'string') {
    const by = checkAnswerer(value.by)
    return { status: 'refused', code: value.code as never, message: value.message, ...(by.ok && by.by !== undefined ? { by: by.by } : {}) }
  }
  return undefined
}

class LocalAnswerInbox implements AnswerInbox {
  constructor(private readonly dir: string) {}

  private logOf(sessionId: string): string {
    return join(this.dir, `${sessionId}.jsonl`)
  }

  /** The session's events, or the refusal that reading them gives. */
  private async events(sessionId: string): Promise<SessionEvent[] | AnswerResult> {
    try {
      return await readLogEvents(this.logOf(sessionId))
    } catch (error) {
      if (SessionLogError.isInstance(error) && error.code === 'NOT_FOUND')
        return refused('UNKNOWN_SESSION', `there is no session ${sessionId} in ${this.dir}`)
      return refused('UNAVAILABLE', `cannot read the log of session ${sessionId}: ${messageOf(error)}; nothing was sent`)
    }
  }

  async submit(submission: AnswerSubmission): Promise<AnswerResult> {
    const { sessionId, questionId, answers, by, signal } = submission ?? ({} as AnswerSubmission)
    if (typeof sessionId !== 'string' || !ID.test(sessionId) || sessionId.length > 200)
      return refused('UNKNOWN_SESSION', `${JSON.stringify(sessionId)} is not a session id`)
    if (typeof questionId !== 'string' || questionId === '')
      return { status: 'refused', code: 'UNKNOWN_QUESTION', message: `${JSON.stringify(questionId)} is not a question id` }
    const who = checkAnswerer(by)
    if (!who.ok) return refused('INVALID_ANSWER', `the answer says who answered wrongly: ${who.problem}; nothing was sent`)
    const events = await this.events(sessionId)
    if (!Array.isArray(events)) return events
    const id = newId('a')
    const state = questionStateOf(events, questionId)
    const verdict = verdictOfLog(state, sessionId, questionId, id, false)
    if (verdict !== undefined || state.state !== 'open') return verdict!
    const checked = checkAnswers(state.asked.question, answers)
    if (!checked.ok)
      return refused(
        'INVALID_ANSWER',
        `the answer does not fit question ${questionId} of session ${sessionId}: ${checked.problem}; nothing was sent and the question is still open`,
      )
    if (signal?.aborted === true) return refused('UNAVAILABLE', 'the submission was aborted before it was sent; nothing was sent')
    const announced = this.writer(sessionId)
    if ('code' in announced) return (await this.again(sessionId, questionId, id)) ?? refused(announced.code, announced.message)
    let socket: Socket
    try {
      socket = await connect(announced.socket)
    } catch (error) {
      return (
        (await this.again(sessionId, questionId, id)) ??
        refused(
          'NO_WRITER',
          `no process waits for answers to session ${sessionId} (its answer channel ${announced.socket} refused the connection: ${messageOf(error)}); the process that asked question ${questionId} has ended, and the next process to open the session settles it interrupted`,
        )
      )
    }
    const request = {
      v: 1,
      token: announced.token,
      session: sessionId,
      submission: id,
      questionId,
      answers,
      ...(who.by === undefined ? {} : { by: who.by }),
    }
    const onAbort = (): void => void socket.destroy()
    signal?.addEventListener('abort', onAbort, { once: true })
    let line: string | undefined
    try {
      socket.write(JSON.stringify(request) + '\n')
      line = await readLine(socket).catch(() => undefined)
    } finally {
      signal?.removeEventListener('abort', onAbort)
      socket.destroy()
    }
    if (line !== undefined) {
      const result = resultOf(line, questionId, id)
      if (result !== undefined) return result
    }
    return this.settle(sessionId, questionId, id, announced, signal)
  }

  /**
   * The announced writer of `sessionId`, when its channel may be trusted
   * (channel-trust.ts) and its process still runs; else why there is none
   * to reach (`NO_WRITER`), or why what is there must not get the answer
   * (`UNAVAILABLE`). Never waits on what is at the announcement's path.
   */
  private writer(sessionId: string): Announcement | { readonly code: 'NO_WRITER' | 'UNAVAILABLE'; readonly message: string } {
    const log = this.logOf(sessionId)
    const file = announcementOf(log)
    const noWriter = (message: string) => ({ code: 'NO_WRITER' as const, message })
    const untrusted = (why: string) => ({
      code: 'UNAVAILABLE' as const,
      message: `the answer channel of session ${sessionId} cannot be trusted: ${why}; nothing was sent`,
    })
    let read: ReturnType<typeof readAnnouncement>
    let logStats: Stats
    try {
      read = readAnnouncement(file)
      logStats = lstatSync(log)
    } catch (error) {
      return untrusted(`it cannot be read (${messageOf(error)})`)
    }
    if (read === undefined)
      return noWriter(
        `no process waits for answers to session ${sessionId} (no ${file}): the process that asked has ended, and the next process to open the session settles its questions interrupted`,
      )
    if ('unreadable' in read) return untrusted(`${read.unreadable}, not an announcement of its writer`)
    const announced = read.announcement
    if (announced.session !== sessionId) return untrusted(`${file} announces session ${announced.session}`)
    const state = writerState(announced)
    if (state === 'gone')
      return noWriter(
        `no process waits for answers to session ${sessionId}: process ${announced.pid}, which announced its channel, has ended (the next process to open the session settles its questions interrupted)`,
      )
    if (state === 'elsewhere')
      return noWriter(`session ${sessionId} is written on host ${announced.host}: its answer channel cannot be reached from here`)
    const why = untrustedChannel(read, logStats)
    if (why !== undefined) return untrusted(why)
    return announced
  }

  /** The log's verdict on a question that was open when this submitter looked, read once more (it may have been settled meanwhile). */
  private async again(sessionId: string, questionId: string, id: string): Promise<AnswerResult | undefined> {
    const events = await this.events(sessionId)
    if (!Array.isArray(events)) return events
    return verdictOfLog(questionStateOf(events, questionId), sessionId, questionId, id, false)
  }

  /**
   * The connection ended without a reply: the log says what became of the
   * answer once the writer can write no more (it ended), or once it settles
   * the question. Until then, and at most for a while, it is read again.
   */
  private async settle(
    sessionId: string,
    questionId: string,
    id: string,
    announced: Announcement,
    signal: AbortSignal | undefined,
  ): Promise<AnswerResult> {
    const started = Date.now()
    for (;;) {
      const gone = writerState(announced) !== 'alive'
      const events = await this.events(sessionId)
      if (!Array.isArray(events))
        return {
          status: 'unknown',
          submission: id,
          message: `the answer was sent, and the log can no longer be read to tell whether it was applied: ${(events as { message: string }).message}`,
        }
      const verdict = verdictOfLog(questionStateOf(events, questionId), sessionId, questionId, id, true)
      if (verdict !== undefined) return verdict
      if (gone) {
        return refused(
          'WRITER_GONE',
          `the process that asked question ${questionId} of session ${sessionId} ended before it logged this answer, which was not applied; the next process to open the session settles the question interrupted`,
        )
      }
      if (signal?.aborted === true || Date.now() - started > REREAD_FOR_MS) {
        return {
          status: 'unknown',
          submission: id,
          message: `the answer was sent to process ${announced.pid}, which did not reply and still runs; whether it applies it will show in the log (a question/settled with submission ${id})`,
        }
      }
      await sleep(REREAD_MS)
    }
  }

  async questions(sessionId: string): Promise<OpenAsks> {
    if (typeof sessionId !== 'string' || !ID.test(sessionId) || sessionId.length > 200)
      throw new AnswerInboxError('UNKNOWN_SESSION', `${JSON.stringify(sessionId)} is not a session id`)
    const events = await this.events(sessionId)
    if (!Array.isArray(events)) {
      const refusal = events as { code: string; message: string }
      throw new AnswerInboxError(refusal.code === 'UNKNOWN_SESSION' ? 'UNKNOWN_SESSION' : 'UNAVAILABLE', refusal.message)
    }
    const open = openQuestionsOf(events).map((event) => ({ ...event.data, seq: event.seq }))
    return { open, writer: !('code' in this.writer(sessionId)) }
  }
}

function connect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path)
    socket.once('connect', () => {
      socket.off('error', reject)
      socket.on('error', () => {})
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

/**
 * Answers to the questions of JSONL sessions in `dir`, from any local
 * process: the submitter side of the JSONL store's answer channel (a unix
 * socket the writer announces in `<dir>/<id>.jsonl.answers` while its asks
 * wait). No lock is taken and nothing is written but the request.
 *
 * @example
 * ```ts
 * const inbox = localAnswers({ dir: `${homedir()}/.planmode/sessions` })
 * const { open } = await inbox.questions(sessionId)
 * const result = await inbox.submit({ sessionId, questionId: open[0]!.questionId, answers: [{ id: 'plan-review', selected: ['Approve'] }] })
 * ```
 *
 * @public
 */
export function localAnswers(options: LocalAnswersOptions): AnswerInbox {
  if (typeof options?.dir !== 'string' || options.dir === '')
    throw new TypeError('localAnswers: `dir` must be the folder of the session logs')
  return new LocalAnswerInbox(options.dir)
}
