import { readFileSync } from 'node:fs'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { expect, it } from 'vitest'
import { readmeMirror } from '@planmode/testkit'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

it('runs the README composition example, which is the code below', async () => {
  const mirror = readmeMirror(new URL('../README.md', import.meta.url), new URL(import.meta.url))
  expect(mirror.block).toEqual(mirror.mirrored)
  expect(mirror.missingImports).toEqual([])

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

it('the README quotes every exact string of the package', async () => {
  const { UPDATE_PLAN_MESSAGES } = await import('@planmode/plan-progress')
  for (const text of [UPDATE_PLAN_MESSAGES.noAgent, UPDATE_PLAN_MESSAGES.planModeOn, UPDATE_PLAN_MESSAGES.noPlan, UPDATE_PLAN_MESSAGES.oneInProgress, UPDATE_PLAN_MESSAGES.track, UPDATE_PLAN_MESSAGES.remind, UPDATE_PLAN_MESSAGES.badArguments]) {
    expect(readme).toContain(text)
  }
})
