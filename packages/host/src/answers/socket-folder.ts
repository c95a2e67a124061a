import { randomBytes } from 'node:crypto'
import { chmod, lstat, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// The folder of the local answer channel's sockets. Unix socket paths are
// limited to about 104 bytes and a session folder's path can be longer, so
// the sockets live in a short private folder: `$XDG_RUNTIME_DIR/planmode`,
// else `/tmp/planmode-<uid>` (as tmux does: a TMPDIR may be long, or a
// scratch folder that must be left empty), else `<tmpdir>/planmode-<uid>`.
// It must be a real folder owned by this user that nobody else can write
// (mode 0711: others may pass through to a name they know, not list it).
// Each socket has a random name.

/** The longest unix socket path this channel makes (macOS takes 104 bytes with the NUL, Linux 108). */
export const MAX_SOCKET_PATH = 103

const SOCKET = /^[0-9a-f]{32}\.sock$/

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
