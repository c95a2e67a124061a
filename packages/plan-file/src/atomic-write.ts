import { mkdir, open, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'

let counter = 0

/**
 * Writes `text` to `<dir>/<name>` so that a reader sees the old file or the
 * new one, never a part: the text goes to a temporary file in `dir` (same
 * filesystem, so the rename is atomic), is flushed to disk, and is renamed
 * over the target. `dir` is created first when it is missing. A failure
 * removes the temporary file and rejects with the error. When
 * `cancelled()` is true just before the rename, the temporary file is
 * removed and nothing is renamed (resolves `false`); otherwise resolves
 * `true` once the rename is done.
 */
export async function writeAtomically(dir: string, name: string, text: string, cancelled: () => boolean): Promise<boolean> {
  await mkdir(dir, { recursive: true })
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER
  // Hidden, and not ending in `.md`: a reader listing the plan files never picks one up.
  const temporary = join(dir, `.${name}.${process.pid}-${counter}.tmp`)
  let created = false
  try {
    const handle = await open(temporary, 'wx')
    created = true
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    if (cancelled()) {
      await rm(temporary, { force: true })
      return false
    }
    await rename(temporary, join(dir, name))
    return true
  } catch (error) {
    if (created) await rm(temporary, { force: true }).catch(() => {})
    throw error
  }
}
