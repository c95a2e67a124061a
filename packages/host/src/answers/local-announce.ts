import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { open, rename, unlink } from 'node:fs/promises'
import { identityProblem, processState, thisProcess, type ProcessIdentity } from '../session/process-identity.js'

// Where the local answer channel of a JSONL session is, and who may reach it.
// - The writer announces it in `<log>.answers`, next to the session log:
//   the socket's path, a random token, and the writer's identity (the
//   record of process-identity.ts, judged by the same rule as a session
//   lock's holder). The file is written whole (a temp file, then a rename)
//   with the log's permission bits (owner and group, never others), so
//   whoever can read the log can read the token.
// - The socket lives in a short private folder (socket-folder.ts) and gets
//   the log's permission bits: connecting needs write permission on it, so
//   whoever may write the log may answer, and nobody else. Each request
//   carries the token.
// - After a kill -9 both stay behind. A submitter tells a stale announcement
//   by its writer's identity (the process is gone, or its pid was reused) or by
//   a refused connection; the next channel of the session replaces the
//   announcement and removes the socket the stale one named.

/** What `<log>.answers` holds: the channel, and who serves it. */
export interface Announcement extends ProcessIdentity {
  readonly v: 1
  /** The session it serves. */
  readonly session: string
  /** The socket to connect to. */
  readonly socket: string
  /** The token every request must carry. */
  readonly token: string
}

/** The announcement file of the session log `log`. */
export const announcementOf = (log: string): string => `${log}.answers`

const TOKEN = /^[0-9a-f]{32}$/

/** A new announcement for `session` served at `socket`, naming this process. */
export function announcementFor(session: string, socket: string): Announcement {
  return { v: 1, session, socket, token: randomBytes(16).toString('hex'), ...thisProcess() }
}

/** Reads `<log>.answers`: the announcement, `undefined` when there is none, `'unreadable'` when it is not one. Other errors are thrown. */
export function readAnnouncement(file: string): Announcement | undefined | 'unreadable' {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const value = JSON.parse(text) as Partial<Announcement>
    if (
      typeof value !== 'object' ||
      value === null ||
      value.v !== 1 ||
      typeof value.session !== 'string' ||
      typeof value.socket !== 'string' ||
      typeof value.token !== 'string' ||
      !TOKEN.test(value.token) ||
      identityProblem(value as Record<string, unknown>) !== undefined
    ) {
      return 'unreadable'
    }
    return value as Announcement
  } catch {
    return 'unreadable'
  }
}

/**
 * Whether the process an announcement names still runs, by the rule of
 * `process-identity.ts` (a session lock's): `gone` when it provably does
 * not (the machine restarted, no such pid, a zombie, a pid now used by a
 * process started at another time), `elsewhere` when it runs on another
 * host or machine (its socket cannot be reached from here), else `alive`
 * (another pid namespace of this machine cannot be checked, but its socket
 * may be reached: a refused connection tells).
 */
export function writerState(announcement: Announcement): 'alive' | 'gone' | 'elsewhere' {
  const state = processState(announcement)
  if (state.state === 'gone') return 'gone'
  if (state.state === 'unchecked' && state.where !== 'namespace') return 'elsewhere'
  return 'alive'
}

/** Writes `announcement` to `file` whole (a temp file, then a rename), with permission bits `mode`. */
export async function writeAnnouncement(file: string, announcement: Announcement, mode: number): Promise<void> {
  const temp = `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`
  const handle = await open(temp, 'wx', 0o600)
  try {
    await handle.writeFile(JSON.stringify(announcement) + '\n')
    // The umask must not decide who may read the token: the log's bits do.
    await handle.chmod(mode)
  } catch (error) {
    await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
  await handle.close()
  try {
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}

/** The permission bits an announcement and a socket get for a log of mode `logMode`: its owner's and group's read and write bits. */
export const channelMode = (logMode: number): number => logMode & 0o660

