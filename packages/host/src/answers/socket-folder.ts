import { randomBytes } from 'node:crypto'
import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs'
import { chmod, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

// The folder of the local answer channel's sockets, and who can change what
// is in it.
// - Unix socket paths are limited to about 104 bytes and a session folder's
//   path can be longer, so the sockets live in a short private folder:
//   `$XDG_RUNTIME_DIR/planmode`, else `/tmp/planmode-<uid>` (as tmux does: a
//   TMPDIR may be long, or a scratch folder that must be left empty), else
//   `<tmpdir>/planmode-<uid>`. Each socket has a random name.
// - A socket is only as private as every folder on its path: whoever may
//   rename an entry of any of them can swap the folder below it for one of
//   their own and bind the socket's path there (socket names are public in
//   /proc/net/unix). So the whole path is checked, for the user the socket
//   belongs to (`trusted`): the socket folder is a real folder of that user
//   that nobody else can write (mode 0711: others may pass through to a name
//   they know, not list it), and every folder above it belongs to root or
//   that user and is writable by nobody else, unless it is sticky (like
//   /tmp: there only an entry's owner may rename it). A symbolic link on the
//   way is followed and its target checked the same way (the link itself
//   can only be replaced by whoever may write its folder, checked already).
// - The writer checks its own folder before it listens; a submitter checks
//   the folder of the socket an announcement names, for the announcement's
//   owner, before it connects.

/** The longest unix socket path this channel makes (macOS takes 104 bytes with the NUL, Linux 108). */
export const MAX_SOCKET_PATH = 103

const SOCKET = /^[0-9a-f]{32}\.sock$/
/** Symbolic links followed on one path before giving up. */
const MAX_LINKS = 8

/** Whether `path` is a socket this channel made: a random name in a private socket folder. */
export function isChannelSocket(path: string): boolean {
  return SOCKET.test(path.slice(path.lastIndexOf('/') + 1))
}

/** A new socket path in `dir`. */
export const newSocketPath = (dir: string): string => join(dir, `${randomBytes(16).toString('hex')}.sock`)

const octal = (stats: Stats): string => (stats.mode & 0o7777).toString(8)

/** What is wrong with folder `path` above a socket folder of user `uid`: another user may change what is below it. */
function aboveProblem(path: string, stats: Stats, uid: number): string | undefined {
  if (stats.uid !== 0 && stats.uid !== uid) return `${path} belongs to user ${stats.uid}, who could replace what is below it`
  if ((stats.mode & 0o022) !== 0 && (stats.mode & 0o1000) === 0)
    return `${path} can be written by others and is not sticky (mode ${octal(stats)})`
  return undefined
}

/** What is wrong with `path` as the socket folder of user `uid`: not a real folder of that user, or writable by others. */
function folderProblem(path: string, stats: Stats, uid: number): string | undefined {
  if (stats.isSymbolicLink()) return `${path} is a symbolic link, not a folder`
  if (!stats.isDirectory()) return `${path} is not a folder`
  if (stats.uid !== uid) return `${path} belongs to user ${stats.uid}, not to user ${uid}`
  if ((stats.mode & 0o022) !== 0) return `${path} can be written by others (mode ${octal(stats)})`
  return undefined
}

/** {@link trustedFolderProblem} for the folders of `path` from the root down, the last one judged `asFolder` or as one above. */
function chainProblem(path: string, uid: number, asFolder: boolean, links: number): string | undefined {
  const parts = resolve(path)
    .split('/')
    .filter((part) => part !== '')
  let current = '/'
  const root = aboveProblem('/', lstatSync('/'), uid)
  if (root !== undefined) return root
  for (const [index, part] of parts.entries()) {
    const next = join(current, part)
    const last = index === parts.length - 1
    const stats = lstatSync(next)
    if (stats.isSymbolicLink() && !(last && asFolder)) {
      if (links >= MAX_LINKS) return `${path}: more than ${MAX_LINKS} symbolic links on the way`
      const inner = chainProblem(resolve(current, readlinkSync(next)), uid, false, links + 1)
      if (inner !== undefined) return inner
      current = realpathSync(next)
      continue
    }
    const problem =
      last && asFolder ? folderProblem(next, stats, uid) : stats.isDirectory() ? aboveProblem(next, stats, uid) : `${next} is not a folder`
    if (problem !== undefined) return problem
    current = next
  }
  return undefined
}

/**
 * What is wrong with `dir` as a socket folder of user `uid`, by the rules
 * at the top of this file: the folder itself and every folder above it,
 * `undefined` when nobody but `uid` and root can change what a socket path
 * in it reaches. Never follows the folder itself if it is a link; a missing
 * or unreadable folder is a problem too. Synchronous: a few `lstat`s.
 */
export function trustedFolderProblem(dir: string, uid: number): string | undefined {
  try {
    return chainProblem(dir, uid, true, 0)
  } catch (error) {
    return `${dir}: ${(error as Error).message}`
  }
}

/** The user this process runs as (`-1` where there are no uids: then every check of ownership passes as the system allows). */
export const processUid = (): number => process.getuid?.() ?? -1

/**
 * The folder for the channel's sockets: `configured` when given, else the
 * first of `$XDG_RUNTIME_DIR/planmode`, `/tmp/planmode-<uid>` and
 * `<tmpdir>/planmode-<uid>` whose socket paths fit {@link MAX_SOCKET_PATH}
 * and that is private on its whole path ({@link trustedFolderProblem}).
 * Created (mode 0711) when missing; refused when it is not private (after
 * `su` without `-`, `$XDG_RUNTIME_DIR` is still the other user's, and is
 * passed over).
 */
export async function socketFolder(configured: string | undefined): Promise<string> {
  const uid = processUid()
  const user = uid === -1 ? 'user' : String(uid)
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
    // Only below folders nobody else may change: never make (or trust) a folder another user could swap.
    const above = uid === -1 ? undefined : chainAboveProblem(dir, uid)
    if (above !== undefined) {
      problems.push(above)
      continue
    }
    try {
      await mkdir(dir, { mode: 0o711 }).then(
        () => chmod(dir, 0o711),
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error
        },
      )
      const problem = uid === -1 ? undefined : trustedFolderProblem(dir, uid)
      if (problem === undefined) return dir
      problems.push(problem)
    } catch (error) {
      problems.push(`${dir}: ${(error as Error).message}`)
    }
  }
  throw new Error(`no private folder for the answer channel's socket: ${problems.join('; ')}`)
}

/** What is wrong with the folders above `dir` (not `dir` itself) for user `uid`. */
function chainAboveProblem(dir: string, uid: number): string | undefined {
  try {
    return chainProblem(dirname(resolve(dir)), uid, false, 0)
  } catch (error) {
    return `${dirname(resolve(dir))}: ${(error as Error).message}`
  }
}
