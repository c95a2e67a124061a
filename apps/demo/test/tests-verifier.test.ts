// The demo's step check (SPEC §25): `node --test` really run in a copy of the sample project, and the
// `plan/verify` listener through the real host (the preset, plan-progress's update_plan, the demo's
// workspace tools), with the offline model carrying a plan out tests first and with scripted calls.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@planmode/context'
import { createScriptedModel, type HostAgent, type ScriptedResponse } from '@planmode/host'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { createStyle } from '../src/render/style.js'
import { composePlanHost } from '../src/terminal/compose-host.js'
import { progressLines } from '../src/terminal/plans-command.js'
import { refusedSteps } from '../src/terminal/refused-steps.js'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'
import { namesTests, runProjectTests } from '../src/workspace/tests-verifier.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const sample = (): string => {
  const dir = copySampleWorkspace()
  dirs.push(dir)
  return dir
}
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

const FAILING = `import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TaskList } from '../src/tasks.js'
test('reopen works', () => {
  assert.equal(new TaskList().reopen(1).done, false)
})
`

describe('which steps name tests', () => {
  it('the words test and tests, and test files; nothing else', () => {
    for (const text of [
      '`test/undo.test.js`: tests first',
      'Run the tests',
      'add a test for it',
      'npm test passes',
      'cover it in `src/x.test.mjs`',
    ])
      expect(namesTests(text), text).toBe(true)
    for (const text of ['`src/tasks.js`: reopen(id)', 'README usage line', 'attest the release', 'contest entries', 'latest version'])
      expect(namesTests(text), text).toBe(false)
  })
})

describe('runProjectTests: node --test in the workspace', () => {
  it('passes on the sample project as shipped', async () => {
    expect(await runProjectTests(sample())).toEqual({ passed: true, summary: 'node --test: 3 passed' })
  })

  it('fails with the count, the failing test by name and its error', async () => {
    const dir = sample()
    writeFileSync(join(dir, 'test', 'reopen.test.js'), FAILING)
    expect(await runProjectTests(dir)).toEqual({
      passed: false,
      summary: 'node --test: 1 of 4 failed — “reopen works” ((intermediate value).reopen is not a function)',
    })
  })

  it('stops a run past its bound and says so; a folder without tests is not a pass', async () => {
    const dir = sample()
    writeFileSync(
      join(dir, 'test', 'hang.test.js'),
      "import { test } from 'node:test'\ntest('hangs', () => new Promise(() => setInterval(() => {}, 1000)))\n",
    )
    const stopped = await runProjectTests(dir, 1500)
    expect(stopped).toEqual({ passed: false, summary: 'node --test did not finish within 2 s and was stopped (SIGKILL)' })
    const empty = mkdtempSync(join(tmpdir(), 'planmode-no-tests-'))
    dirs.push(empty)
    expect(await runProjectTests(empty)).toEqual({ passed: false, summary: 'node --test found no tests in the workspace' })
  })
})

/** The reference host with every plan layer, the workspace tools and the step check, over `workspace`. */
async function verifiedHost(
  workspace: string,
  model: ReturnType<typeof createScriptedModel> | ReturnType<typeof createOfflineModel>,
  verifyTests = true,
) {
  const ctx = new Context({ logger: quiet })
  const sessionDir = mkdtempSync(join(tmpdir(), 'planmode-verify-sessions-'))
  dirs.push(sessionDir)
  composePlanHost(ctx, { sessionDir, model, section: RECOMMENDED_PLAN_SECTION, workspace, verifyTests, maxSteps: 40 })
  ctx
    .require('userQuestions')
    .registerProvider({ ask: async ({ questions }) => questions.map((question) => ({ id: question.id, selected: ['Approve'] })) })
  const agent: HostAgent = ctx.require('agents').create({ session: await ctx.require('sessions').create() })
  return { ctx, agent }
}

const PLAN = '# Reopen\n\n## Steps\n1. `src/tasks.js`: add `reopen(id)`.\n2. `test/reopen.test.js`: tests for it.\n'
const approve: ScriptedResponse[] = [{ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }] }]
const mark = (updates: { step: number; status: string }[]): ScriptedResponse => ({
  toolCalls: [{ toolName: 'update_plan', input: { updates } }],
})
const results = (events: readonly SessionEvent[]): string[] =>
  events.flatMap((event) =>
    event.type === 'tool/result' && event.data.toolName === 'update_plan' ? [event.data.content.map((block) => block.text).join('')] : [],
  )

