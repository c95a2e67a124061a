import { lstat, readlink } from 'node:fs/promises'
import { SessionLogError } from '@planmode/store'

/**
 * Why the file at a session's path is reachable by another name: it is a
 * symbolic link (to `target`), or a regular file with `links` hard links.
 */
export type LinkedFile = { readonly kind: 'symlink'; readonly target: string } | { readonly kind: 'hard-link'; readonly links: number }

/**
 * Whether `file` is a symbolic link or a regular file with more than one
 * hard link (`undefined` when it is neither, or does not exist). One
 * `lstat`; the link itself is looked at, never followed.
 */
export async function linkedFile(file: string): Promise<LinkedFile | undefined> {
  let stats
  try {
    stats = await lstat(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new SessionLogError('UNREADABLE', `${file}: cannot read session log (${(error as Error).message})`, { file, cause: error })
  }
  if (stats.isSymbolicLink()) {
    const target = await readlink(file).catch(() => '?')
    return { kind: 'symlink', target }
  }
  if (stats.isFile() && stats.nlink > 1) return { kind: 'hard-link', links: stats.nlink }
  return undefined
}

/**
 * The `LINKED` refusal of session `id` whose file is `linked`: two ids (or
 * two session folders) would write one file, each with its own lock and its
 * own `seq`, and the log would no longer open.
 */
export function linkedError(id: string, file: string, linked: LinkedFile): SessionLogError {
  const what =
    linked.kind === 'symlink'
      ? `is a symbolic link (to ${linked.target})`
      : `has ${linked.links} hard links (other names of the same file, in this folder or another)`
  return new SessionLogError(
    'LINKED',
    `${file}: the log of session ${id} ${what}; the store writes a session file only under its own name, so that two sessions can never append to one file. Nothing was opened or changed; replace the link with a copy of the file (or remove the other names) and open it again`,
    { file },
  )
}

/**
 * Refuses, with `LINKED`, to open session `id` at `file` when another name
 * reaches the file (`open`: a symbolic link or a second hard link),
 * or to create it where a symbolic link is (`create`: a dangling one
 * included; an existing file is `EXISTS` when the store creates it).
 */
export async function refuseLinked(id: string, file: string, purpose: 'open' | 'create'): Promise<void> {
  const linked = await linkedFile(file)
  if (linked !== undefined && (purpose === 'open' || linked.kind === 'symlink')) throw linkedError(id, file, linked)
}
