import { timingSafeEqual } from 'node:crypto'
import { lstatSync, unlinkSync } from 'node:fs'
import { chmod, lstat, readdir, stat, unlink } from 'node:fs/promises'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import type { Logger } from '@planmode/context'
import type { Session } from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { NOTHING_OPENED, questionStateOf, verdictOfLog, type AnswerDecision, type AnswerDesk, type IncomingAnswer, type OpenedQuestion } from '@planmode/store'
import {
  announcementFor,
  announcementOf,
  channelMode,
  isChannelSocket,
  newSocketPath,
  readAnnouncement,
  socketFolder,
  writeAnnouncement,
  writerState,
  type Announcement,
} from './local-announce.js'
import { readLine, WireError, writeLine } from './local-wire.js'

// The writer's side of the local answer channel of a JSONL session.
// - A session has a channel (a unix socket and its announcement, see
//   local-announce.ts) while at least one of its asks is open here: the
//   first ask opens it, before its question/asked is logged; the last one
//   to settle closes it, after its question/settled is logged and every
//   answer being decided has its reply.
// - Each connection carries one request; its answer goes to the ask it
//   names (which decides it, see the user-questions runtime), or, when no
//   ask of this process has that question open, is refused from the log.
// - A channel replaces a stale announcement of its session (a dead writer's)
//   and removes the socket it names. Channels of one session open and close
//   one after the other, so a closing one never removes its successor's
//   announcement. On exit the process removes its announcements and sockets.
// - Stale sockets of dead processes in the socket folder (older than a
//   minute, refusing connections) are removed by the first channel a
//   process opens.

/** Options of {@link LocalAnswerDesk}. */
export interface LocalDeskOptions {
  readonly logger: Logger
  /** The folder of the sockets; by default a private one (`local-announce.ts`). */
  readonly socketDir?: string
  /** The log file of `session` when this store writes it, else `undefined`. */
  readonly logOf: (session: Session) => string | undefined
}

const SUBMISSION = /^[A-Za-z0-9_-]{1,64}$/
/** How long a connection may stay silent before it is dropped. */
const IDLE_MS = 30_000
/** Sockets younger than this are never swept (their channel may be starting). */
const SWEEP_AGE_MS = 60_000

/** Announcements and sockets this process serves, removed on exit. */
const EXIT = Symbol.for('@planmode/host/answer-channels')

function served(): Map<string, Announcement> {
  const global = globalThis as { [EXIT]?: Map<string, Announcement> }
  if (global[EXIT] === undefined) {
    const table = new Map<string, Announcement>()
    global[EXIT] = table
    process.once('exit', () => {
      for (const [file, announcement] of table) removeOwn(file, announcement)
    })
  }
  return global[EXIT]
}

/** Removes `file` and its socket while the file still holds `announcement`'s token (synchronous: also the exit hook). */
function removeOwn(file: string, announcement: Announcement): void {
  try {
    const now = readAnnouncement(file)
    if (typeof now === 'object' && now.token === announcement.token) unlinkSync(file)
  } catch {
    // gone already, or not ours any more
  }
  try {
    if (lstatSync(announcement.socket).isSocket()) unlinkSync(announcement.socket)
  } catch {
    // gone already
  }
}

const tokenMatches = (given: unknown, token: string): boolean =>
  typeof given === 'string' && given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token))

/** The channel of one session while asks of it are open here. */
class SessionChannel {
  readonly questions = new Map<string, (answer: IncomingAnswer) => Promise<AnswerDecision>>()
  private readonly deciding = new Set<Promise<unknown>>()
  private readonly connections = new Set<Socket>()
  private server: Server | undefined
  private announcement: Announcement | undefined
  private readonly file: string

  constructor(
    private readonly session: Session,
    private readonly log: string,
    private readonly logger: Logger,
  ) {
    this.file = announcementOf(log)
  }

