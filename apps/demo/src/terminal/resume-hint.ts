import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { demoPackageRoot } from '../workspace/sample-workspace.js'

/** The `packageManager` of the repository (`pnpm@<version>`), as the root package.json pins it. */
export function pinnedPackageManager(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(demoPackageRoot(), '..', '..', 'package.json'), 'utf8')) as { packageManager?: unknown }
    if (typeof manifest.packageManager === 'string' && /^pnpm@[\w.+-]+$/.test(manifest.packageManager)) return manifest.packageManager
  } catch {
    // Not in the repository layout: fall back to whatever pnpm npx finds.
  }
  return 'pnpm'
}

/** `text` as one shell word: unchanged when it is safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w./~:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
}

/** The host settings a resumed run should keep: they are flags, not session state (see {@link resumeCommand}). */
export interface ResumeFlags {
  /** `--placement`; only `transcript` is written (`system` is the default). */
  readonly placement?: 'system' | 'transcript'
  /** `--guard`. */
  readonly guard?: boolean
  /** `--require-sections`; written when there are any. */
  readonly requireSections?: readonly string[]
  /** `--models`; written when there are any (a session handed to one of them goes on with it). */
  readonly models?: readonly string[]
}

/**
 * The command that reopens a session, in the form that works on a machine
 * with only Node and npm: `npx -y pnpm@<pinned version> start --resume <target>`,
 * followed by `--placement transcript`, `--guard`, `--require-sections …`
 * and `--models …` when the session ran with them (they are host settings,
 * not logged, so a resume without the flags would come back with the
 * guidance in the system prompt, no guard, no check of the plan's sections
 * and no handoff models).
 */
export function resumeCommand(target: string, flags: ResumeFlags = {}, packageManager: string = pinnedPackageManager()): string {
  const sections = flags.requireSections ?? []
  const extra = [
    flags.placement === 'transcript' ? ' --placement transcript' : '',
    flags.guard === true ? ' --guard' : '',
    sections.length > 0 ? ` --require-sections ${shellWord(sections.join(','))}` : '',
    (flags.models ?? []).length > 0 ? ` --models ${shellWord(flags.models!.join(','))}` : '',
  ].join('')
  return `npx -y ${packageManager} start --resume ${shellWord(target)}${extra}`
}
