import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeScratchDir } from './scratch-dir.js'

/** The root of the `@planmode/demo` package, found from this module's location (source or `dist`). */
export function demoPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name
      if (name === '@planmode/demo') return dir
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the @planmode/demo package root')
    dir = parent
  }
}

/** The sample project shipped with the demo (`apps/demo/workspace`). */
export function sampleWorkspaceDir(): string {
  return join(demoPackageRoot(), 'workspace')
}

/**
 * Copies the sample project to a fresh scratch folder in the system temp dir
 * and returns its path. The folder is removed with `removeScratchDir`, or
 * when the process exits.
 */
export function copySampleWorkspace(): string {
  const target = makeScratchDir('planmode-demo-workspace-')
  cpSync(sampleWorkspaceDir(), target, { recursive: true })
  return target
}

/**
 * Copies the sample project to a new folder `sample-…` inside `parent`
 * (created when missing) and returns its path. The copy is kept: the
 * interactive host puts it beside its session logs so `--resume` finds the
 * model's edits again.
 */
export function keepSampleWorkspace(parent: string): string {
  mkdirSync(parent, { recursive: true })
  const target = mkdtempSync(join(parent, 'sample-'))
  cpSync(sampleWorkspaceDir(), target, { recursive: true })
  return target
}

/** Whether `dir` is a copy of the sample project (its `package.json` names `tiny-tasks`): the demo runs its tests to check steps. */
export function isSampleProject(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'tiny-tasks'
  } catch {
    return false
  }
}
