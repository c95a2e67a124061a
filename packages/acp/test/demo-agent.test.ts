import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { dropSchema, freshSchemaName, pgTestUrl, scaledMs } from '@planmode/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnAgent, type ChildAgent } from './support/child-agent.js'
import { clientView } from './support/client-view.js'
import { WireRecorder } from './support/wire.js'

/**
 * `pnpm acp` (the demo's offline planner served as an ACP agent,
 * `apps/demo/src/acp`), driven by the SDK's client over stdio and by a
 * headless ACP client that is not ours: `acpx` from the npm registry, run
 * under the Node it needs (22.13 or later) from the registry's `node`
 * package.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url))
const demoAgent = join(root, 'apps', 'demo', 'dist', 'acp.js')
const ACPX = 'acpx@0.19.1'
const NODE = 'node@24'
const run = promisify(execFile)

function assertDemoBuilt(): void {
  if (!existsSync(demoAgent)) throw new Error(`${demoAgent} is missing: run \`pnpm build\` first (the test runs the built \`pnpm acp\`)`)
  const newest = (dir: string): number =>
    Math.max(
      ...readdirSync(dir, { withFileTypes: true }).map((entry) =>
        entry.isDirectory() ? newest(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs,
      ),
    )
  const built = statSync(demoAgent).mtimeMs
  for (const source of [join(root, 'apps', 'demo', 'src'), join(root, 'packages', 'acp', 'src')]) {
    if (newest(source) > built) throw new Error(`${demoAgent} is older than ${source}: run \`pnpm build\` first`)
  }
}

let dir: string
const running = new Set<ChildAgent>()
beforeAll(() => {
  assertDemoBuilt()
  dir = mkdtempSync(join(tmpdir(), 'planmode-acp-demo-'))
  mkdirSync(join(dir, 'home'))
})
afterAll(async () => {
  for (const agent of running) {
    agent.child.kill('SIGKILL')
    await agent.exited
  }
  rmSync(dir, { recursive: true, force: true })
})

/**
 * The environment of a run: this one (npx needs what npm was configured
 * with), with a home of the test's own (acpx keeps its sessions there) and
 * npm's own configuration and cache where they were. The agent runs with
 * --offline, so no key in the environment reaches a model.
 */
const env = (): NodeJS.ProcessEnv => {
  const home = process.env.HOME ?? dir
  return {
    ...process.env,
    HOME: join(dir, 'home'),
    npm_config_userconfig: process.env.npm_config_userconfig ?? join(home, '.npmrc'),
    npm_config_cache: process.env.npm_config_cache ?? join(home, '.npm'),
    npm_config_update_notifier: 'false',
  }
}

