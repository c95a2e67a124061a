import { existsSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'

/** Thrown when a tool is handed a path that leaves the workspace. */
export class OutsideWorkspaceError extends Error {
  constructor(path: string) {
    super(`path "${path}" is outside the workspace; use a path relative to the workspace root`)
    this.name = 'OutsideWorkspaceError'
  }
}

function inside(root: string, target: string): boolean {
  const rel = relative(root, target)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..')
}

/** The deepest existing ancestor of `path`, resolved through symlinks. */
function realExisting(path: string): string {
  let current = path
  while (!existsSync(current)) {
    const parent = dirname(current)
    if (parent === current) return current
    current = parent
  }
  const real = realpathSync(current)
  return current === path ? real : resolve(real, relative(current, path))
}

/**
 * Resolves `path` (relative to `root`, or absolute inside it) and refuses
 * anything outside the workspace, symlinks included.
 */
export function resolveInWorkspace(root: string, path: string): string {
  if (typeof path !== 'string' || path.trim() === '') throw new Error('a path is required')
  const realRoot = realpathSync(root)
  const target = resolve(realRoot, path)
  if (!inside(realRoot, target) || !inside(realRoot, realExisting(target))) throw new OutsideWorkspaceError(path)
  return target
}

/** `absolute` as a workspace-relative path with `/` separators (`.` for the root). */
export function workspaceRelative(root: string, absolute: string): string {
  const rel = relative(realpathSync(root), absolute)
  return rel === '' ? '.' : rel.split(sep).join('/')
}