describe('the plan/verify listener through the real host', () => {
  it('refuses a step that names tests while they fail, lets a step that names none through, and passes once they pass', async () => {
    const workspace = sample()
    writeFileSync(join(workspace, 'test', 'reopen.test.js'), FAILING)
    const model = createScriptedModel([
      ...approve,
      mark([{ step: 1, status: 'done' }]),
      mark([{ step: 2, status: 'done' }]),
      {
        toolCalls: [
          {
            toolName: 'write_file',
            input: { path: 'test/reopen.test.js', content: "import { test } from 'node:test'\ntest('fine', () => {})\n" },
          },
        ],
      },
      mark([{ step: 2, status: 'done' }]),
      { text: 'Done.' },
    ])
    const { ctx, agent } = await verifiedHost(workspace, model)
    await ctx.require('planMode').set(agent, true)
    await agent.prompt('plan reopen')
    const texts = results(agent.session.events)
    // Step 1 names no tests: done without a run. Step 2 does: refused while reopen.test.js fails, done once it passes.
    expect(texts[0]).toMatch(/^Plan progress: 1\/2\./)
    expect(texts[1]).toBe(
      "Error: update_plan: step 2 is not done:\n- the workspace's tests fail (node --test: 1 of 4 failed — “reopen works” ((intermediate value).reopen is not a function))",
    )
    expect(texts[2]).toMatch(/^Plan progress: 2\/2\./)
    // The checklist shows the refusal on its step while it stands, and not once the step is done.
    const refusedAt = agent.session.events.findIndex((event) => event.type === 'tool/result' && event.data.isError)
    const view = {
      plan: { toolCallId: 'x', title: 'Reopen' },
      steps: [
        { step: 1, text: 'a', status: 'done' as const },
        { step: 2, text: 'b', status: 'pending' as const },
      ],
      done: 1,
      total: 2,
      active: null,
    }
    const before = refusedSteps(agent.session.events.slice(0, refusedAt + 1), view)
    expect(progressLines(view, createStyle(false), { refused: before }).lines).toEqual([
      'plan 1/2  “Reopen”',
      '  [x] 1. a',
      '  [ ] 2. b',
      "      ✗ marked done, refused: the workspace's tests fail (node --test: 1 of 4 failed — “reopen works” ((intermediate value).reopen is not a function))",
    ])
    expect(refusedSteps(agent.session.events, ctx.require('sessionProjections').snapshot(agent.session).values.planProgress).size).toBe(0)
    ctx.dispose()
  })

  it('without the check the same calls are done at once (nothing runs the tests)', async () => {
    const workspace = sample()
    writeFileSync(join(workspace, 'test', 'reopen.test.js'), FAILING)
    const { ctx, agent } = await verifiedHost(
      workspace,
      createScriptedModel([
        ...approve,
        mark([
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
        ]),
        { text: 'Done.' },
      ]),
      false,
    )
    await ctx.require('planMode').set(agent, true)
    await agent.prompt('plan reopen')
    expect(results(agent.session.events)[0]).toMatch(/^Plan progress: 2\/2\./)
    ctx.dispose()
  })

  it('the offline model carries a tests-first plan out: marks the tests done too early, reads the refusal, writes the code, marks it again', async () => {
    const workspace = sample()
    const { ctx, agent } = await verifiedHost(workspace, createOfflineModel({ planSection: RECOMMENDED_PLAN_SECTION }))
    await ctx.require('commands').execute({ agent, line: '/plan Add a `tasks undo <id>` command that reopens a finished task.' })
    await agent.idle()
    const texts = results(agent.session.events)
    expect(texts.map((text) => text.split('\n')[0])).toEqual([
      'Plan progress: 0/3.',
      'Error: update_plan: step 1 is not done:',
      'Plan progress: 3/3.',
    ])
    const said = agent.session.events.flatMap((event) =>
      event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
    )
    expect(said).toContain('The tests are written, so step 1 is done.')
    expect(said.find((text) => text.startsWith('The check refused step 1: '))).toContain(
      '“reopen makes a finished task open again” (list.reopen is not a function)',
    )
    expect((await runProjectTests(workspace)).passed).toBe(true)
    ctx.dispose()
  })
})
