import { describe, expectTypeOf, it } from 'vitest'
import type { GenerateTextResult, ModelMessage, StreamTextResult, ToolModelMessage, ToolSet } from 'ai'
import type { PlanModeAgent, PlanModeAgentOptions, PlanModeCallOptions } from '@planmode/ai-sdk'
import type { Agent, CommandResult, UserMessage } from '@planmode/seams'

describe('@planmode/ai-sdk types', () => {
  it('returns the AI SDK’s own results', () => {
    expectTypeOf<Awaited<ReturnType<PlanModeAgent['generate']>>>().toMatchTypeOf<GenerateTextResult<ToolSet, never>>()
    expectTypeOf<Awaited<ReturnType<PlanModeAgent['generate']>>['text']>().toEqualTypeOf<string>()
    expectTypeOf<Awaited<ReturnType<PlanModeAgent['stream']>>>().toMatchTypeOf<StreamTextResult<ToolSet, never>>()
    expectTypeOf<ReturnType<PlanModeAgent['messages']>>().toEqualTypeOf<ModelMessage[]>()
  })

  it('takes a prompt as text, a seams user message or the SDK’s tool message of approval responses, and the SDK’s call settings', () => {
    expectTypeOf<PlanModeAgent['generate']>().parameter(0).toEqualTypeOf<string | UserMessage | ToolModelMessage | undefined>()
    expectTypeOf<PlanModeAgent['stream']>().parameter(0).toEqualTypeOf<string | UserMessage | ToolModelMessage | undefined>()
    expectTypeOf<PlanModeCallOptions>().toHaveProperty('temperature')
    expectTypeOf<PlanModeCallOptions>().toHaveProperty('abortSignal')
    expectTypeOf<PlanModeCallOptions>().not.toHaveProperty('prepareStep')
  })

  it('exposes a seams agent and command results', () => {
    expectTypeOf<PlanModeAgent['agent']>().toEqualTypeOf<Agent>()
    expectTypeOf<ReturnType<PlanModeAgent['command']>>().toEqualTypeOf<Promise<CommandResult | undefined>>()
    expectTypeOf<PlanModeAgentOptions['owner']>().toEqualTypeOf<Agent | undefined>()
  })
})
