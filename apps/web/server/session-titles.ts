// The title the session list shows for each session, also for one this server has not opened (after a restart, say):
// read from the head of its log once and kept, since the events that give a title are never rewritten.
import { open as openFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'
import type { SessionStore } from '@planmode/store'
import type { PostgresSessionStore } from '@planmode/store-postgres'

/** How much of a JSONL log's head is read for its title: the first user message is near the start. */
const HEAD_BYTES = 256 * 1024

/** How long a session found without a title is not read again, in ms (a title may come with its next message). */
const UNTITLED_MS = 30_000

/** The first user text of the session (≤ 80 chars), else the title of the plan it was handed (SPEC §18), else its first `/command` with arguments. */
function titleFromEvents(events: readonly SessionEvent[]): string | undefined {
  for (const event of events) {
    if (event.type !== 'user/message' || event.data.source.kind !== 'user') continue
    const text = event.data.content.find((block) => block.type === 'text')
    if (text?.type === 'text') return text.text.slice(0, 80)
  }
  const first = events[0]
  if (first?.type === 'plan/handoff') return first.data.title.slice(0, 80)
  for (const event of events) {
    if (event.type === 'command/run' && event.data.args.trim() !== '' && event.data.args.trim().toLowerCase() !== 'off')
      return `/${event.data.name}${event.data.args}`.slice(0, 80)
  }
  return undefined
}

/** The events of the complete lines of a JSONL log's head (a line cut by the read, or not JSON, ends it). */
function headEvents(text: string, whole: boolean): SessionEvent[] {
  const lines = text.split('\n')
  if (!whole) lines.pop()
  const events: SessionEvent[] = []
  for (const line of lines) {
    if (line.trim() === '') continue
    try {
      events.push(JSON.parse(line) as SessionEvent)
    } catch {
      break
    }
  }
  return events
}

/**
 * The titles of the sessions of a store, for the list: read from the log of
 * a session this server has not opened — the head of its JSONL file, or its
 * events in PostgreSQL through a short-lived follower — and kept once
 * found; a session without one yet is read again after 30 s. A log that
 * cannot be read has no title (the list shows its id).
 */
export class SessionTitles {
  private readonly found = new Map<string, string>()
  private readonly untitled = new Map<string, number>()

  constructor(
    private readonly sessions: SessionStore,
    /** The same store when it is PostgreSQL's. */
    private readonly postgres: PostgresSessionStore | undefined,
  ) {}

  /** The title of session `id`, from `events` when this server holds them, else from its log. */
  async titleOf(id: string, events?: readonly SessionEvent[]): Promise<string | undefined> {
    const known = this.found.get(id)
    if (known !== undefined) return known
    if (events !== undefined) return this.keep(id, titleFromEvents(events))
    const checked = this.untitled.get(id)
    if (checked !== undefined && Date.now() - checked < UNTITLED_MS) return undefined
    let title: string | undefined
    try {
      title = titleFromEvents(await this.headOf(id))
    } catch {
      title = undefined
    }
    if (title === undefined) this.untitled.set(id, Date.now())
    return this.keep(id, title)
  }

  private keep(id: string, title: string | undefined): string | undefined {
    if (title !== undefined) {
      this.found.set(id, title)
      this.untitled.delete(id)
    }
    return title
  }

  /** The first events of session `id`'s log. */
  private async headOf(id: string): Promise<readonly SessionEvent[]> {
    const dir = this.sessions.dir
    if (dir !== undefined) {
      const file = await openFile(join(dir, `${id}.jsonl`), 'r')
      try {
        const buffer = Buffer.alloc(HEAD_BYTES)
        const { bytesRead } = await file.read(buffer, 0, HEAD_BYTES, 0)
        return headEvents(buffer.subarray(0, bytesRead).toString('utf8'), bytesRead < HEAD_BYTES)
      } finally {
        await file.close()
      }
    }
    if (this.postgres === undefined) return []
    const follower = await this.postgres.follow(id)
    try {
      return [...follower.events]
    } finally {
      await this.postgres.close(follower).catch(() => {})
    }
  }
}
