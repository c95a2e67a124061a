import type { LanguageModel, generateText } from 'ai'

/**
 * The models the agent takes: an AI SDK language model (a provider instance
 * such as `openai('gpt-5')`), not a gateway id string, because the agent
 * wraps it in a middleware. The type is `ai`'s own `LanguageModel` narrowed
 * to the specifications v3 and v4: v3 with `ai` 6, v3 or v4 with `ai` 7
 * (whose providers are v4), so no other package is needed for it.
 *
 * @public
 */
export type PlanModeLanguageModel = Extract<LanguageModel, { readonly specificationVersion: 'v3' | 'v4' }>

/** Provider-specific options of a call, as `generateText` types them. @public */
export type PlanModeProviderOptions = NonNullable<Parameters<typeof generateText>[0]['providerOptions']>

/** One content part of a model's answer to `doGenerate`. */
export type ModelContent = Awaited<ReturnType<PlanModeLanguageModel['doGenerate']>>['content'][number]

/** One part of a model's `doStream` answer. */
export type ModelStreamPart =
  Awaited<ReturnType<PlanModeLanguageModel['doStream']>>['stream'] extends ReadableStream<infer Part> ? Part : never
