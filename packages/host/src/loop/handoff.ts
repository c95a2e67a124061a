import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Logger } from '@planmode/context'
import type { AgentHandoffPayload, SessionEvent, SessionEventInput } from '@planmode/seams'
import type { AgentModels } from './agents-config.js'

/** `provider:modelId`: how a `request/header` names the model a request went to. */
export function modelName(model: LanguageModelV3): string {
  return `${model.provider}:${model.modelId}`
}

/** A fresh session a handoff asked for, waiting for the handing agent's turn to end. */
export interface FreshHandoff {
  /** The event the new session starts with. */
  readonly first: SessionEventInput
  /** The model of the new session's agent. */
  readonly model: LanguageModelV3
}

/** What the agent does with one `agent/handoff`: switch its model, and/or queue a fresh session. */
export type HandoffPlan = { readonly model?: LanguageModelV3; readonly fresh?: SessionEventInput }

/** Checks the `models` option at load: a map of AI SDK v3 models, or a function. */
export function checkModels(models: unknown): void {
  if (models === undefined || typeof models === 'function') return
  if (typeof models !== 'object' || models === null || Array.isArray(models)) {
    throw new TypeError('agentsPlugin: `models` must be a map of model id → LanguageModelV3, or a function resolving an id')
  }
  for (const [id, model] of Object.entries(models)) {
    if ((model as { specificationVersion?: unknown } | undefined)?.specificationVersion !== 'v3') {
      throw new TypeError(`agentsPlugin: \`models\`["${id}"] must be an AI SDK LanguageModelV3 (specificationVersion "v3")`)
    }
  }
}

/** The model `id` resolves to through `models`, or `undefined` (with a warning naming why). */
export function resolveModel(models: AgentModels | undefined, id: string, logger: Logger, who: string): LanguageModelV3 | undefined {
  let model: LanguageModelV3 | undefined
  try {
    model = typeof models === 'function' ? models(id) : models !== undefined && Object.hasOwn(models, id) ? models[id] : undefined
  } catch (error) {
    logger.warn(`${who}: the \`models\` resolver threw for "${id}"`, error)
    return undefined
  }
  if (model?.specificationVersion === 'v3') return model
  logger.warn(
    `${who}: a handoff chose model "${id}", which the \`models\` option does not resolve to an AI SDK LanguageModelV3; it is not used`,
  )
  return undefined
}

/** What a handoff asks of the agent: the model it names (when it resolves) and the fresh session's first event. */
export function planHandoff(payload: AgentHandoffPayload, models: AgentModels | undefined, logger: Logger, who: string): HandoffPlan {
  const model = typeof payload.model === 'string' ? resolveModel(models, payload.model, logger, who) : undefined
  const first = payload.fresh?.first
  const fresh = first !== undefined && typeof first.type === 'string' ? first : undefined
  return { ...(model === undefined ? {} : { model }), ...(fresh === undefined ? {} : { fresh }) }
}

/** The model an agent created without one of its own starts with, and the warning to give when the log's model is not used. */
export interface ResumedModel {
  readonly model: LanguageModelV3
  readonly warning?: string
}

/**
 * The model an agent created over a session without a `model` of its own
 * starts with: the one the session's last `request/header` names, when that
 * is not the default model and an entry of the `models` map has exactly that
 * `provider:modelId` (the first such entry in the map's key order); else the
 * default. A last header naming a model it cannot find (no `models`, a map
 * without it, a function, which cannot be searched) gives the default and a
 * warning naming both.
 */
export function resumeModel(events: readonly SessionEvent[], fallback: LanguageModelV3, models: AgentModels | undefined): ResumedModel {
  let named: unknown
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'request/header') {
      named = (event.data as { model?: unknown } | null)?.model
      break
    }
  }
  const usual = modelName(fallback)
  if (typeof named !== 'string' || named === usual) return { model: fallback }
  if (models !== undefined && typeof models !== 'function') {
    for (const model of Object.values(models)) if (modelName(model) === named) return { model }
  }
  const why =
    models === undefined
      ? 'no `models` option is given'
      : typeof models === 'function'
        ? 'the `models` option is a function, which cannot be searched for it (pass `model` to agents.create to go on with it)'
        : 'no entry of the `models` option is that model'
  return {
    model: fallback,
    warning: `the session's last request went to "${named}", but ${why}; the agent starts on the default model "${usual}"`,
  }
}
