import { createPlanModeAgent } from '@planmode/ai-sdk'
import { Context } from '@planmode/context'
import {
  commandsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { planToolPlugin } from '@planmode/plan-tool'
import { MockLanguageModelV3 } from 'ai/test'

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }
const plan = '# Add a --verbose flag\n\n1. Parse it in src/cli.ts.'
// The AI SDK's own mock model answers each doGenerate with the next result: first a plan for review, then the work.
const model = new MockLanguageModelV3({
  doGenerate: [
    {
      content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'exit_plan_mode', input: JSON.stringify({ plan }) }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage,
      warnings: [],
    },
    {
      content: [{ type: 'text', text: 'Done: --verbose is parsed.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage,
      warnings: [],
    },
  ],
})

const ctx = new Context()
ctx.plugin(sessionStorePlugin, {})
for (const plugin of [
  toolsPlugin,
  systemPromptPlugin,
  commandsPlugin,
  userQuestionsPlugin,
  sessionProjectionsPlugin,
  planCorePlugin,
  planCommandsPlugin,
  planToolPlugin,
])
  ctx.plugin(plugin)
ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
ctx
  .require('userQuestions')
  .registerProvider({ ask: async ({ questions }) => questions.map((q) => ({ id: q.id, selected: [q.options[0]!.label] })) })

const planner = createPlanModeAgent({ ctx, session: await ctx.require('sessions').create(), model })
await planner.command('/plan')
const { text } = await planner.generate('Add a --verbose flag to the CLI.')
console.log(text, ctx.require('planMode').get(planner.agent)) // Done: --verbose is parsed. { active: false }
console.log(model.doGenerateCalls.map((call) => call.prompt[0]?.role === 'system' && call.prompt[0].content === RECOMMENDED_PLAN_SECTION)) // [ true, false ]
