import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { createPlanModeAgent } from '@planmode/ai-sdk'
import { Context } from '@planmode/context'
import { commandsPlugin, sessionProjectionsPlugin, sessionStorePlugin, systemPromptPlugin, toolsPlugin, userQuestionsPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planGuardPlugin } from '@planmode/plan-guard'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'

const ctx = new Context()
ctx.plugin(sessionStorePlugin, {}) // { dir: '.sessions' } keeps the logs as JSONL files
// The seams' registries, from @planmode/host without its agent loop; then the plan layers, plan-core first.
for (const runtime of [toolsPlugin, systemPromptPlugin, commandsPlugin, userQuestionsPlugin, sessionProjectionsPlugin]) ctx.plugin(runtime)
for (const layer of [planCorePlugin, planCommandsPlugin, planToolPlugin, planProjectionPlugin, planHistoryPlugin, planGuardPlugin]) ctx.plugin(layer)
ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
// Your review UI answers here; this one approves every plan as it stands.
ctx.require('userQuestions').registerProvider({ ask: async ({ questions }) => questions.map((q) => ({ id: q.id, selected: [q.options[0]!.label] })) })

const model = createOpenAICompatible({ name: 'local', baseURL: process.env.OPENAI_BASE_URL ?? 'http://localhost:11434/v1' })('qwen3')
const planner = createPlanModeAgent({ ctx, session: await ctx.require('sessions').create(), model })
console.log((await planner.command('/plan'))?.text) // Plan mode on. Send /plan off to leave.
const { text } = await planner.generate('Add a --verbose flag to the CLI.') // plans, asks for review, then carries it out
console.log(text, ctx.require('sessionProjections').snapshot(planner.agent.session).values.plan) // ... { active: false, pending: false }
