import { acpPlugin, type AcpSessionAgent } from '@planmode/acp'
import { createPlanModeAgent, type PlanModeAgent } from '@planmode/ai-sdk'
import { Context } from '@planmode/context'
import {
  commandsPlugin,
  createScriptedModel,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { planToolPlugin } from '@planmode/plan-tool'
import type { Session } from '@planmode/seams'
import { afterEach, expect, it } from 'vitest'
import { carryingScript, FEEDBACK, GOAL, planningScript } from './support/arc-script.js'
import { clientView } from './support/client-view.js'
import { readFileTool } from './support/reference-host.js'
import { connectTestClient, updatesOf } from './support/test-client.js'

/** The AI SDK adapter's agent as `@planmode/acp` drives it: `/plan <message>` only queues its message there, so `idle` sends it. */
function aiSdkSessionAgent(planner: PlanModeAgent): AcpSessionAgent {
  return {
    agent: planner.agent,
    prompt: (message) => planner.generate(message),
    cancel: () => planner.cancel(),
    async idle() {
      await planner.idle()
      if (planner.queued > 0) await planner.generate()
    },
  }
}

let ctx: Context | undefined
afterEach(() => {
  ctx?.dispose()
  ctx = undefined
})

it('serves the AI SDK adapter (@planmode/ai-sdk) as it serves the reference host: the arc, through the SDK client', async () => {
  ctx = new Context()
  const model = createScriptedModel([...planningScript(), ...carryingScript()], { chunkSize: 64 })
  ctx.plugin(sessionStorePlugin, {})
  // The seams' runtimes without the reference host's agent loop; the agents are the adapter's.
  for (const runtime of [toolsPlugin, systemPromptPlugin, commandsPlugin, userQuestionsPlugin, sessionProjectionsPlugin])
    ctx.plugin(runtime)
  for (const layer of [planCorePlugin, planCommandsPlugin, planToolPlugin, planProgressPlugin, planProgressProjectionPlugin])
    ctx.plugin(layer)
  ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
  ctx.require('tools').register(readFileTool)
  const planners = new Map<Session, PlanModeAgent>()
  const root = ctx
  ctx.plugin(acpPlugin, {
    agents: {
      open(session) {
        const planner = planners.get(session) ?? createPlanModeAgent({ ctx: root, session, model })
        planners.set(session, planner)
        return aiSdkSessionAgent(planner)
      },
    },
  })

  const { client } = connectTestClient(ctx.require('acp'))
  await client.initialize()
  const { sessionId } = await client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })
  const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `/plan ${GOAL}` }] })
  const first = await client.nextPermission()
  expect(first.params.options.map((option) => option.optionId)).toEqual(['approve', 'keep', 'stop'])
  first.respond({ outcome: { outcome: 'selected', optionId: 'keep' } })
  ;(await client.nextElicitation()).respond({ action: 'accept', content: { feedback: FEEDBACK } })
  ;(await client.nextPermission()).respond({ outcome: { outcome: 'selected', optionId: 'approve' } })
  expect(await turn).toEqual({ stopReason: 'end_turn' })

  const view = clientView(client.updates(sessionId))
  expect(view.messages).toEqual([
    `user: /plan ${GOAL}`,
    'agent: Plan mode on. Send /plan off to leave.',
    `user: ${GOAL}`,
    'agent: Let me look at the CLI first.',
    'agent: Revised with a test.',
    'agent: Done: the CLI greets, and greet() is tested.',
  ])
  expect(view.calls['call-read']).toMatchObject({ kind: 'read', status: 'completed' })
  expect(view.calls['call-plan-1']).toMatchObject({
    kind: 'switch_mode',
    status: 'completed',
    content: `Keep planning.\nFeedback: ${FEEDBACK}`,
  })
  expect(view.calls['call-plan-2']).toMatchObject({ status: 'completed', content: 'Approved.' })
  expect(view.plan).toEqual([
    'completed: Add greet() to src/greet.ts.',
    'completed: Print the greeting from the CLI.',
    'completed: Test greet() in test/greet.test.ts.',
  ])
  expect(updatesOf(client.updates(sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual(['plan', 'default'])

  // A second client loads the same session: the replay rebuilds what the first one saw.
  const later = connectTestClient(ctx.require('acp')).client
  await later.initialize()
  await later.agent.request('session/load', { sessionId, cwd: '/work/project', mcpServers: [] })
  expect(clientView(later.updates(sessionId))).toEqual(view)
  for (const each of [client, later]) expect(each.wire.problems).toEqual([])
})
