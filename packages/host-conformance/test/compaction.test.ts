// The case of duty `compaction` (SPEC §24): a host that never compacts passes it on the re-entry line
// alone; hosts that compact pass it when they keep the latest full guidance message, or log the section
// again while plan mode is on, and fail it, naming the duty, when they drop it.
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider'
import type { HostAgent } from '@planmode/host'
import {
  BROKEN_HOST_VARIANTS,
  HostConformanceError,
  hostConformanceCases,
  type ConformanceHost,
  type HostFactory,
} from '@planmode/host-conformance'
import { planModeGuidance } from '@planmode/plan-core'
import { fullGuidanceText, latestFullGuidance } from '@planmode/plan-policy'
import { describe, expect, it } from 'vitest'
import { referenceHost } from './support/reference-host.js'

const compactionCase = (factory: HostFactory<HostAgent>) => {
  const found = hostConformanceCases(factory).filter((check) => check.duty === 'compaction')
  expect(found).toHaveLength(1)
  return found[0]!
}

/** A model that hands every prompt to `edit` before `model` sees it. */
function editing(model: LanguageModelV3, edit: (prompt: LanguageModelV3Prompt) => LanguageModelV3Prompt): LanguageModelV3 {
  const call = (options: LanguageModelV3CallOptions) => ({ ...options, prompt: edit(options.prompt) })
  return { ...model, doGenerate: (options) => model.doGenerate(call(options)), doStream: (options) => model.doStream(call(options)) }
}

/**
 * The reference host with a compaction of its own: from a compaction on, every request leaves out the
 * messages the model had read, except those `keep` keeps; `after` runs when it compacts (to log).
 */
function compacting(options: {
  readonly keep?: (agent: HostAgent, message: LanguageModelV3Prompt[number]) => boolean
  readonly after?: (host: ConformanceHost<HostAgent>, agent: HostAgent) => Promise<void>
}): HostFactory<HostAgent> {
  return async (environment) => {
    let read: LanguageModelV3Prompt = []
    let cut = 0
    let keeper: ((message: LanguageModelV3Prompt[number]) => boolean) | undefined
    const model = editing(environment.model, (prompt) => {
      const rest = prompt.filter((message) => message.role !== 'system')
      read = rest
      const old = rest.slice(0, cut).filter((message) => keeper?.(message) === true)
      return [...prompt.filter((message) => message.role === 'system'), ...old, ...rest.slice(cut)]
    })
    const host = await referenceHost({ ...environment, model })
    return {
      ...host,
      async compact(agent) {
        cut = read.length
        if (options.keep !== undefined) keeper = (message) => options.keep!(agent, message)
        await options.after?.(host, agent)
      },
    }
  }
}

const textOf = (message: LanguageModelV3Prompt[number]): string =>
  message.role === 'user' ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : ''

describe('duty "compaction"', () => {
  it('a host without compact() passes: the re-entry reads the guidance-again line with the full guidance earlier in the conversation', async () => {
    await expect(compactionCase(referenceHost).run()).resolves.toBeUndefined()
  })

  it('a host that keeps the latest full guidance message (plan-policy’s latestFullGuidance) when it compacts passes', async () => {
    const keep = (agent: HostAgent, message: LanguageModelV3Prompt[number]) => {
      const latest = latestFullGuidance(agent.session.events)
      return latest !== undefined && textOf(message) === fullGuidanceText(latest)
    }
    await expect(compactionCase(compacting({ keep })).run()).resolves.toBeUndefined()
  })

  it('a host that logs the section again as a full guidance message while plan mode is on passes', async () => {
    const after = async (host: ConformanceHost<HostAgent>, agent: HostAgent) => {
      const latest = latestFullGuidance(agent.session.events)
      if (latest === undefined || host.context.require('planMode').get(agent).active !== true) return
      await agent.session.append('user/message', planModeGuidance(fullGuidanceText(latest)!))
    }
    await expect(compactionCase(compacting({ after })).run()).resolves.toBeUndefined()
  })

  it('a host that drops it fails, naming the duty; so does the broken variant of the kit', async () => {
    const error = await compactionCase(compacting({}))
      .run()
      .then(
        () => undefined,
        (failure: unknown) => failure,
      )
    expect(HostConformanceError.isInstance(error) && error.duty).toBe('compaction')
    expect((error as Error).message).toContain('after compact(), a request in plan mode must still carry the full plan guidance')
    const variant = BROKEN_HOST_VARIANTS.find((candidate) => candidate.duty === 'compaction')!
    const broken = await compactionCase(variant.wrap(referenceHost))
      .run()
      .then(
        () => undefined,
        (failure: unknown) => failure,
      )
    expect(HostConformanceError.isInstance(broken) && broken.duty).toBe('compaction')
  })
})
