import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { HOST_DUTIES } from '@planmode/host-conformance'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const page = readFileSync(`${root}docs/own-host.md`, 'utf8')
const example = `${root}examples/own-host/`
const WORDS = [
  'no',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
]
/** The host's own files: everything in src/ but the scripted model and the arc it runs. */
const HOST_FILES = readdirSync(`${example}src`).filter(
  (file) => file.endsWith('.ts') && !['arc.ts', 'main.ts', 'scripted-model.ts'].includes(file),
)

interface Block {
  /** The marker's kind (`file`, `excerpt`, …), or `undefined` for a block with no marker. */
  readonly kind: string | undefined
  readonly what: string
  readonly lang: string
  /** The text between the fences, without the newline before the closing fence. */
  readonly body: string
}

/** Every fenced block of the page (fences of three or more backticks), with the `<!-- kind: what -->` marker right above it. */
const blocks: Block[] = [...page.matchAll(/(?:<!-- (\w+)(?:: (.+?))? -->\n)?(`{3,})(\w*)\n([\s\S]*?)\n\3(?!`)/g)].map((match) => ({
  kind: match[1],
  what: match[2] ?? '',
  lang: match[4]!,
  body: match[5]!,
}))
const marked = (kind: string): Block[] => blocks.filter((block) => block.kind === kind)

