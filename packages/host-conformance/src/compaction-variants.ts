import type { LanguageModelV3, LanguageModelV3Prompt } from '@ai-sdk/provider'
import type { Agent } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variant.js'
import type { ConformanceHost, HostFactory } from './host-adapter.js'

/** The wrappers of `broken-host-variants.ts` this variant builds on (passed in, so neither file imports the other at run time). */
export interface CompactionVariantTools {
  /** A model whose every prompt is edited before the real model sees it. */
  readonly editPrompt: (model: LanguageModelV3, edit: (prompt: LanguageModelV3Prompt) => LanguageModelV3Prompt) => LanguageModelV3
  /** `host` with some members replaced or added. */
  readonly adapterWith: <A extends Agent>(
    host: ConformanceHost<A>,
    overrides: Partial<Omit<ConformanceHost<A>, 'context'>>,
  ) => ConformanceHost<A>
}

/**
 * The broken variant of the compaction duty (SPEC §24): a host that
 * compacts by dropping, from every later request, each message the model
 * had already read, the full plan guidance with them. Part of
 * `BROKEN_HOST_VARIANTS`.
 */
export function compactionVariants({ editPrompt, adapterWith }: CompactionVariantTools): readonly BrokenHostVariant[] {
  return [
    {
      duty: 'compaction',
      name: 'drops the plan guidance when it compacts',
      failure: 'after compact(), a request in plan mode must still carry the full plan guidance',
      wrap:
        <A extends Agent>(factory: HostFactory<A>): HostFactory<A> =>
        async (environment) => {
          /** How many messages (system ones aside) the last request had, and from which one later requests start. */
          let read = 0
          let cut = 0
          const compacted = (prompt: LanguageModelV3Prompt): LanguageModelV3Prompt => {
            const rest = prompt.filter((message) => message.role !== 'system')
            read = rest.length
            return [...prompt.filter((message) => message.role === 'system'), ...rest.slice(cut)]
          }
          const host = await factory({ ...environment, model: editPrompt(environment.model, compacted) })
          return adapterWith(host, {
            compact: () => {
              cut = read
            },
          })
        },
    },
  ]
}
