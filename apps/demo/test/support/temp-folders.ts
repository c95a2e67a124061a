import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

/**
 * A maker of temporary folders for one test file (`planmode-<prefix>-…` in
 * the temp dir), each removed after the file's tests, and `lines`, which
 * joins the lines a test types into one input.
 */
export function tempFolders(): (prefix: string) => string {
  const made: string[] = []
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true })
  })
  return (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), `planmode-${prefix}-`))
    made.push(dir)
    return dir
  }
}

/** The lines a test types, as one input (each ends with a newline). */
export const lines = (...input: string[]): string => `${input.join('\n')}\n`
