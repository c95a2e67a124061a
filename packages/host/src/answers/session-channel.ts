import { timingSafeEqual } from 'node:crypto'
import { chmod, chown, lstat, stat } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import type { Logger } from '@planmode/context'
import type { Session } from '@planmode/seams'
import { questionStateOf, verdictOfLog, type AnswerDecision, type IncomingAnswer } from '@planmode/store'
import { messageOf } from '../error-text.js'
import { announcementFor, announcementMode, announcementOf, socketMode, writeAnnouncement, type Announcement } from './local-announce.js'
import { readLine, WireError, writeLine } from './local-wire.js'
import { removeOwn, served, type ServedChannel } from './served-channels.js'
import { newSocketPath } from './socket-folder.js'

// The local answer channel of one session while asks of it are open in this
// process: a unix socket and its announcement (local-announce.ts).
// - Each connection carries one request; its answer goes to the ask it
//   names (which decides it, see the user-questions runtime), or, when no
//   ask of this process has that question open, is refused from the log.
// - A channel replaces whatever announcement its session has (a dead
//   writer's, or a file someone planted: it is never read, only renamed
//   over), and never removes the socket an old one names: that may be
//   anyone's. The socket and the announcement get the log's group.
// - `stop` takes no more connections, lets every answer being decided get
//   its reply, then removes the socket and the announcement.

const SUBMISSION = /^[A-Za-z0-9_-]{1,64}$/
/** How long a connection may stay silent before it is dropped. */
const IDLE_MS = 30_000

const tokenMatches = (given: unknown, token: string): boolean =>
  typeof given === 'string' && given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token))

/** The channel of one session while asks of it are open here. */
export class SessionChannel {
  readonly questions = new Map<string, (answer: IncomingAnswer) => Promise<AnswerDecision>>()
  private readonly deciding = new Set<Promise<unknown>>()
  private readonly connections = new Set<Socket>()
  private server: Server | undefined
  private channel: ServedChannel | undefined
  private readonly file: string

  constructor(
    private readonly session: Session,
    private readonly log: string,
    private readonly logger: Logger,
  ) {
    this.file = announcementOf(log)
  }

  /** Listens on a new socket with the log's group and bits, then announces it (replacing any announcement there). */
  async start(folder: string): Promise<void> {
    const log = await stat(this.log)
    const socket = newSocketPath(folder)
    const server = createServer((connection) => this.serve(connection))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socket, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (error) =>
      this.logger.warn(`user-questions: the answer channel of session ${this.session.id} failed: ${error.message}`),
    )
    this.server = server
    try {
      const made = await lstat(socket)
      // The log's group, or no group access at all when this process may not give it that group.
      const mode = await chown(socket, -1, log.gid).then(
        () => socketMode(log.mode),
        () => socketMode(log.mode) & 0o600,
      )
      await chmod(socket, mode)
      const announcement = announcementFor(this.session.id, socket)
      const channel: ServedChannel = { announcement, socket: { dev: made.dev, ino: made.ino } }
      // In the table before the file exists: a signal that ends the process meanwhile removes both.
      served().set(this.file, channel)
      this.channel = channel
      await writeAnnouncement(this.file, announcement, announcementMode(log.mode), log.gid)
    } catch (error) {
      await this.stop()
      throw error
    }
  }

  /** Stops taking connections, lets the answers being decided get their reply, then removes the socket and the announcement. */
  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (this.channel !== undefined) {
      if (served().get(this.file) === this.channel) served().delete(this.file)
      removeOwn(this.file, this.channel)
      this.channel = undefined
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
          void writeLine(connection, {
            status: 'refused',
            code: 'INVALID_ANSWER',
            message: `${error.message}: the answer was not read; the question is still open`,
          }).finally(() => connection.destroy())
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
      await writeLine(connection, {
        status: 'refused',
        code: 'INVALID_ANSWER',
        message: 'the request is not a JSON object; nothing was applied',
      })
      return
    }
    const announcement: Announcement | undefined = this.channel?.announcement
    if (
      request.v !== 1 ||
      announcement === undefined ||
      !tokenMatches(request.token, announcement.token) ||
      request.session !== this.session.id
    ) {
      await writeLine(connection, {
        status: 'refused',
        code: 'UNAVAILABLE',
        message: `this channel does not take that request (another version, token or session than session ${this.session.id}'s); nothing was applied`,
      })
      return
    }
    const { submission, questionId } = request
    if (typeof submission !== 'string' || !SUBMISSION.test(submission) || typeof questionId !== 'string' || questionId === '') {
      await writeLine(connection, {
        status: 'refused',
        code: 'INVALID_ANSWER',
        message: 'the request needs a submission id (1 to 64 letters, digits, "_" or "-") and a questionId; nothing was applied',
      })
      return
    }
    const take = this.questions.get(questionId)
    const decision: AnswerDecision =
      take !== undefined
        ? await take({ submission, questionId, answers: request.answers, by: request.by })
        : this.fromLog(questionId, submission)
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