  /** Listens on a new socket, then announces it (replacing a stale announcement). */
  async start(folder: string): Promise<void> {
    const mode = channelMode((await stat(this.log)).mode)
    const stale = readAnnouncement(this.file)
    if (typeof stale === 'object' && isChannelSocket(stale.socket) && writerState(stale) === 'gone') {
      await unlink(stale.socket).catch(() => {})
    }
    const socket = newSocketPath(folder)
    const server = createServer((connection) => this.serve(connection))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socket, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (error) => this.logger.warn(`user-questions: the answer channel of session ${this.session.id} failed: ${error.message}`))
    this.server = server
    try {
      await chmod(socket, mode)
      const announcement = announcementFor(this.session.id, socket)
      await writeAnnouncement(this.file, announcement, mode)
      this.announcement = announcement
      served().set(this.file, announcement)
    } catch (error) {
      await this.stop()
      throw error
    }
  }

  /** Stops taking connections, lets the answers being decided get their reply, then removes the socket and the announcement. */
  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (this.announcement !== undefined) {
      served().delete(this.file)
      removeOwn(this.file, this.announcement)
    }
    const closed = server === undefined ? Promise.resolve() : new Promise<void>((resolve) => server.close(() => resolve()))
    await this.idle()
    // Connections that have not sent their request yet: the submitter finds the question settled in the log.
    for (const connection of this.connections) connection.destroy()
    await closed
  }

  /** Resolves once no answer that was read is being decided. */
  async idle(): Promise<void> {
    while (this.deciding.size > 0) await Promise.allSettled([...this.deciding])
  }

  private serve(connection: Socket): void {
    this.connections.add(connection)
    connection.on('close', () => this.connections.delete(connection))
    connection.on('error', () => {})
    connection.setTimeout(IDLE_MS, () => connection.destroy())
    readLine(connection).then(
      (line) => {
        if (line === undefined) return
        connection.setTimeout(0)
        const work = this.answer(connection, line).catch((error: unknown) => {
          this.logger.warn(`user-questions: an answer to session ${this.session.id} could not be handled: ${messageOf(error)}`)
          connection.destroy()
        })
        this.deciding.add(work)
        void work.finally(() => this.deciding.delete(work))
      },
      (error: unknown) => {
        if (error instanceof WireError && error.kind === 'too-long') {
          void writeLine(connection, { status: 'refused', code: 'INVALID_ANSWER', message: `${error.message}: the answer was not read; the question is still open` }).finally(() => connection.destroy())
        } else connection.destroy()
      },
    )
  }

  private async answer(connection: Socket, line: string): Promise<void> {
    let request: Record<string, unknown>
    try {
      request = JSON.parse(line) as Record<string, unknown>
      if (typeof request !== 'object' || request === null || Array.isArray(request)) throw new Error('not an object')
    } catch {
      await writeLine(connection, { status: 'refused', code: 'INVALID_ANSWER', message: 'the request is not a JSON object; nothing was applied' })
      return
    }
    const announcement = this.announcement
    if (request.v !== 1 || announcement === undefined || !tokenMatches(request.token, announcement.token) || request.session !== this.session.id) {
      await writeLine(connection, {
        status: 'refused',
        code: 'UNAVAILABLE',
        message: `this channel does not take that request (another version, token or session than session ${this.session.id}'s); nothing was applied`,
      })
      return
    }
    const { submission, questionId } = request
    if (typeof submission !== 'string' || !SUBMISSION.test(submission) || typeof questionId !== 'string' || questionId === '') {
      await writeLine(connection, { status: 'refused', code: 'INVALID_ANSWER', message: 'the request needs a submission id (1 to 64 letters, digits, "_" or "-") and a questionId; nothing was applied' })
      return
    }
    const take = this.questions.get(questionId)
    const decision: AnswerDecision = take !== undefined ? await take({ submission, questionId, answers: request.answers, by: request.by }) : this.fromLog(questionId, submission)
    await writeLine(connection, decision.status === 'unknown' ? this.fromLog(questionId, submission) : decision)
  }

  /** The decision the log gives for an answer to a question no ask here has open. */
  private fromLog(questionId: string, submission: string): AnswerDecision {
    const verdict = verdictOfLog(questionStateOf(this.session.events, questionId), this.session.id, questionId, submission, false)
    if (verdict === undefined) {
      return {
        status: 'refused',
        code: 'QUESTION_CLOSED',
        message: `question ${questionId} of session ${this.session.id} is open in the log but nobody waits for it any more (its ask ended without a settlement); this answer was not applied`,
      }
    }
    if (verdict.status === 'accepted') return { status: 'accepted', seq: verdict.seq }
    if (verdict.status === 'unknown') return { status: 'unknown' }
    return verdict
  }
}

