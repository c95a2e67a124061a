import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { ConformanceModel } from '@planmode/scripted-model'

/** The id under which the kit offers its second model to a handoff (plan-tool's `handoff.models`, the environment's `models`). */
export const HANDOFF_MODEL_ID = 'conformance-handoff'

/** `provider:modelId` of that model, as a `request/header` names it. */
export const HANDOFF_MODEL_NAME = 'conformance:handoff'

/** The kit's second model, and the requests that went to it. */
export interface HandoffModels {
  /** What the environment offers: {@link HANDOFF_MODEL_ID} → the second model. */
  readonly models: Readonly<Record<string, LanguageModelV3>>
  /** The requests the second model received (the very objects the scripted model recorded). */
  readonly answered: ReadonlySet<LanguageModelV3CallOptions>
}

const byModel = new WeakMap<ConformanceModel, HandoffModels>()

/**
 * The second model of a case, made once per scripted model: another model
 * id (`conformance:handoff`) over the same script, so a case scripts one
 * queue whichever model a host sends a request to, and sees which one got it.
 */
export function handoffModelsOf(model: ConformanceModel): HandoffModels {
  const known = byModel.get(model)
  if (known !== undefined) return known
  const answered = new Set<LanguageModelV3CallOptions>()
  const second: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: 'conformance',
    modelId: 'handoff',
    supportedUrls: {},
    doGenerate: (options) => {
      answered.add(options)
      return model.doGenerate(options)
    },
    doStream: (options) => {
      answered.add(options)
      return model.doStream(options)
    },
  }
  const made = { models: { [HANDOFF_MODEL_ID]: second }, answered }
  byModel.set(model, made)
  return made
}
