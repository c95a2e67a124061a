// The offline model carries out a plan handed to a fresh session (SPEC §18) as a real model would: it
// reads the handoff message, looks at the workspace, then works step by step and tracks the plan with
// update_plan (SPEC §17). Through the real host loop: the reference host (which creates the fresh
// session), plan-core, plan-policy, /plan, plan-tool with its handoff, plan-progress, the workspace tools.
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@planmode/context'
import { hostPlugin, type AgentHandedOffPayload, type HostAgent } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import { planToolPlugin } from '@planmode/plan-tool'
import type { Session, UserAnswer } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'
import { makeScratchDir } from '../src/workspace/scratch-dir.js'
import { workspaceToolsPlugin } from '../src/workspace/workspace-tools.js'

const SECTION = 'PLAN MODE IS ON. Explore read-only and submit a plan with exit_plan_mode.'
const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

async function handOff(goal: string, root: string, handoff: UserAnswer['handoff']) {
  roots.push(root)
  const ctx = new Context({ logger: quiet })
  const careful = createOfflineModel({ planSection: SECTION, modelId: 'careful' })
  ctx.plugin(hostPlugin, { model: createOfflineModel({ planSection: SECTION }), maxSteps: 40, models: { careful } })
  ctx.plugin(planCorePlugin)
  ctx.plugin(planPolicyPlugin, { section: SECTION })
  ctx.plugin(planCommandsPlugin)
  ctx.plugin(planToolPlugin, { handoff: { fresh: true, models: ['careful'] } })
  ctx.plugin(planProgressPlugin)
  ctx.plugin(planProgressProjectionPlugin)
  ctx.plugin(workspaceToolsPlugin, { root })
  ctx.require('userQuestions').registerProvider({ ask: async () => [{ id: 'plan-review', selected: ['Approve'], handoff }] })
  const handed = new Promise<AgentHandedOffPayload>((resolve) => ctx.on('agent/handed-off', resolve))
  const agent: HostAgent = ctx.require('agents').create({ session: await ctx.require('sessions').create() })
  await ctx.require('commands').execute({ agent, line: '/plan', attachments: [] })
  await agent.prompt(goal)
  const { agent: fresh, turn } = await handed
  await turn
  return { ctx, agent, fresh }
}

/** Each step's tool calls, by name, in order. */
const callsPerStep = (session: Session): string[][] =>
  session.events.flatMap((event) =>
    event.type === 'assistant/message' ? [event.data.content.flatMap((block) => (block.type === 'tool-call' ? [block.toolName] : []))] : [],
  )
const texts = (session: Session): string[] =>
  session.events.flatMap((event) =>
    event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
  )
const updates = (session: Session): unknown[] =>
  session.events.flatMap((event) =>
    event.type === 'assistant/message'
      ? event.data.content.flatMap((block) => (block.type === 'tool-call' && block.toolName === UPDATE_PLAN ? [block.input] : []))
      : [],
  )

describe('the offline model carries out a plan handed to a fresh session', () => {
  it('the due-dates plan: a look at the workspace, then each batch of changes with its update_plan, then every step done; the handing session stops', async () => {
    const root = copySampleWorkspace()
    const { ctx, agent, fresh } = await handOff('Add due dates to tasks', root, { fresh: true, model: 'careful' })
    // The handing agent's last step ran exit_plan_mode: it never carries the plan out itself.
    expect(callsPerStep(agent.session).at(-1)).toEqual(['exit_plan_mode'])
    expect(callsPerStep(agent.session).flat()).not.toContain('edit_file')
    expect(fresh.model.modelId).toBe('careful')
    expect(callsPerStep(fresh.session)).toEqual([
      ['list_files'],
      [UPDATE_PLAN, 'edit_file', 'edit_file', 'edit_file'],
      [UPDATE_PLAN, 'edit_file', 'write_file', 'edit_file'],
      [UPDATE_PLAN],
      [],
    ])
    expect(updates(fresh.session)).toEqual([
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
    const results = fresh.session.events.flatMap((event) => (event.type === 'tool/result' ? [event.data] : []))
    expect(results.filter((result) => result.isError)).toEqual([])
    expect(texts(fresh.session)[0]).toBe(
      "I'm carrying out the approved plan “Plan: due dates for tasks” handed to this session. First, a look at the workspace.",
    )
    expect(texts(fresh.session).at(-1)).toMatch(/^Done\. Tasks now take an optional due date/)
    expect(ctx.require('sessionProjections').snapshot(fresh.session).values.planProgress).toMatchObject({
      plan: { title: 'Plan: due dates for tasks' },
      done: 5,
      total: 5,
      active: null,
    })
    expect(readFileSync(join(root, 'src/tasks.js'), 'utf8')).toContain('add(title, { due } = {})')
  })

  it('reads the whole handed-over plan as the request: the overdue flag its goal line asks for is carried out too', async () => {
    // The fresh session knows only the plan's text; its `Goal:` line asks for the overdue flag.
    const root = copySampleWorkspace()
    const { fresh } = await handOff('Add due dates to tasks and flag overdue ones', root, { fresh: true })
    expect(fresh.model.modelId).toBe('planner-1')
    expect(readFileSync(join(root, 'src/format.js'), 'utf8')).toContain('OVERDUE')
    expect(texts(fresh.session).at(-1)).toContain('with overdue open tasks flagged `OVERDUE`')
  })

  it('any other plan: it records the plan, tracks its steps, and says a real model is needed', async () => {
    const root = makeScratchDir('planmode-handoff-other-')
    const { fresh } = await handOff('Write a haiku about tasks', root, { fresh: true })
    expect(callsPerStep(fresh.session)).toEqual([['list_files'], [UPDATE_PLAN, 'write_file'], [UPDATE_PLAN], []])
    expect(readFileSync(join(root, 'PLAN-write-a-haiku-about-tasks.md'), 'utf8')).toMatch(/^# Plan: Write a haiku about tasks\n/)
    expect(texts(fresh.session).at(-1)).toMatch(/connect a real model/)
  })
})
