import { readFileSync } from 'node:fs'

/** A README's code block next to the code a test runs for it: equal when the README shows what runs. */
export interface ReadmeMirror {
  /** The block's lines, imports and blank lines left out. */
  readonly block: readonly string[]
  /** The test's lines between `// readme:start` and `// readme:end`, as the block would have them. */
  readonly mirrored: readonly string[]
  /** The block's import lines the test file does not have. */
  readonly missingImports: readonly string[]
}

/** The lines of `text` that are not imports, blank lines dropped, with up to `indent` leading spaces removed. */
function body(text: string, indent = 0): string[] {
  return text
    .split('\n')
    .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
    .filter((line) => line.trim() !== '' && !line.startsWith('import '))
}

/**
 * Reads a README's example and the code a test runs for it, so the test can
 * check that the README shows what runs. The example is the README's first
 * match of `block` (its first group) or, for a number, its `block`th `ts`
 * block (from 0); by default the first `ts` block. The code is the lines of
 * `test` between `// <marker>:start` and `// <marker>:end` (default marker
 * `readme`), indented by `indent` (default 4):
 *
 * ```ts
 * const mirror = readmeMirror(new URL('../README.md', import.meta.url), new URL(import.meta.url))
 * expect(mirror.block).toEqual(mirror.mirrored)
 * expect(mirror.missingImports).toEqual([])
 * ```
 */
export function readmeMirror(
  readme: URL,
  test: URL,
  options: { readonly block?: RegExp | number; readonly marker?: string; readonly indent?: number } = {},
): ReadmeMirror {
  const text = readFileSync(readme, 'utf8')
  const self = readFileSync(test, 'utf8')
  const which = options.block ?? 0
  const found = typeof which === 'number' ? [...text.matchAll(/```ts\n([\s\S]*?)```/g)][which]?.[1] : which.exec(text)?.[1]
  if (found === undefined)
    throw new Error(
      `readmeMirror: ${readme.pathname} has no block ${typeof which === 'number' ? `#${which} (ts)` : `matching ${String(which)}`}`,
    )
  const marker = options.marker ?? 'readme'
  const start = self.indexOf(`// ${marker}:start\n`)
  const end = self.lastIndexOf(`// ${marker}:end`)
  if (start < 0 || end < start) throw new Error(`readmeMirror: ${test.pathname} has no // ${marker}:start … // ${marker}:end`)
  const indent = options.indent ?? 4
  return {
    block: body(found),
    mirrored: body(self.slice(start + `// ${marker}:start\n`.length, self.lastIndexOf('\n', end)), indent),
    missingImports: found.split('\n').filter((line) => line.startsWith('import ') && !self.includes(line)),
  }
}
