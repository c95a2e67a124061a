import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const page = readFileSync(`${root}docs/own-host.md`, 'utf8')
const WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen']

/** Every fenced block of the page preceded by `<!-- <kind>: <what> -->`, in page order. */
function marked(kind: string): { what: string; body: string }[] {
  const pattern = new RegExp(`<!-- ${kind}: (.+?) -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``, 'g')
  return [...page.matchAll(pattern)].map((match) => ({ what: match[1]!, body: match[2]! }))
}

describe('docs/own-host.md', () => {
  const excerpts = marked('excerpt')

  it('has an excerpt of every part of the host, of the restart and of the driver', () => {
    const parts = ['host', 'session-log', 'agent', 'step-loop', 'system-prompt', 'transcript', 'tools', 'commands', 'user-questions', 'projections']
    expect(new Set(excerpts.map((excerpt) => excerpt.what))).toEqual(
      new Set([...parts.map((name) => `examples/own-host/src/${name}.ts`), 'examples/own-host/test/own-host.test.ts']),
    )
  })

  it('states the number of code lines of the host as the source has them (blank lines and comments not counted)', () => {
    const host = readdirSync(`${root}examples/own-host/src`).filter((file) => file.endsWith('.ts') && !['arc.ts', 'main.ts', 'scripted-model.ts'].includes(file))
    const files = page.match(/^\| `[^\n]*$/gm)!.join(' ')
    for (const file of host) expect(files, `the page's table of files names ${file}`).toContain(`\`${file}\``)
    const code = (source: string): number =>
      source
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.trim().startsWith('//')).length
    const lines = host.reduce((sum, file) => sum + code(readFileSync(`${root}examples/own-host/src/${file}`, 'utf8')), 0)
    expect(page).toContain(`The host is ${lines} lines of code (blank lines and comments not counted,\nimports counted) in ${WORDS[host.length]} files`)
  })

  it.each(excerpts.map((excerpt, index) => [index + 1, excerpt.what, excerpt.body] as const))(
    'excerpt %i appears word for word in %s (pieces split by // … in order)',
    (_, file, body) => {
      const source = readFileSync(`${root}${file}`, 'utf8')
      let from = 0
      for (const piece of body.split(/^\s*\/\/ …\n/m)) {
        const at = source.indexOf(piece.replace(/\n$/, ''), from)
        expect(at, `not found in ${file} after offset ${from}:\n${piece}`).toBeGreaterThanOrEqual(0)
        from = at + piece.length
      }
    },
  )

  it('links only to headings of the page', () => {
    // GitHub's anchors: lower case, punctuation dropped, spaces as hyphens.
    const slugs = [...page.matchAll(/^#+ (.+)$/gm)].map((match) => match[1]!.toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-'))
    const anchors = [...page.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!)
    expect(anchors.length).toBeGreaterThan(0)
    for (const anchor of anchors) expect(slugs, anchor).toContain(anchor)
  })

  it("the example README's quick start runs as shown", async () => {
    const readme = readFileSync(`${root}examples/own-host/README.md`, 'utf8')
    const code = /```ts\n([\s\S]*?)\n```/.exec(readme)![1]!
    const { approvingReviewer, createOwnHost, createScriptedModel } = await import('../src/index.js')
    const body = code.replace(/^import .*\n/m, '').replace(/^(host\.ctx\.require\('sessionProjections'\).*?) \/\/.*$/m, 'return [$1, host]')
    const run = new Function('approvingReviewer', 'createOwnHost', 'createScriptedModel', `return (async () => {\n${body}\n})()`)
    const [plan, host] = await run(approvingReviewer, createOwnHost, createScriptedModel)
    host.dispose()
    expect(plan).toEqual({ active: true, pending: false })
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