describe('docs/own-host.md', () => {
  it('marks every ts and json block as a whole file, an excerpt or the tsconfig: nothing the reader copies is unchecked', () => {
    const code = blocks.filter((block) => block.lang === 'ts' || block.lang === 'json')
    expect(code.length).toBeGreaterThan(10)
    for (const block of code) expect(['file', 'excerpt', 'tsconfig'], block.body.slice(0, 80)).toContain(block.kind)
  })

  it('shows every file of src/ whole (the host, the arc, its model, the start script), with the conformance factory, its test file and the offline driver', () => {
    const files = marked('file').map((block) => block.what)
    expect(new Set(files)).toEqual(
      new Set([
        ...readdirSync(`${example}src`).map((file) => `examples/own-host/src/${file}`),
        'examples/own-host/test/own-host-factory.ts',
        'examples/own-host/test/conformance.test.ts',
        'examples/own-host/test/drive-offline.ts',
      ]),
    )
    expect(files).toHaveLength(new Set(files).size)
  })

  it.each(marked('file').map((block) => [block.what, block.body] as const))('the block of %s is the file, exactly', (file, body) => {
    expect(`${body}\n`).toBe(readFileSync(`${root}${file}`, 'utf8'))
  })

  it.each(marked('excerpt').map((block, index) => [index + 1, block.what, block.body] as const))(
    'excerpt %i is a run of whole lines of %s, with nothing left out',
    (_, file, body) => {
      expect(body).not.toMatch(/^\s*\/\/ …/m)
      const source = readFileSync(`${root}${file}`, 'utf8')
      expect(`\n${source}`, `not whole lines of ${file}:\n${body}`).toContain(`\n${body}\n`)
    },
  )

  it("shows the example's tsconfig as a project of yours needs it: the repository's file without its customConditions", () => {
    const [shown, ...more] = marked('tsconfig')
    expect(more).toEqual([])
    expect(shown!.what).toBe('examples/own-host/tsconfig.json')
    const { compilerOptions, ...rest } = JSON.parse(readFileSync(`${example}tsconfig.json`, 'utf8')) as {
      compilerOptions: Record<string, unknown>
    }
    const { customConditions, ...options } = compilerOptions
    expect(customConditions).toEqual(['@planmode/source'])
    expect(JSON.parse(shown!.body)).toEqual({ compilerOptions: options, ...rest })
    expect(options.lib).toEqual(['ES2023']) // findLast
  })

  it('installs every package the example uses, plan-guard, the kit and a test runner, and names only published packages', () => {
    const [install] = marked('install')
    const [runtime, dev] = install!.body.replace(/\\\n\s*/g, '').split('\n')
    expect(runtime).toMatch(/^npm install /)
    expect(dev).toMatch(/^npm install -D /)
    const manifest = JSON.parse(readFileSync(`${example}package.json`, 'utf8')) as {
      dependencies: Record<string, string>
      devDependencies: Record<string, string>
    }
    const named = (line: string): string[] =>
      line
        .split(/\s+/)
        .slice(2)
        .filter((word) => !word.startsWith('-'))
    expect(new Set(named(runtime!))).toEqual(new Set(Object.keys(manifest.dependencies)))
    expect(named(runtime!)).toContain('@planmode/plan-guard')
    expect(named(dev!)).toEqual(expect.arrayContaining(['@planmode/host-conformance', 'vitest', 'typescript', '@types/node']))
    for (const name of [...named(runtime!), ...named(dev!)].filter((word) => word.startsWith('@planmode/'))) {
      const dir = `${root}packages/${name.slice('@planmode/'.length)}`
      expect(existsSync(`${dir}/package.json`), name).toBe(true)
      expect((JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as { private?: boolean }).private, name).not.toBe(true)
    }
  })

  it('states the number of code lines of the host as the source has them (blank lines and comments not counted)', () => {
    const files = page.match(/^\| `[^\n]*$/gm)!.join(' ')
    for (const file of HOST_FILES) expect(files, `the page's table of files names ${file}`).toContain(`\`${file}\``)
    const code = (source: string): number =>
      source
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.trim().startsWith('//')).length
    const lines = HOST_FILES.reduce((sum, file) => sum + code(readFileSync(`${example}src/${file}`, 'utf8')), 0)
    expect(page).toContain(
      `The host is ${lines} lines of code (blank lines and comments not counted,\nimports counted) in ${WORDS[HOST_FILES.length]} files`,
    )
  })

  it("section 13's table sends every duty the kit checks to a section of the page", () => {
    const check = page.slice(page.indexOf('## 13. Check your host'), page.indexOf('## 14.'))
    const rows = check.match(/^\| `[^\n]*\]\(#[^\n]*$/gm) ?? []
    for (const { duty } of HOST_DUTIES)
      expect(
        rows.some((row) => row.split('|')[1]!.includes(`\`${duty}\``)),
        `no row of section 13 names ${duty}`,
      ).toBe(true)
  })

  it('links only to headings of the page', () => {
    // GitHub's anchors: lower case, punctuation dropped, spaces as hyphens.
    const slugs = [...page.matchAll(/^#+ (.+)$/gm)].map((match) =>
      match[1]!
        .toLowerCase()
        .replace(/[^a-z0-9 _-]/g, '')
        .replace(/ /g, '-'),
    )
    const anchors = [...page.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!)
    expect(anchors.length).toBeGreaterThan(0)
    for (const anchor of anchors) expect(slugs, anchor).toContain(anchor)
  })

  it("the example README's block is test/readme-example.ts, and it runs as shown", async () => {
    const readme = readFileSync(`${example}README.md`, 'utf8')
    const [block, ...more] = [...readme.matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)```/g)]
    expect(more).toEqual([])
    expect(block![1]).toBe('test/readme-example.ts')
    expect(block![2]).toBe(readFileSync(`${example}test/readme-example.ts`, 'utf8'))
    const lines: unknown[][] = []
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args))
    try {
      await import('./readme-example.js')
    } finally {
      log.mockRestore()
    }
    expect(lines).toEqual([[{ active: true, pending: false }]])
  })

  it('shows lines the start script prints, in the order it prints them', async () => {
    const [output] = marked('output')
    expect(output?.what).toBe('pnpm --filter @planmode/example-own-host start')
    const lines: string[] = []
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    try {
      vi.resetModules()
      await import('../src/main.js')
    } finally {
      log.mockRestore()
    }
    let from = 0
    for (const line of output!.body.split('\n').filter((line) => line !== '...')) {
      const at = lines.indexOf(line, from)
      expect(at, `the start script does not print, after line ${from}: ${line}`).toBeGreaterThanOrEqual(0)
      from = at + 1
    }
  })
})
