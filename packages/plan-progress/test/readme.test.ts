import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { UPDATE_PLAN } from '@planmode/plan-progress'
import type { ToolResult } from '@planmode/seams'
import { expect, it } from 'vitest'
import { readmeMirror } from '@planmode/testkit'
import { approve } from './support.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
/** Checks that the README's `index`th ts block is the code between `// <name>:start` and `// <name>:end` here, imports aside. */
function mirrors(index: number, name: string, indent: number): void {
  const mirror = readmeMirror(new URL('../README.md', import.meta.url), new URL(import.meta.url), { block: index, marker: name, indent })
  expect(mirror.block).toEqual(mirror.mirrored)
  expect(mirror.missingImports).toEqual([])
}

it('runs the README composition example, which is the code below', async () => {
  mirrors(0, 'readme', 4)

  const example = async () => {
    // readme:start
    const root = new Context()
    root.plugin(hostPlugin, {
      model: createScriptedModel([
        { toolCalls: [{ toolName: 'update_plan', input: { updates: [{ step: 1, status: 'in_progress' }] } }] },
        { text: 'Working on step 1.' },
      ]),
    })
    root.plugin(planCorePlugin) // first: the layers require `planMode`
    root.plugin(planProgressPlugin) // update_plan and the progress messages
    root.plugin(planProgressProjectionPlugin) // optional: the planProgress key for UIs

    const session = await root.require('sessions').create()
    const agent = root.require('agents').create({ session })
    // plan-tool logs these when the user approves a plan (here by hand):
    await session.append('assistant/message', {
      turn: 0,
      step: 0,
      content: [{ type: 'tool-call', toolCallId: 'x1', toolName: 'exit_plan_mode', input: { plan: '# Cache\n\n1. Add it.\n2. Wire it in.\n' } }],
    })
    await (session.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', { toolCallId: 'x1', outcome: 'approved' })
    await agent.prompt('Go ahead.')
    root.require('sessionProjections').snapshot(session).values.planProgress
    // { plan: { toolCallId: 'x1', title: 'Cache' }, done: 0, total: 2, active: 1,
    //   steps: [{ step: 1, text: 'Add it.', status: 'in_progress' }, { step: 2, text: 'Wire it in.', status: 'pending' }] }
    // readme:end
    return { root, session }
  }
  const { root, session } = await example()
  expect(root.require('sessionProjections').snapshot(session).values.planProgress).toEqual({
    plan: { toolCallId: 'x1', title: 'Cache' },
    done: 0,
    total: 2,
    active: 1,
    steps: [
      { step: 1, text: 'Add it.', status: 'in_progress' },
      { step: 2, text: 'Wire it in.', status: 'pending' },
    ],
  })
})

it('runs the README verifier through the host loop: the model reads the refusal, fixes the code, and marks the step again', async () => {
  mirrors(1, 'verifier', 4)
  const workspace = await mkdtemp(join(tmpdir(), 'plan-progress-readme-'))
  try {
    await writeFile(
      join(workspace, 'cache.test.mjs'),
      "import { test } from 'node:test'\nimport assert from 'node:assert'\nimport { existsSync } from 'node:fs'\n" +
        "test('cache returns the stored value', () => assert.ok(existsSync(new URL('./cache.mjs', import.meta.url))))\n",
    )
    const markDone = { toolCalls: [{ toolName: UPDATE_PLAN, input: { updates: [{ step: 2, status: 'done' }] } }] }
    const root = new Context()
    root.plugin(hostPlugin, {
      model: createScriptedModel([markDone, { toolCalls: [{ toolName: 'write', input: {} }] }, markDone, { text: 'Done.' }]),
      retryDelayMs: 0,
    })
    root.plugin(planCorePlugin)
    root.plugin(planProgressPlugin)
    root.require('tools').register({
      name: 'write',
      description: 'Writes the cache module.',
      parameters: { type: 'object' },
      execute: async () => {
        await writeFile(join(workspace, 'cache.mjs'), 'export const cache = new Map()\n')
        return 'written'
      },
    })
    // verifier:start
    const run = promisify(execFile)
    root.on('plan/verify', async (payload, next) => {
      if (!/\btests?\b/i.test(payload.text)) return next(payload)
      try {
        await run(process.execPath, ['--test', '--test-reporter=tap'], { cwd: workspace })
        return next(payload)
      } catch (error) {
        const output = String((error as { stdout?: unknown }).stdout ?? error)
        const failing = output.split('\n').filter((line) => line.startsWith('not ok')).slice(0, 3)
        return next({ ...payload, problems: [...payload.problems, `the tests fail: ${failing.join('; ') || 'node --test exited with an error'}`] })
      }
    })
    // verifier:end
    const agent = root.require('agents').create({ session: await root.require('sessions').create() })
    await approve(agent.session, '# Cache\n\n1. Add the cache module.\n2. Run the tests.\n')
    await agent.prompt('Go ahead.')
    const results = agent.session.events
      .filter((event) => event.type === 'tool/result' && event.data.toolName === UPDATE_PLAN)
      .map((event) => (event.data as unknown as ToolResult).content.map((block) => block.text).join(''))
    expect(results).toEqual([
      'Error: update_plan: step 2 is not done:\n- the tests fail: not ok 1 - cache returns the stored value',
      'Plan progress: 1/2.\n[ ] 1. Add the cache module.\n[x] 2. Run the tests.',
    ])
    expect(readme).toContain('Error: update_plan: step 2 is not done:\n- the tests fail: not ok 1 - cache returns the stored value')
  } finally {
    await rm(workspace, { recursive: true, force: true })
  }
})

it('the README quotes every exact string of the package', async () => {
  const { UPDATE_PLAN_MESSAGES } = await import('@planmode/plan-progress')
  for (const text of [UPDATE_PLAN_MESSAGES.unloaded, UPDATE_PLAN_MESSAGES.notDone('<n>'), UPDATE_PLAN_MESSAGES.noAgent, UPDATE_PLAN_MESSAGES.planModeOn, UPDATE_PLAN_MESSAGES.noPlan, UPDATE_PLAN_MESSAGES.oneInProgress, UPDATE_PLAN_MESSAGES.track, UPDATE_PLAN_MESSAGES.remind, UPDATE_PLAN_MESSAGES.badArguments]) {
    expect(readme).toContain(text)
  }
})
