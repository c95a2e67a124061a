import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { chmod, lstat, mkdir, open, rename, unlink } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { procStat } from '../session/process-stat.js'

// Where the local answer channel of a JSONL session is, and who may reach it.
// - The writer announces it in `<log>.answers`, next to the session log: the
//   socket's path, a random token, and the writer's identity (pid, start
//   time, boot id, host name). The file is written whole (a temp file, then a
//   rename) with the log's permission bits (owner and group, never others),
//   so whoever can read the log can read the token.
// - The socket lives in a short private folder (unix socket paths are limited
//   to about 104 bytes, and a session folder's path can be longer):
//   `$XDG_RUNTIME_DIR/planmode`, else `/tmp/planmode-<uid>` (as tmux does: a
//   TMPDIR may be long, or a scratch folder that must be left empty), else
//   `<tmpdir>/planmode-<uid>`; it must be a real folder owned by this user that
//   nobody else can write (mode 0711: others may pass through to a name they
//   know, not list it). The socket's name is random, and the socket gets the
//   log's permission bits: connecting needs write permission on it, so whoever
//   may write the log may answer, and nobody else. Each request carries the token.
// - After a kill -9 both stay behind. A submitter tells a stale announcement
//   by its writer's identity (the process is gone, or its pid was reused) or by
//   a refused connection; the next channel of the session replaces the
//   announcement and removes the socket the stale one named.

/** The longest unix socket path this channel makes (macOS takes 104 bytes with the NUL, Linux 108). */
export const MAX_SOCKET_PATH = 103

/** What `<log>.answers` holds. */
export interface Announcement {
  readonly v: 1
  /** The session it serves. */
  readonly session: string
  /** The socket to connect to. */
  readonly socket: string
  /** The token every request must carry. */
  readonly token: string
  readonly pid: number
  readonly host: string
  readonly boot?: string
  readonly start?: number
}

/** The announcement file of the session log `log`. */
export const announcementOf = (log: string): string => `${log}.answers`

const TOKEN = /^[0-9a-f]{32}$/
const SOCKET = /^[0-9a-f]{32}\.sock$/

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** A new announcement for `session` served at `socket`, naming this process. */
export function announcementFor(session: string, socket: string): Announcement {
  const boot = bootId()
  const start = procStat('self')?.start
  return {
    v: 1,
    session,
    socket,
    token: randomBytes(16).toString('hex'),
    pid: process.pid,
    host: hostname(),
    ...(boot === undefined ? {} : { boot }),
    ...(start === undefined ? {} : { start }),
  }
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
      value?.v !== 1 ||
      typeof value.session !== 'string' ||
      typeof value.socket !== 'string' ||
      typeof value.token !== 'string' ||
      !TOKEN.test(value.token) ||
      !Number.isSafeInteger(value.pid) ||
      typeof value.host !== 'string'
    ) {
      return 'unreadable'
    }
    return value as Announcement
  } catch {
    return 'unreadable'
  }
}

/**
 * Whether the process an announcement names still runs: `gone` when it
 * provably does not (another boot of this machine, no such pid, a zombie, a
 * pid now used by a process started at another time), `elsewhere` when it
 * runs on another host (its socket cannot be reached from here), else `alive`.
 */
export function writerState(announcement: Announcement): 'alive' | 'gone' | 'elsewhere' {
  if (announcement.host !== hostname()) return 'elsewhere'
  const boot = bootId()
  if (announcement.boot !== undefined && boot !== undefined && announcement.boot !== boot) return 'gone'
  if (announcement.pid === process.pid) return 'alive'
  try {
    process.kill(announcement.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'gone'
  }
  const stat = procStat(announcement.pid)
  if (stat !== undefined) {
    if (stat.state === 'Z' || stat.state === 'X') return 'gone'
    if (announcement.start !== undefined && stat.start !== announcement.start) return 'gone'
  }
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

/** Whether `path` is a socket this channel made: a random name in a private socket folder. */
export function isChannelSocket(path: string): boolean {
  return SOCKET.test(path.slice(path.lastIndexOf('/') + 1))
}

/** A new socket path in `dir`. */
export const newSocketPath = (dir: string): string => join(dir, `${randomBytes(16).toString('hex')}.sock`)

/** Checks that `dir` is a private socket folder: a real folder owned by this user that nobody else can write. */
async function checkPrivate(dir: string): Promise<string | undefined> {
  const stats = await lstat(dir)
  if (!stats.isDirectory()) return `${dir} is not a folder`
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) return `${dir} belongs to user ${stats.uid}, not to this process's user ${uid}`
  if ((stats.mode & 0o022) !== 0) return `${dir} can be written by others (mode ${(stats.mode & 0o777).toString(8)})`
  return undefined
}

/**
 * The folder for the channel's sockets: `configured` when given, else the
 * first of `$XDG_RUNTIME_DIR/planmode`, `/tmp/planmode-<uid>` and
 * `<tmpdir>/planmode-<uid>` that can be made private and whose socket paths
 * fit {@link MAX_SOCKET_PATH}.
 * Created (mode 0711) when missing; refused when it is not a private folder.
 */
export async function socketFolder(configured: string | undefined): Promise<string> {
  const user = process.getuid?.() ?? 'user'
  const candidates =
    configured !== undefined
      ? [configured]
      : [
          ...(process.env.XDG_RUNTIME_DIR ? [join(process.env.XDG_RUNTIME_DIR, 'planmode')] : []),
          `/tmp/planmode-${user}`,
          join(tmpdir(), `planmode-${user}`),
        ]
  const problems: string[] = []
  for (const dir of candidates) {
    if (Buffer.byteLength(newSocketPath(dir)) > MAX_SOCKET_PATH) {
      problems.push(`${dir} is too long for a unix socket path (at most ${MAX_SOCKET_PATH} bytes with the socket's name)`)
      continue
    }
    try {
      await mkdir(dir, { mode: 0o711 }).then(
        () => chmod(dir, 0o711),
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error
        },
      )
      const problem = await checkPrivate(dir)
      if (problem === undefined) return dir
      problems.push(problem)
    } catch (error) {
      problems.push(`${dir}: ${(error as Error).message}`)
    }
  }
  throw new Error(`no private folder for the answer channel's socket: ${problems.join('; ')}`)
}
