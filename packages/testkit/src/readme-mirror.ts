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
 * Reads a README's example (the first match of `block`, its first group:
 * by default the first `ts` block) and the code a test runs for it (the lines
 * of `test` between `// readme:start` and `// readme:end`, indented by
 * `indent`), so the test can check that the README shows what runs:
 *
 * ```ts
 * const mirror = readmeMirror(new URL('../README.md', import.meta.url), new URL(import.meta.url))
 * expect(mirror.block).toEqual(mirror.mirrored)
 * expect(mirror.missingImports).toEqual([])
 * ```
 */
export function readmeMirror(readme: URL, test: URL, options: { readonly block?: RegExp; readonly indent?: number } = {}): ReadmeMirror {
  const text = readFileSync(readme, 'utf8')
  const self = readFileSync(test, 'utf8')
  const found = (options.block ?? /```ts\n([\s\S]*?)```/).exec(text)
  if (found?.[1] === undefined) throw new Error(`readmeMirror: ${readme.pathname} has no block matching ${String(options.block)}`)
  const start = self.indexOf('// readme:start\n')
  const end = self.lastIndexOf('// readme:end')
  if (start < 0 || end < start) throw new Error(`readmeMirror: ${test.pathname} has no // readme:start … // readme:end`)
  const indent = options.indent ?? 4
  return {
    block: body(found[1]),
    mirrored: body(self.slice(start + '// readme:start\n'.length, self.lastIndexOf('\n', end)), indent),
    missingImports: found[1].split('\n').filter((line) => line.startsWith('import ') && !self.includes(line)),
  }
}