/** Removes sockets of the folder that nobody listens on any more (older than a minute). */
async function sweep(folder: string): Promise<void> {
  let names: string[]
  try {
    names = await readdir(folder)
  } catch {
    return
  }
  for (const name of names) {
    const path = join(folder, name)
    if (!isChannelSocket(path)) continue
    try {
      const stats = await lstat(path)
      if (!stats.isSocket() || Date.now() - stats.mtimeMs < SWEEP_AGE_MS) continue
      const refused = await new Promise<boolean>((resolve) => {
        const probe = createConnection(path)
        probe.once('connect', () => {
          probe.destroy()
          resolve(false)
        })
        probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
      })
      if (refused) await unlink(path)
    } catch {
      // gone, or not ours to remove
    }
  }
}

/**
 * The answer desk of the JSONL store (service `answerDesk`): a unix socket
 * per session while asks of it are open, announced in `<log>.answers`.
 */
export class LocalAnswerDesk implements AnswerDesk {
  private readonly channels = new Map<string, { readonly channel: SessionChannel; readonly started: Promise<void> }>()
  /** The channel of each session being stopped: the next one starts after it. */
  private readonly stopping = new Map<string, Promise<void>>()
  private folder: Promise<string> | undefined
  private closed = false

  constructor(private readonly options: LocalDeskOptions) {}

  private socketFolder(): Promise<string> {
    this.folder ??= socketFolder(this.options.socketDir).then(
      async (folder) => {
        await sweep(folder)
        return folder
      },
      (error: unknown) => {
        this.folder = undefined
        throw error
      },
    )
    return this.folder
  }

  async open(session: Session, questionId: string, take: (answer: IncomingAnswer) => Promise<AnswerDecision>): Promise<OpenedQuestion> {
    const log = this.closed ? undefined : this.options.logOf(session)
    if (log === undefined) return NOTHING_OPENED
    let entry = this.channels.get(session.id)
    if (entry === undefined) {
      const channel = new SessionChannel(session, log, this.options.logger)
      const previous = this.stopping.get(session.id)
      const started = (async () => {
        await previous
        await channel.start(await this.socketFolder())
      })()
      entry = { channel, started }
      this.channels.set(session.id, entry)
      started.catch(() => {
        if (this.channels.get(session.id) === entry) this.channels.delete(session.id)
      })
    }
    const { channel, started } = entry
    channel.questions.set(questionId, take)
    try {
      await started
    } catch (error) {
      channel.questions.delete(questionId)
      throw error
    }
    let closing: Promise<void> | undefined
    return {
      close: () =>
        (closing ??= (async () => {
          channel.questions.delete(questionId)
          await channel.idle()
          if (channel.questions.size > 0 || this.channels.get(session.id)?.channel !== channel) return
          this.channels.delete(session.id)
          const stopped = channel.stop().finally(() => {
            if (this.stopping.get(session.id) === stopped) this.stopping.delete(session.id)
          })
          this.stopping.set(session.id, stopped)
          await stopped
        })()),
    }
  }

  /** Stops every channel (the store is disposed). */
  async close(): Promise<void> {
    this.closed = true
    const channels = [...this.channels.values()]
    this.channels.clear()
    await Promise.allSettled(channels.map(async ({ channel, started }) => {
      await started.catch(() => {})
      await channel.stop()
    }))
  }
}
