import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { jsonSchema, tool } from 'ai'
import { APPROVE, compose, eventsOf, PLAN, types } from './support/compose.js'
import { startChatServer, type ChatServer } from './support/chat-server.js'
import { scriptedMock } from './support/mock-model.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const source = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')

/** Every ```ts block of the README, with the `<!-- kind: path -->` marker right above it (kind `undefined` without one). */
const blocks = [...readme.matchAll(/(?:<!-- (\w+): (\S+) -->\n)?```ts\n([\s\S]*?)```/g)].map((match) => ({
  kind: match[1],
  path: match[2] ?? '',
  body: match[3]!,
}))

/** The lines of `text` with the indentation they share removed. */
const dedent = (lines: readonly string[]): string[] => {
  const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length))
  return lines.map((line) => line.slice(indent))
}

/** Captures console.log while `run` runs. */
async function logsOf(run: () => Promise<unknown>): Promise<unknown[][]> {
  const logs: unknown[][] = []
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logs.push(args))
  try {
    await run()
  } finally {
    spy.mockRestore()
  }
  return logs
}

let server: ChatServer | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  delete process.env.OPENAI_BASE_URL
  await server?.close()
  server = undefined
})

describe('the README code blocks', () => {
  it('are each a file of test/ (compiled by the package type-check) or a run of its lines: none is unchecked', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5)
    for (const block of blocks) {
      expect(['file', 'excerpt'], block.body.slice(0, 80)).toContain(block.kind)
      expect(block.path).toMatch(/^test\/[\w.-]+\.ts$/)
    }
  })

  it.each(blocks.filter((block) => block.kind === 'file').map((block) => [block.path, block.body] as const))(
    'the block of %s is the file, exactly',
    (path, body) => {
      expect(body).toBe(source(path))
    },
  )

  it.each(blocks.filter((block) => block.kind === 'excerpt').map((block, index) => [index + 1, block.path, block.body] as const))(
    'excerpt %i is a run of lines of %s (indentation aside)',
    (_, path, body) => {
      const wanted = body.trimEnd().split('\n')
      const lines = source(path).split('\n')
      const at = lines.findIndex((_, start) => JSON.stringify(dedent(lines.slice(start, start + wanted.length))) === JSON.stringify(wanted))
      expect(at, `not a run of lines of ${path}:\n${body}`).toBeGreaterThanOrEqual(0)
    },
  )

  it('names the quick start, the offline example and the conformance test file among them', () => {
    expect(blocks.filter((block) => block.kind === 'file').map((block) => block.path)).toEqual([
      'test/quick-start.ts',
      'test/offline.ts',
      'test/conformance.test.ts',
    ])
  })
})

describe('README quick start', () => {
  it('is at most 21 lines of code: the runtimes, every plan layer the kit checks, plan-guard, a model, one call', () => {
    const code = source('test/quick-start.ts')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.trim().startsWith('//'))
    expect(code.length).toBeLessThanOrEqual(21)
    for (const name of ['sessionProjectionsPlugin', 'planProjectionPlugin', 'planHistoryPlugin', 'planGuardPlugin'])
      expect(code.join('\n')).toContain(name)
  })

  it('runs: /plan, a plan reviewed and approved, then carried out, against a loopback chat-completions server', async () => {
    server = await startChatServer([
      { calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] },
      { text: 'Done: --verbose reaches the logger.' },
    ])
    process.env.OPENAI_BASE_URL = server.url
    const logs = await logsOf(() => import('./quick-start.js'))

    expect(logs).toEqual([
      ['Plan mode on. Send /plan off to leave.'],
      ['Done: --verbose reaches the logger.', { active: false, pending: false }],
    ])
    const [first, second] = server.requests
    expect(first!.model).toBe('qwen3')
    expect(first!.messages[0]).toEqual({ role: 'system', content: RECOMMENDED_PLAN_SECTION })
    expect(second!.messages[0]!.role).toBe('user')
  })
})

describe('README offline example', () => {
  it("runs with the AI SDK's MockLanguageModelV3: the plan is approved, plan mode is off, only the first request had the guidance", async () => {
    const logs = await logsOf(() => import('./offline.js'))
    expect(logs).toEqual([['Done: --verbose is parsed.', { active: false }], [[true, false]]])
  })
})

describe('README Compose blocks', () => {
  it('the streamed /plan: the message is queued, one stream sends it, and the turn ends with the stream', async () => {
    const { ctx, session } = await (async () => {
      const composition = compose({ answers: [APPROVE] })
      return { ctx: composition.ctx, session: await composition.session() }
    })()
    const model = scriptedMock([{ text: 'Looking at the test first.' }])
    const files = new Map([['flaky.test.ts', 'it("sometimes", ...)']])
    const read_file = tool({
      description: 'Reads a file.',
      inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
      execute: async ({ path }) => files.get(path) ?? '',
    })
    const write_file = tool({
      description: 'Writes a file.',
      inputSchema: jsonSchema<{ path: string; text: string }>({
        type: 'object',
        properties: { path: { type: 'string' }, text: { type: 'string' } },
        required: ['path', 'text'],
      }),
      execute: async ({ path, text }) => void files.set(path, text),
    })
    const written: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true))
    const { streamedPlan } = await import('./readme-snippets.js')
    const planner = await streamedPlan(ctx, session, model, { read_file, write_file })
    vi.restoreAllMocks()

    expect(written.join('')).toBe('Looking at the test first.')
    expect(types(session).slice(0, 4)).toEqual(['command/run', 'plan/mode', 'command/done', 'turn/start'])
    expect(eventsOf(session, 'user/message')[0]!.data.content).toEqual([{ type: 'text', text: 'fix the flaky test' }])
    expect(types(session).at(-1)).toBe('turn/end')
    expect(model.requests[0]!.tools?.map((entry) => entry.name)).toEqual(['enter_plan_mode', 'exit_plan_mode', 'read_file', 'write_file'])
    expect(planner.running).toBe(false)
    planner.dispose()
    ctx.dispose()
  })
})
