import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { createPlanModeAgent } from '@planmode/ai-sdk'
import { Context } from '@planmode/context'
import { commandsPlugin, sessionStorePlugin, systemPromptPlugin, toolsPlugin, userQuestionsPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { planToolPlugin } from '@planmode/plan-tool'

const ctx = new Context()
ctx.plugin(sessionStorePlugin, {}) // { dir: '.sessions' } keeps the logs as JSONL files
for (const runtime of [toolsPlugin, systemPromptPlugin, commandsPlugin, userQuestionsPlugin, planCorePlugin, planCommandsPlugin]) ctx.plugin(runtime)
ctx.plugin(planToolPlugin)
ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
// Your review UI answers here; this one approves every plan as it stands.
ctx.require('userQuestions').registerProvider({ ask: async ({ questions }) => questions.map((q) => ({ id: q.id, selected: [q.options[0]!.label] })) })

const model = createOpenAICompatible({ name: 'local', baseURL: process.env.OPENAI_BASE_URL ?? 'http://localhost:11434/v1' })('qwen3')
const planner = createPlanModeAgent({ ctx, session: await ctx.require('sessions').create(), model })
console.log((await planner.command('/plan'))?.text) // Plan mode on. Send /plan off to leave.
const { text } = await planner.generate('Add a --verbose flag to the CLI.') // plans, asks for review, then carries it out
console.log(text, ctx.require('planMode').get(planner.agent)) // ... { active: false } once the plan is approved
