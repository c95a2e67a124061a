import { randomBytes } from 'node:crypto'
import { open, unlink, type FileHandle } from 'node:fs/promises'

/**
 * Writes `content` to a new, uniquely named file beside `path`
 * (`<path>.tmp-<pid>-<random>`, created exclusively with `mode`), runs
 * `finish` on its open handle (an fsync, a chown), and returns the temp
 * file's path for the caller to `link` or `rename` into place. On any
 * failure the temp file is removed and the error thrown: nothing half
 * written is ever left behind or made visible.
 */
export async function writeTempBeside(
  path: string,
  content: string,
  mode: number,
  finish?: (handle: FileHandle) => Promise<void>,
): Promise<string> {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`
  const handle = await open(temp, 'wx', mode)
  try {
    await handle.writeFile(content)
    await finish?.(handle)
  } catch (error) {
    await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
  await handle.close()
  return temp
}
