import { randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { rename, unlink } from 'node:fs/promises'
import { kindOf } from '../session/jsonl-read.js'
import { writeTempBeside } from '../session/temp-beside.js'
import { identityProblem, processState, thisProcess, type ProcessIdentity } from '../session/process-identity.js'

// Where the local answer channel of a JSONL session is, and who may reach it.
// - The writer announces it in `<log>.answers`, next to the session log:
//   the socket's path, a random token, and the writer's identity (the
//   record of process-identity.ts, judged by the same rule as a session
//   lock's holder). The file is written whole (a temp file, then a rename,
//   which replaces whatever was at the name without following or opening
//   it), readable by its owner and, when the log's group may read the log,
//   by the log's group; writable by nobody but through the rename.
// - The socket lives in a private folder (socket-folder.ts) and gets the
//   log's group and the log's owner and group read-write bits: connecting
//   needs write permission on it, so the writer's user (when the log's
//   owner may write it), the log's group (when it may write the log) and
//   root may answer, nobody else. Each request carries the token.
// - A writer not in the log's group cannot give either file that group: it
//   then gives the group no access at all (fewer may answer, never more).
// - An announcement is only ever read non-blocking, without following a
//   link, and only when it is a regular file: a FIFO or a device planted
//   there is never waited on.
// - After a kill -9 both stay behind. A submitter tells a stale announcement
//   by its writer's identity (the process is gone, or its pid was reused) or
//   by a refused connection; the next channel of the session replaces the
//   announcement. Nobody deletes the socket a stale announcement names: it
//   may be anyone's (socket-sweep.ts removes the dead ones of the writer's
//   own folder).

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

/** An announcement as read, with the file's own owner, group and mode (for the submitter's checks). */
export interface ReadAnnouncement {
  readonly announcement: Announcement
  readonly stats: Stats
}

/** The announcement file of the session log `log`. */
export const announcementOf = (log: string): string => `${log}.answers`

const TOKEN = /^[0-9a-f]{32}$/
/** The largest announcement read (one JSON line of a few hundred bytes). */
const MAX_ANNOUNCEMENT = 64 * 1024

/** A new announcement for `session` served at `socket`, naming this process. */
export function announcementFor(session: string, socket: string): Announcement {
  return { v: 1, session, socket, token: randomBytes(16).toString('hex'), ...thisProcess() }
}

/** The problem with a parsed announcement, or `undefined`. */
function shapeProblem(value: Partial<Announcement> | null): string | undefined {
  if (typeof value !== 'object' || value === null || value.v !== 1) return 'not an announcement of version 1'
  if (typeof value.session !== 'string' || typeof value.socket !== 'string') return 'no session or socket'
  if (typeof value.token !== 'string' || !TOKEN.test(value.token)) return 'no token'
  return identityProblem(value as Record<string, unknown>)
}

/**
 * Reads `<log>.answers`: the announcement and the file's stats; `undefined`
 * when there is none; `{ unreadable }` saying why it is not one (not a
 * regular file, a symbolic link, too long, not an announcement). Opened
 * non-blocking and without following a link, so a FIFO is never waited on.
 * Other errors (`EACCES`) are thrown. Synchronous: also the exit hook.
 */
export function readAnnouncement(file: string): ReadAnnouncement | undefined | { readonly unreadable: string } {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') return { unreadable: `${file} is a symbolic link` }
    if (code === 'ENXIO') return { unreadable: `${file} is a socket` }
    throw error
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) return { unreadable: `${file} is ${kindOf(stats)}, not a regular file` }
    if (stats.size > MAX_ANNOUNCEMENT) return { unreadable: `${file} is ${stats.size} bytes long, not an announcement` }
    const buffer = Buffer.alloc(stats.size)
    let read = 0
    while (read < buffer.length) {
      const got = readSync(fd, buffer, read, buffer.length - read, read)
      if (got === 0) break
      read += got
    }
    let value: Partial<Announcement> | null
    try {
      value = JSON.parse(buffer.toString('utf8', 0, read)) as Partial<Announcement> | null
    } catch {
      return { unreadable: `${file} is not JSON` }
    }
    const problem = shapeProblem(value)
    if (problem !== undefined) return { unreadable: `${file}: ${problem}` }
    return { announcement: value as Announcement, stats }
  } finally {
    closeSync(fd)
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

/** The permission bits of an announcement for a log of mode `logMode`: its owner's read and write, and the group's read when the log's group may read the log. */
export const announcementMode = (logMode: number): number => 0o600 | (logMode & 0o040)

/** The permission bits of a socket for a log of mode `logMode`: its owner's and group's read and write bits. */
export const socketMode = (logMode: number): number => logMode & 0o660

/**
 * Writes `announcement` to `file` whole (a temp file, then a rename), with
 * permission bits `mode` and group `gid`; when this process may not give
 * it that group, with no group access at all. Never opens what is at
 * `file`: the rename replaces it.
 */
export async function writeAnnouncement(file: string, announcement: Announcement, mode: number, gid: number): Promise<void> {
  // The umask must not decide who may read the token: the log's bits and group do.
  const temp = await writeTempBeside(file, JSON.stringify(announcement) + '\n', 0o600, async (handle) => {
    const granted = await handle.chown(-1, gid).then(
      () => mode,
      () => mode & 0o700,
    )
    await handle.chmod(granted)
  })
  try {
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}
