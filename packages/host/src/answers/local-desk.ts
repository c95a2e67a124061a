import type { Session } from '@planmode/seams'
import type { Logger } from '@planmode/context'
import { NOTHING_OPENED, type AnswerDecision, type AnswerDesk, type IncomingAnswer, type OpenedQuestion } from '@planmode/store'
import { SessionChannel } from './session-channel.js'
import { socketFolder } from './socket-folder.js'
import { sweepSockets } from './socket-sweep.js'

// The writer's side of the local answer channel of a JSONL session.
// - A session has a channel (session-channel.ts) while at least one of its
//   asks is open here: the first ask opens it, before its question/asked is
//   logged; the last one to settle closes it, after its question/settled is
//   logged and every answer being decided has its reply.
// - Channels of one session open and close one after the other, so a
//   closing one never removes its successor's announcement. On exit the
//   process removes its announcements and sockets (served-channels.ts).
// - The first channel a process opens sweeps the socket folder
//   (socket-sweep.ts).

/** Options of {@link LocalAnswerDesk}. */
export interface LocalDeskOptions {
  readonly logger: Logger
  /** The folder of the sockets; by default a private one (`socket-folder.ts`). */
  readonly socketDir?: string
  /** The log file of `session` when this store writes it, else `undefined`. */
  readonly logOf: (session: Session) => string | undefined
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
        await sweepSockets(folder)
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
    await Promise.allSettled(
      channels.map(async ({ channel, started }) => {
        await started.catch(() => {})
        await channel.stop()
      }),
    )
  }
}
