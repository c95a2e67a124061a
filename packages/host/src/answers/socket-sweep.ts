import { lstat, readdir, unlink } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { isChannelSocket, processUid } from './socket-folder.js'

// Sockets of processes that died (kill -9) stay in the socket folder. The
// first channel a process opens removes those nobody listens on any more:
// only in its own private folder (nobody but this user and root can put a
// socket there, socket-folder.ts), only sockets of this user (looked at,
// never followed), only once a connection to one is refused (nobody
// listens: removing it can cut no one off), and only a minute after it was
// made (its channel may be starting). No other socket is ever removed.

/** Sockets younger than this are never swept (their channel may be starting). */
const SWEEP_AGE_MS = 60_000

/** Removes sockets of the folder that nobody listens on any more (older than a minute). */
export async function sweepSockets(folder: string): Promise<void> {
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
      if (!stats.isSocket() || stats.uid !== processUid() || Date.now() - stats.mtimeMs < SWEEP_AGE_MS) continue
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
