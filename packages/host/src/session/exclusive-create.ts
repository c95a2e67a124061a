import { link, open, unlink } from 'node:fs/promises'
import { writeTempBeside } from './temp-beside.js'

// Rule 1 of session-lock.ts: a file that appears with its whole content or
// not at all, created by exactly one of any number of racing processes.

const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'])

/**
 * Creates `path` holding `content`, exclusively: true when created, false
 * when it exists. The content goes to a uniquely named temp file
 * (`<path>.tmp-<pid>-<random>`, fsynced when `durable`), which is then
 * `link()`ed to `path`: `link` fails with `EEXIST` when the path exists, so
 * the file is never visible without its content. Where the file system has
 * no hard links, `O_EXCL` then the content (readers wait a moment for an
 * empty file to fill in).
 */
export async function createExclusive(path: string, content: string, durable: boolean): Promise<boolean> {
  // Without the datasync a power loss can leave the lock linked but empty (then LOCK_UNREADABLE until deleted).
  const temp = await writeTempBeside(path, content, 0o666, durable ? (handle) => handle.datasync() : undefined)
  try {
    await link(temp, path)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code === undefined || !NO_LINKS.has(code)) throw error
  } finally {
    await unlink(temp).catch(() => {})
  }
  let direct
  try {
    direct = await open(path, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    await direct.writeFile(content)
    if (durable) await direct.datasync()
  } finally {
    await direct.close()
  }
  return true
}
