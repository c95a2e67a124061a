import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runPlanmode } from '@planmode/cli'
import { assertBuilt } from '@planmode/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { carryingScript, FEEDBACK, GOAL, PLAN_V1, planningScript } from './support/arc-script.js'
import { spawnAgent, type ChildAgent } from './support/child-agent.js'
import { clientView } from './support/client-view.js'
import { updatesOf } from './support/test-client.js'

const agentProcess = fileURLToPath(new URL('./support/agent-process.mjs', import.meta.url))
const BUILT = [
  'acp',
  'context',
  'seams',
  'store',
  'host',
  'scripted-model',
  'plan-core',
  'plan-policy',
  'plan-commands',
  'plan-tool',
  'plan-projection',
  'plan-progress',
  'cli',
]

let dir: string
let scriptFile: string
const running = new Set<ChildAgent>()
beforeAll(() => {
  assertBuilt('packages/acp stdio.test.ts', BUILT)
  dir = mkdtempSync(join(tmpdir(), 'planmode-acp-stdio-'))
  scriptFile = join(dir, 'script.json')
  writeFileSync(
    scriptFile,
    JSON.stringify({ default: planningScript(), models: { careful: carryingScript() }, handoff: { fresh: false, models: ['careful'] } }),
  )
})
afterAll(async () => {
  for (const agent of running) {
    agent.child.kill('SIGKILL')
    await agent.exited
  }
  rmSync(dir, { recursive: true, force: true })
})

function start(script = scriptFile): ChildAgent {
  const agent = spawnAgent(process.execPath, [agentProcess, join(dir, 'sessions'), script])
  running.add(agent)
  void agent.exited.then(() => running.delete(agent))
  return agent
}

/** Runs the `planmode` command line in this process (another process than the agent's) and returns its exit code and output. */
async function planmode(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io = {
    stdout: { write: (text: string) => ((stdout += text), true) },
    stderr: { write: (text: string) => ((stderr += text), true) },
    env: {},
  }
  const code = await runPlanmode([...args, '--dir', join(dir, 'sessions')], io)
  return { code, stdout, stderr }
}

describe('the agent as a child process over stdio, from the SDK client', () => {
  let sessionId: string
  let liveView: ReturnType<typeof clientView>

  it('the arc, with `planmode answer` answering the first review while its permission request waits', async () => {
    const agent = start()
    const { client } = agent
    await client.initialize()
    sessionId = (await client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })).sessionId
    const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `/plan ${GOAL}` }] })
    const first = await client.nextPermission()
    expect(first.params.toolCall.toolCallId).toBe('call-plan-1')

    // Another process answers first: the writer takes its answer, and the permission request is cancelled.
    const questions = await planmode('questions', sessionId, '--json')
    expect(questions.code).toBe(0)
    const questionId = (JSON.parse(questions.stdout) as { open: { questionId: string }[] }).open[0]!.questionId
    const answered = await planmode('answer', sessionId, questionId, 'keep', '--feedback', FEEDBACK, '--by', 'ada:Ada')
    expect(answered).toMatchObject({ code: 0 })
    await new Promise<void>((resolve) =>
      first.signal.aborted ? resolve() : first.signal.addEventListener('abort', () => resolve(), { once: true }),
    )
    // The client's answer, too late, counts for nothing.
    first.respond({ outcome: { outcome: 'selected', optionId: 'approve' } })

    const second = await client.nextPermission()
    expect(second.params.toolCall.toolCallId).toBe('call-plan-2')
    const kept = updatesOf(client.updates(sessionId), 'tool_call_update').find(
      (update) => update.toolCallId === 'call-plan-1' && update.status === 'completed',
    )
    expect(kept?.content).toEqual([
      {
        type: 'content',
        content: { type: 'text', text: `Keep planning by Ada (ada) (answered from another process).\nFeedback: ${FEEDBACK}` },
      },
    ])
    second.respond({ outcome: { outcome: 'selected', optionId: 'approve-model:careful' } })
    expect(await turn).toEqual({ stopReason: 'end_turn' })
    liveView = clientView(client.updates(sessionId))
    expect(liveView.plan).toEqual([
      'completed: Add greet() to src/greet.ts.',
      'completed: Print the greeting from the CLI.',
      'completed: Test greet() in test/greet.test.ts.',
    ])
    expect(liveView.mode).toBe('default')
    expect(client.wire.problems).toEqual([])
    expect(await agent.stop()).toBe(0)
  })

  it('a restart: session/load in a new agent process replays the log exactly, the same each time, and as the live client saw it', async () => {
    const replays = []
    for (let round = 0; round < 2; round++) {
      const agent = start()
      await agent.client.initialize()
      const loaded = await agent.client.agent.request('session/load', { sessionId, cwd: '/work/project', mcpServers: [] })
      expect(loaded.modes?.currentModeId).toBe('default')
      replays.push(agent.client.updates(sessionId))
      expect(agent.client.wire.problems).toEqual([])
      expect(await agent.stop()).toBe(0)
    }
    expect(replays[1]).toEqual(replays[0])
    expect(clientView(replays[0]!)).toEqual(liveView)
  })

  it('an agent process killed during a review: the next one closes the review interrupted and does not ask it again', async () => {
    const script = join(dir, 'review-only.json')
    writeFileSync(
      script,
      JSON.stringify({ default: [{ toolCalls: [{ toolCallId: 'call-killed', toolName: 'exit_plan_mode', input: { plan: PLAN_V1 } }] }] }),
    )
    const after = join(dir, 'after-kill.json')
    writeFileSync(after, JSON.stringify({ default: [{ text: 'Hello again.' }] }))
    const first = start(script)
    await first.client.initialize()
    const killedSession = (await first.client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })).sessionId
    await first.client.agent.request('session/set_mode', { sessionId: killedSession, modeId: 'plan' })
    void first.client.agent
      .request('session/prompt', { sessionId: killedSession, prompt: [{ type: 'text', text: GOAL }] })
      .catch(() => undefined)
    await first.client.nextPermission()
    first.child.kill('SIGKILL')
    await first.exited

    const next = start(after)
    await next.client.initialize()
    await next.client.agent.request('session/load', { sessionId: killedSession, cwd: '/work/project', mcpServers: [] })
    const view = clientView(next.client.updates(killedSession))
    expect(view.calls['call-killed']).toMatchObject({ status: 'failed', content: 'The turn ended before this call finished.' })
    expect(view.messages.at(-1)).toBe('agent: The turn was interrupted: the process running it ended before it did.')
    expect(view.mode).toBe('plan')
    // A request after the load answers only once the agent handled what came before it: no question was put again.
    await next.client.agent.request('session/list', {})
    expect(next.client.waitingPermissions).toBe(0)
    expect(
      await next.client.agent.request('session/prompt', { sessionId: killedSession, prompt: [{ type: 'text', text: 'hello' }] }),
    ).toEqual({ stopReason: 'end_turn' })
    expect(next.client.wire.problems).toEqual([])
    expect(await next.stop()).toBe(0)
  })
})
