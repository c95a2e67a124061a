import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readmeMirror } from '@planmode/testkit'

let dir: string
const file = (name: string): URL => pathToFileURL(join(dir, name))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-testkit-readme-'))
  await writeFile(
    join(dir, 'README.md'),
    "# x\n\n```ts\nimport { a } from 'a'\n\nconst b = a()\nconsole.log(b)\n```\n\n## Other\n\n```ts\nimport { z } from 'z'\nz()\n```\n",
  )
  const test = (lines: string): string =>
    `import { a } from 'a'\n\nit('x', () => {\n  const run = () => {\n    // readme:start\n${lines}    // readme:end\n  }\n})\n`
  await writeFile(join(dir, 'same.test.ts'), test('    const b = a()\n\n    console.log(b)\n'))
  await writeFile(join(dir, 'drifted.test.ts'), test('    const b = a(1)\n    console.log(b)\n'))
  await writeFile(join(dir, 'unmarked.test.ts'), 'it()\n')
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('readmeMirror', () => {
  it('pairs the block with the marked code, imports and blank lines aside, and names a block import the test lacks', () => {
    expect(readmeMirror(file('README.md'), file('same.test.ts'))).toEqual({
      block: ['const b = a()', 'console.log(b)'],
      mirrored: ['const b = a()', 'console.log(b)'],
      missingImports: [],
    })
    const other = readmeMirror(file('README.md'), file('same.test.ts'), { block: /## Other\n\n```ts\n([\s\S]*?)```/ })
    expect(other.missingImports).toEqual(["import { z } from 'z'"])
    expect(readmeMirror(file('README.md'), file('same.test.ts'), { block: 1 }).block).toEqual(['z()'])
  })

  it('shows a README that drifted from the code, and fails loudly without a block or markers', () => {
    const drifted = readmeMirror(file('README.md'), file('drifted.test.ts'))
    expect(drifted.block).not.toEqual(drifted.mirrored)
    expect(() => readmeMirror(file('README.md'), file('unmarked.test.ts'))).toThrow(/no \/\/ readme:start/)
    expect(() => readmeMirror(file('README.md'), file('same.test.ts'), { block: /```python\n([\s\S]*?)```/ })).toThrow(
      /has no block matching/,
    )
    expect(() => readmeMirror(file('README.md'), file('same.test.ts'), { block: 2 })).toThrow(/has no block #2 \(ts\)/)
    expect(() => readmeMirror(file('README.md'), file('same.test.ts'), { marker: 'other' })).toThrow(/no \/\/ other:start/)
  })
})
