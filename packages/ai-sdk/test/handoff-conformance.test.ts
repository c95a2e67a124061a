import { describe, it } from 'vitest'
import { createPlanModeAgent, type PlanModeAgent, type PlanModeLanguageModel } from '@planmode/ai-sdk'
import { Context } from '@planmode/context'
import {
  commandsPlugin,
  sessionInvariantsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import { describeHostConformance, HOST_DUTIES, type HostFactory } from '@planmode/host-conformance'
import type { Agent } from '@planmode/seams'

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * The adapter as a host for the kit: `@planmode/host`'s runtimes and JSONL
 * store (no agent loop), the AI SDK's loop through createPlanModeAgent, over
 * the kit's scripted model; each prompt is one `generate` (generateText) or
 * one consumed `stream` (streamText).
 */
const aiSdkHost =
  (mode: 'generate' | 'stream'): HostFactory =>
  ({ model, models, dir }) => {
    const context = new Context({ logger: quiet })
    for (const runtime of [
      sessionInvariantsPlugin,
      toolsPlugin,
      systemPromptPlugin,
      commandsPlugin,
      userQuestionsPlugin,
      sessionProjectionsPlugin,
    ])
      context.plugin(runtime)
    context.plugin(sessionStorePlugin, { dir })
    const planners = new Map<Agent, PlanModeAgent>()
    const make = (planner: PlanModeAgent): Agent => {
      planners.set(planner.agent, planner)
      return planner.agent
    }
    // Handoffs (SPEC §18): the kit's models by id, and fresh sessions from the same store, run as the prompts are.
    const handoff = {
      models: models as Record<string, PlanModeLanguageModel>,
      fresh: {
        session: () => context.require('sessions').create(),
        start: async (planner: PlanModeAgent) => {
          make(planner)
          if (mode === 'generate') return planner.generate()
          await (await planner.stream()).consumeStream()
        },
      },
    }
    return {
      context,
      async createAgent(options) {
        const session = await context.require('sessions').create()
        return make(
          createPlanModeAgent({
            ctx: context,
            session,
            model,
            ...handoff,
            ...(options?.owner === undefined ? {} : { owner: options.owner }),
          }),
        )
      },
      async openAgent(sessionId) {
        return make(createPlanModeAgent({ ctx: context, session: await context.require('sessions').open(sessionId), model, ...handoff }))
      },
      async prompt(agent, text) {
        const planner = planners.get(agent)!
        if (mode === 'generate') return planner.generate(text)
        await (await planner.stream(text)).consumeStream()
        await planner.idle()
      },
      close() {
        for (const planner of planners.values()) planner.dispose()
        context.dispose()
      },
    }
  }

/** Only the handoff duties here: test/conformance.test.ts runs every other duty through `@planmode/ai-sdk/conformance`. */
const skip = HOST_DUTIES.map((info) => info.duty).filter((duty) => duty !== 'handoff-model' && duty !== 'handoff-fresh')

describeHostConformance('@planmode/ai-sdk handoffs (generateText)', aiSdkHost('generate'), { describe, it, skip })
describeHostConformance('@planmode/ai-sdk handoffs (streamText)', aiSdkHost('stream'), { describe, it, skip })
