// The offline model carries out an approved plan and tracks it with update_plan (SPEC §17), as a real
// model would, through the real host loop: plan-core, plan-policy, /plan, exit_plan_mode with an
// approving reviewer, plan-progress and its projection, and the demo's workspace tools.
import { rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@planmode/context'
import { hostPlugin, type HostAgent } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import { planToolPlugin } from '@planmode/plan-tool'
import type { Session } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'
import { workspaceToolsPlugin } from '../src/workspace/workspace-tools.js'

const SECTION = 'PLAN MODE IS ON. Explore read-only and submit a plan with exit_plan_mode.'
const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

async function offlineHost(options: { progress: boolean }) {
  const root = copySampleWorkspace()
  roots.push(root)
  const ctx = new Context({ logger: quiet })
  ctx.plugin(hostPlugin, { model: createOfflineModel({ planSection: SECTION }), maxSteps: 40 })
  ctx.plugin(planCorePlugin)
  ctx.plugin(planPolicyPlugin, { section: SECTION })
  ctx.plugin(planCommandsPlugin)
  ctx.plugin(planToolPlugin)
  if (options.progress) {
    ctx.plugin(planProgressPlugin)
    ctx.plugin(planProgressProjectionPlugin)
  }
  ctx.plugin(workspaceToolsPlugin, { root })
  ctx.require('userQuestions').registerProvider({ ask: async () => [{ id: 'plan-review', selected: ['Approve'] }] })
  const agent: HostAgent = ctx.require('agents').create({ session: await ctx.require('sessions').create() })
  await ctx.require('commands').execute({ agent, line: '/plan', attachments: [] })
  return { ctx, agent, root }
}

/** Each step's tool calls, by name, in order. */
const callsPerStep = (session: Session): string[][] =>
  session.events.flatMap((event) =>
    event.type === 'assistant/message' ? [event.data.content.flatMap((block) => (block.type === 'tool-call' ? [block.toolName] : []))] : [],
  )
const updates = (session: Session): unknown[] =>
  session.events.flatMap((event) =>
    event.type === 'assistant/message'
      ? event.data.content.flatMap((block) => (block.type === 'tool-call' && block.toolName === UPDATE_PLAN ? [block.input] : []))
      : [],
  )

describe('the offline model tracks an approved plan with update_plan', () => {
  it('the due-dates plan: one step in progress at a time beside each batch of changes, then every step done; every update succeeds', async () => {
    const { ctx, agent, root } = await offlineHost({ progress: true })
    await agent.prompt('Add due dates to tasks')
    const steps = callsPerStep(agent.session)
    const approval = steps.findIndex((calls) => calls.includes('exit_plan_mode'))
    expect(steps.slice(approval + 1)).toEqual([
      [UPDATE_PLAN, 'edit_file', 'edit_file', 'edit_file'],
      [UPDATE_PLAN, 'edit_file', 'write_file', 'edit_file'],
      [UPDATE_PLAN],
      [],
    ])
    expect(updates(agent.session)).toEqual([
      { updates: [{ step: 1, status: 'in_progress' }] },
      {
        updates: [
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
          { step: 3, status: 'done' },
          { step: 4, status: 'in_progress' },
        ],
      },
      {
        updates: [
          { step: 4, status: 'done' },
          { step: 5, status: 'done' },
        ],
      },
    ])
    const results = agent.session.events.flatMap((event) =>
      event.type === 'tool/result' && event.data.toolName === UPDATE_PLAN ? [event.data] : [],
    )
    expect(results.map((result) => result.isError)).toEqual([false, false, false])
    expect(results.at(-1)!.content[0]!.text.split('\n')[0]).toBe('Plan progress: 5/5.')
    const progress = ctx.require('sessionProjections').snapshot(agent.session).values.planProgress!
    expect(progress).toMatchObject({ plan: { title: 'Plan: due dates for tasks' }, done: 5, total: 5, active: null })
    // the work itself is unchanged by the tracking
    expect(await readFile(join(root, 'src/tasks.js'), 'utf8')).toContain('add(title, { due } = {})')
    const last = agent.session.events.filter((event) => event.type === 'assistant/message').at(-1)!
    expect(last.data.content).toEqual([
      expect.objectContaining({ type: 'text', text: expect.stringMatching(/^Done\. Tasks now take an optional due date/) }),
    ])
  })

  it('a generic plan: step 1 in progress beside its one batch, then the rest done', async () => {
    const { agent } = await offlineHost({ progress: true })
    await agent.prompt('Rename the CLI to todo')
    expect(updates(agent.session)).toEqual([
      { updates: [{ step: 1, status: 'in_progress' }] },
      {
        updates: [
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
          { step: 3, status: 'done' },
        ],
      },
    ])
  })

  it('without plan-progress it carries out the plan exactly as before: no update_plan call', async () => {
    const { agent } = await offlineHost({ progress: false })
    await agent.prompt('Add due dates to tasks')
    const steps = callsPerStep(agent.session)
    const approval = steps.findIndex((calls) => calls.includes('exit_plan_mode'))
    expect(steps.slice(approval + 1)).toEqual([['edit_file', 'edit_file', 'edit_file'], ['edit_file', 'write_file', 'edit_file'], []])
  })

  it('the progress message is not taken for the user’s words: no new episode, no feedback', async () => {
    const { agent } = await offlineHost({ progress: true })
    await agent.prompt('Add due dates to tasks')
    const texts = agent.session.events.flatMap((event) =>
      event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
    )
    expect(texts.filter((text) => text.startsWith('Here is'))).toEqual(['Here is my plan.'])
  })
})
