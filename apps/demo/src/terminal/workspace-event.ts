import { existsSync, readFileSync, statSync } from 'node:fs'

declare module '@planmode/seams' {
  interface SessionEventMap {
    /** Log-only: the folder the demo's workspace tools work in, so `--resume` can find it again. */
    'demo/workspace': { readonly root: string }
  }
}

/** The event type the demo logs its workspace folder under. */
export const WORKSPACE_EVENT = 'demo/workspace'

/** The last logged workspace of a JSONL session file, if it is still a directory. */
export function loggedWorkspace(file: string): string | undefined {
  const root = lastLoggedWorkspace(file)
  return root !== undefined && statSync(root, { throwIfNoEntry: false })?.isDirectory() === true ? root : undefined
}

/** The last logged workspace of a JSONL session file, whether or not it still exists. */
export function lastLoggedWorkspace(file: string): string | undefined {
  if (!existsSync(file)) return undefined
  let root: string | undefined
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes(WORKSPACE_EVENT)) continue
    try {
      const event = JSON.parse(line) as { type?: string; data?: { root?: unknown } }
      if (event.type === WORKSPACE_EVENT && typeof event.data?.root === 'string') root = event.data.root
    } catch {
      // A torn or foreign line; the store reports those when it opens the file.
    }
  }
  return root
}
