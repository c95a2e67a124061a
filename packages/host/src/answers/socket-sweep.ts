import { lstat, readdir, unlink } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { isChannelSocket } from './socket-folder.js'

// Sockets of processes that died (kill -9) stay in the socket folder. The
// first channel a process opens removes those nobody listens on any more.

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
      if (!stats.isSocket() || Date.now() - stats.mtimeMs < SWEEP_AGE_MS) continue
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
