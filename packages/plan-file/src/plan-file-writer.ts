import { join } from 'node:path'
import type { Session } from '@planmode/seams'
import { writeAtomically } from './atomic-write.js'
import { planFileText, type PlanFileContent } from './plan-file-text.js'

/** One session with a write running or due. */
interface Entry {
  /** The latest session object seen for the id. */
  session: Session
  /** A change came after the running write read the session: write once more. */
  dirty: boolean
  /** The write loop, while there is one. */
  running: Promise<void> | undefined
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The writes of every session's plan file: serialised per session, the last
 * change winning. A change while a write runs marks the session dirty; when
 * the write ends, one more write reads the session as it is then, so a burst
 * of changes costs at most two writes and the file ends with the latest
 * state. Sessions write independently of each other.
 */
export class PlanFileWriter {
  private readonly entries = new Map<string, Entry>()
  private stopped = false

  constructor(
    /** The absolute folder of the files. */
    readonly dir: string,
    /** What the file of a session says now; `undefined` for no file. May throw (reported like a failed write). */
    private readonly read: (session: Session) => PlanFileContent | undefined,
    /** Where a failed write is reported, once per failure. */
    private readonly warn: (message: string, error: unknown) => void,
  ) {}

  /** The file of session `id`. */
  pathOf(id: string): string {
    return join(this.dir, `${id}.md`)
  }

  /** The plan of `session` changed: write its file (now, or after the write running for it). */
  changed(session: Session): void {
    if (this.stopped) return
    const entry = this.entries.get(session.id)
    if (entry !== undefined) {
      entry.session = session
      entry.dirty = true
      return
    }
    const added: Entry = { session, dirty: true, running: undefined }
    this.entries.set(session.id, added)
    added.running = this.run(session.id, added)
  }

  /** Resolves once no write is running or due (each has succeeded or failed). */
  async settled(): Promise<void> {
    for (;;) {
      const running = [...this.entries.values()].flatMap((entry) => (entry.running === undefined ? [] : [entry.running]))
      if (running.length === 0) return
      await Promise.all(running)
    }
  }

  /** Stops writing: due writes are dropped, a running one is not renamed into place unless its rename has begun. */
  stop(): void {
    this.stopped = true
    for (const entry of this.entries.values()) entry.dirty = false
  }

  /** Writes until the session is no longer dirty. Never rejects. */
  private async run(id: string, entry: Entry): Promise<void> {
    // Let the other changes of the same event (planHistory and planProgress often change together) land first.
    await Promise.resolve()
    try {
      while (entry.dirty && !this.stopped) {
        entry.dirty = false
        await this.writeOnce(id, entry.session)
      }
    } finally {
      // No await between the loop's last check and here: a change cannot slip in unseen.
      this.entries.delete(id)
    }
  }

  private async writeOnce(id: string, session: Session): Promise<void> {
    const file = this.pathOf(id)
    let text: string
    try {
      const content = this.read(session)
      // No revision, no file; a file written before stays as it is.
      if (content === undefined) return
      text = planFileText(content)
    } catch (error) {
      this.warn(
        `@planmode/plan-file: could not read the plan of session ${id} for ${file}: ${messageOf(error)}; the next change writes it again`,
        error,
      )
      return
    }
    try {
      await writeAtomically(this.dir, `${id}.md`, text, () => this.stopped)
    } catch (error) {
      this.warn(`@planmode/plan-file: could not write ${file}: ${messageOf(error)}; the next change writes it again`, error)
    }
  }
}
