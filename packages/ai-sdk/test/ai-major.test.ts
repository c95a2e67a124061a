import { describe, expect, it } from 'vitest'
import * as aiTest from 'ai/test'
import { createPlanModeAgent, type PlanModeLanguageModel } from '@planmode/ai-sdk'
import { APPROVE, PLAN, SECTION, compose, eventsOf } from './support/compose.js'

/** The major of `ai` this run asks for: 6 (the workspace's) unless `PLANMODE_AI_MAJOR` says otherwise (vitest.ai7.config.ts sets 7). */
const wanted = Number(process.env.PLANMODE_AI_MAJOR ?? '6')

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }

/** The mock model of the newest language-model specification the installed `ai` ships: v4 with `ai` 7, v3 with `ai` 6. */
type MockClass = new (options: {
  provider: string
  modelId: string
  doGenerate: readonly unknown[]
}) => PlanModeLanguageModel & { doGenerateCalls: { prompt: { role: string; content: unknown }[] }[] }
const newest = ('MockLanguageModelV4' in aiTest ? aiTest.MockLanguageModelV4 : aiTest.MockLanguageModelV3) as unknown as MockClass

describe('the AI SDK major this run tests against', () => {
  it('is the one the run asks for', async () => {
    const { default: manifest } = (await import('ai/package.json', { with: { type: 'json' } })) as { default: { version: string } }
    expect(Number(manifest.version.split('.')[0])).toBe(wanted)
  })

  it("a model of the SDK's newest specification runs a plan arc: the guidance goes with the approval", async () => {
    const model = new newest({
      provider: 'newest',
      modelId: 'planner',
      doGenerate: [
        {
          content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'exit_plan_mode', input: JSON.stringify({ plan: PLAN }) }],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'Carried out.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
      ],
    })
    expect(model.specificationVersion).toBe(wanted >= 7 ? 'v4' : 'v3')
    const host = compose({ answers: [APPROVE] })
    const session = await host.session()
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, models: { same: model } })
    await planner.command('/plan')
    expect((await planner.generate('Add a --verbose flag.')).text).toBe('Carried out.')
    const systems = model.doGenerateCalls.map((call) =>
      call.prompt.filter((message) => message.role === 'system').map((message) => message.content),
    )
    expect(systems).toEqual([[SECTION], []])
    expect(eventsOf(session, 'request/header')[0]?.data.model).toBe('newest:planner')
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: false })
  })
})
