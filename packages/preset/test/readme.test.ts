// The first code example of the repository's README and of this package's README: the file test/readme-example.ts
// (type-checked with the package), run here with the DeepSeek model swapped for a scripted one.
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createScriptedModel, type ScriptedModel } from '@planmode/host'
import { afterEach, expect, it, vi } from 'vitest'

const example = readFileSync(new URL('./readme-example.ts', import.meta.url), 'utf8')
const firstTsBlock = (path: string): string | undefined =>
  /```ts\n([\s\S]*?)```/.exec(readFileSync(new URL(path, import.meta.url), 'utf8'))?.[1]

const PLAN = '# Add a --verbose flag\n\n- [ ] Parse `--verbose` in `cli.js`.\n- [ ] Log each step when it is set.\n'

const model: { current?: ScriptedModel } = {}
vi.mock('@planmode/host', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@planmode/host')>()),
  createDeepSeekModel: () => model.current!,
}))

const cwd = process.cwd()
afterEach(() => {
  process.chdir(cwd)
  vi.restoreAllMocks()
})

it('is the first code example of the repository README and of the package README, exactly', () => {
  expect(firstTsBlock('../../../README.md')).toBe(example)
  expect(firstTsBlock('../README.md')).toBe(example)
})

it('runs: /plan, read-only exploration, a plan approved by the provider, then carried out and tracked', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'planmode-preset-readme-'))
  try {
    await writeFile(join(dir, 'cli.js'), 'export const run = (argv) => argv\n')
    process.chdir(dir)
    model.current = createScriptedModel([
      { toolCalls: [{ toolName: 'read_file', input: { path: 'cli.js' } }] },
      { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }] },
      {
        toolCalls: [
          {
            toolName: 'update_plan',
            input: {
              updates: [
                { step: 1, status: 'done' },
                { step: 2, status: 'done' },
              ],
            },
          },
        ],
      },
      { text: 'Done: --verbose logs each step.' },
    ])
    const logs: unknown[][] = []
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args))
    await import('./readme-example.js')

    expect(logs).toEqual([['Plan mode on. Send /plan off to leave.'], [{ active: false, pending: false }, 2, 2]])
    const requests = model.current.requests
    // The read ran in plan mode (read-only, so plan-guard let it), and its text reached the model.
    expect(JSON.stringify(requests[1]!.prompt)).toContain('export const run')
    // The session is a JSONL file in .sessions/ with the whole arc in it.
    const [file] = await readdir(join(dir, '.sessions'))
    const types = readFileSync(join(dir, '.sessions', file!), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type)
    expect(types).toContain('plan/review')
    expect(types).toContain('plan/progress')
    expect(types.at(-1)).toBe('turn/end')
    expect(existsSync(join(dir, '.sessions', file!))).toBe(true)
  } finally {
    process.chdir(cwd)
    await rm(dir, { recursive: true, force: true })
  }
})

it('its "Adding to it" block is a run of lines of test/postgres.test.ts, which runs it', () => {
  const blocks = [...readFileSync(new URL('../README.md', import.meta.url), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map(
    (match) => match[1]!,
  )
  expect(blocks).toHaveLength(2)
  const wanted = blocks[1]!.trimEnd().split('\n')
  const lines = readFileSync(new URL('./postgres.test.ts', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.trim())
  const at = lines.findIndex((_, start) => JSON.stringify(lines.slice(start, start + wanted.length)) === JSON.stringify(wanted))
  expect(at, blocks[1]).toBeGreaterThanOrEqual(0)
})