describe('pnpm acp: the demo offline planner as an ACP agent', () => {
  it('the arc from the SDK client over stdio: /plan, exploration, Keep planning with feedback, a revision, approval, the plan carried out', async () => {
    const agent = spawnAgent(process.execPath, [demoAgent, '--offline', '--session-dir', join(dir, 'sdk-sessions')], { env: env() })
    running.add(agent)
    const { client } = agent
    await client.initialize()
    const { sessionId, modes } = await client.agent.request('session/new', { cwd: dir, mcpServers: [] })
    expect(modes?.currentModeId).toBe('default')
    const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/plan Add due dates to tasks' }] })
    const first = await client.nextPermission()
    expect(first.params.options.map((option) => option.optionId)).toEqual(['approve', 'approve-fresh', 'keep', 'stop'])
    first.respond({ outcome: { outcome: 'selected', optionId: 'keep' } })
    ;(await client.nextElicitation()).respond({ action: 'accept', content: { feedback: 'Also show overdue tasks first.' } })
    const second = await client.nextPermission()
    expect(second.params.toolCall.toolCallId).not.toBe(first.params.toolCall.toolCallId)
    second.respond({ outcome: { outcome: 'selected', optionId: 'approve' } })
    expect(await turn).toEqual({ stopReason: 'end_turn' })
    const view = clientView(client.updates(sessionId))
    expect(view.mode).toBe('default')
    expect(view.plan?.length).toBeGreaterThan(0)
    expect(view.plan?.every((entry) => entry.startsWith('completed: '))).toBe(true)
    expect(Object.values(view.calls).some((call) => call.kind === 'read' && call.status === 'completed')).toBe(true)
    expect(client.wire.problems).toEqual([])
    expect(await agent.stop()).toBe(0)
  })

  it('--store postgres://…: sessions in PostgreSQL; a new agent process loads one and replays it as it was', async () => {
    const schema = freshSchemaName('acp')
    const store = ['--offline', '--store', pgTestUrl(), '--schema', schema]
    try {
      const first = spawnAgent(process.execPath, [demoAgent, ...store], { env: env() })
      running.add(first)
      await first.client.initialize()
      const { sessionId } = await first.client.agent.request('session/new', { cwd: dir, mcpServers: [] })
      await first.client.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
      const turn = first.client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Add due dates to tasks' }] })
      ;(await first.client.nextPermission()).respond({ outcome: { outcome: 'selected', optionId: 'approve' } })
      expect(await turn).toEqual({ stopReason: 'end_turn' })
      const live = clientView(first.client.updates(sessionId))
      expect(await first.stop()).toBe(0)

      const second = spawnAgent(process.execPath, [demoAgent, ...store], { env: env() })
      running.add(second)
      await second.client.initialize()
      expect((await second.client.agent.request('session/list', {})).sessions.map((info) => info.sessionId)).toEqual([sessionId])
      await second.client.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] })
      expect(clientView(second.client.updates(sessionId))).toEqual(live)
      for (const agent of [first, second]) expect(agent.client.wire.problems).toEqual([])
      expect(await second.stop()).toBe(0)
    } finally {
      await dropSchema(pgTestUrl(), schema)
    }
  })

  describe(`with ${ACPX} (a headless ACP client from the npm registry), under ${NODE}`, () => {
    /** Runs acpx against `pnpm acp` whose sessions are in `<dir>/<sessions>` (one folder per test: `session/list` lists only its own). */
    const acpxIn = async (sessions: string, ...args: string[]): Promise<{ code: number; lines: string[]; stderr: string }> => {
      const agentCommand = `${process.execPath} ${demoAgent} --offline --session-dir ${join(dir, sessions)}`
      try {
        const { stdout, stderr } = await run(
          'npx',
          ['-y', '-p', NODE, '-p', ACPX, '--', 'acpx', '--agent', agentCommand, '--cwd', dir, '--ttl', '1', '--format', 'json', ...args],
          {
            env: env(),
            cwd: dir,
            timeout: scaledMs(180_000),
            maxBuffer: 64 * 1024 * 1024,
          },
        )
        return { code: 0, lines: stdout.trim().split('\n'), stderr }
      } catch (error) {
        const failed = error as { code?: number; stdout?: string; stderr?: string }
        return {
          code: typeof failed.code === 'number' ? failed.code : 1,
          lines: (failed.stdout ?? '').trim().split('\n'),
          stderr: failed.stderr ?? '',
        }
      }
    }
    const messages = (lines: readonly string[]) =>
      lines.flatMap((line) => {
        try {
          return [
            JSON.parse(line) as {
              method?: string
              id?: unknown
              params?: { update?: { sessionUpdate: string; [key: string]: unknown }; options?: { optionId: string }[] }
              result?: Record<string, unknown>
              error?: { message: string }
            },
          ]
        } catch {
          return []
        }
      })

    it('exec: one prompt runs the whole arc, its review approved by acpx --approve-all, every message the agent sent valid', async () => {
      const { code, lines, stderr } = await acpxIn('exec-sessions', '--approve-all', 'exec', '/plan Add due dates to tasks')
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' })
      const wire = new WireRecorder()
      wire.feed(lines)
      expect(wire.problems).toEqual([])
      const all = messages(lines)
      const updates = all.flatMap((message) => (message.method === 'session/update' ? [message.params!.update!] : []))
      const permission = all.find((message) => message.method === 'session/request_permission')
      expect(permission?.params?.options?.map((option) => option.optionId)).toEqual(['approve', 'approve-fresh', 'keep', 'stop'])
      // acpx answered with the first allow option: Approve.
      expect(
        all.find(
          (message) =>
            message.method === undefined &&
            (message.result as { outcome?: { optionId?: string } } | undefined)?.outcome?.optionId === 'approve',
        ),
      ).toBeDefined()
      expect(updates.filter((update) => update.sessionUpdate === 'current_mode_update').map((update) => update.currentModeId)).toEqual([
        'plan',
        'default',
      ])
      const plans = updates
        .filter((update) => update.sessionUpdate === 'plan')
        .map((update) => (update.entries as { status: string }[]).map((entry) => entry.status))
      expect(plans[0]!.every((status) => status === 'pending')).toBe(true)
      expect(plans.at(-1)!.every((status) => status === 'completed')).toBe(true)
      expect(updates.some((update) => update.sessionUpdate === 'tool_call' && update.kind === 'switch_mode')).toBe(true)
      expect(all.find((message) => message.result?.stopReason !== undefined)?.result).toEqual({ stopReason: 'end_turn' })
    })

    it('a persistent session: sessions new, set-mode, set mode (the config option), a mode id the agent refuses, a prompt after acpx reconnects, sessions list', async () => {
      const acpx = (...args: string[]) => acpxIn('persistent-sessions', ...args)
      const created = await acpx('sessions', 'new')
      expect(created.code).toBe(0)
      const planMode = await acpx('set-mode', 'plan')
      expect(messages(planMode.lines).at(-1)).toMatchObject({ action: 'mode_set', modeId: 'plan' })
      const byOption = await acpx('set', 'mode', 'default')
      expect(messages(byOption.lines).at(-1)).toMatchObject({
        action: 'config_set',
        configOptions: [{ id: 'mode', currentValue: 'default' }],
      })
      const refused = await acpx('set-mode', 'architect')
      expect(refused.code).not.toBe(0)
      expect(messages(refused.lines).at(-1)?.error?.message).toBe(
        'Invalid params: unknown mode id "architect": this agent\'s modes are "default" and "plan"',
      )
      const prompted = await acpx('--approve-all', 'prompt', '/plan Add due dates to tasks')
      expect(prompted.code).toBe(0)
      // acpx reconnects to the saved session with session/resume (advertised), then prompts.
      expect(messages(prompted.lines).some((message) => message.method === 'session/resume')).toBe(true)
      const listed = await acpx('sessions', 'list')
      const sessions = (messages(listed.lines).at(-1) as { sessions?: { title?: string | null }[] } | undefined)?.sessions
      expect(sessions).toHaveLength(1)
      expect(sessions![0]!.title).toMatch(/due dates/i)
      await acpx('sessions', 'close')
    })
  })
})
