import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { PLAN } from './support/compose.js'
import { startChatServer, type ChatServer } from './support/chat-server.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const quickStart = readFileSync(new URL('./quick-start.ts', import.meta.url), 'utf8')

let server: ChatServer | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  delete process.env.OPENAI_BASE_URL
  await server?.close()
})

describe('README quick start', () => {
  it('is test/quick-start.ts verbatim, and at most about 20 lines of code', () => {
    const section = readme.slice(readme.indexOf('## Quick start'))
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
    expect(block).toBe(quickStart)
    expect(quickStart.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('//')).length).toBeLessThanOrEqual(20)
  })

  it('runs: /plan, a plan reviewed and approved, then carried out, against a loopback chat-completions server', async () => {
    server = await startChatServer([{ calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Done: --verbose reaches the logger.' }])
    process.env.OPENAI_BASE_URL = server.url
    const logs: unknown[][] = []
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      logs.push(args)
    })
    await import('./quick-start.js')

    expect(logs).toEqual([['Plan mode on. Send /plan off to leave.'], ['Done: --verbose reaches the logger.', { active: false }]])
    const [first, second] = server.requests
    expect(first!.model).toBe('qwen3')
    expect(first!.messages[0]).toEqual({ role: 'system', content: RECOMMENDED_PLAN_SECTION })
    expect(second!.messages[0]!.role).toBe('user')
  })
})
