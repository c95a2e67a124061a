import { createDeepSeek } from '@ai-sdk/deepseek'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { createOfflineModel } from '../model/offline-model.js'

/** Where the model comes from, as given on the command line and in the environment. */
export interface ModelFlags {
  readonly baseUrl?: string
  readonly model?: string
  readonly apiKey?: string
  readonly offline?: boolean
}

/** The chosen model and a line that says which it is. */
export interface ModelChoice {
  readonly model: LanguageModelV3
  readonly description: string
  readonly offline: boolean
}

/**
 * Picks the model: `--base-url` (or `OPENAI_BASE_URL`) for any
 * OpenAI-compatible server, else `DEEPSEEK_API_KEY` for DeepSeek, else the
 * offline planner. `--offline` forces the offline planner.
 */
export function chooseModel(flags: ModelFlags, section: string, env: NodeJS.ProcessEnv = process.env, chunkDelayMs = 0): ModelChoice {
  const offline = (): ModelChoice => ({
    model: createOfflineModel({ planSection: section, chunkDelayMs, ...(flags.model === undefined ? {} : { modelId: flags.model }) }),
    description: 'offline planner (deterministic, no network)',
    offline: true,
  })
  if (flags.offline === true) return offline()
  const baseURL = flags.baseUrl ?? env.OPENAI_BASE_URL
  if (baseURL !== undefined && baseURL !== '') {
    const modelId = flags.model ?? env.OPENAI_MODEL
    if (modelId === undefined || modelId === '') throw new Error('--base-url needs --model <id> (or OPENAI_MODEL)')
    const apiKey = flags.apiKey ?? env.OPENAI_API_KEY
    const provider = createOpenAICompatible({ name: 'openai-compatible', baseURL, ...(apiKey ? { apiKey } : {}) })
    return { model: provider.chatModel(modelId), description: `${modelId} at ${baseURL}`, offline: false }
  }
  const deepseekKey = flags.apiKey ?? env.DEEPSEEK_API_KEY
  if (deepseekKey !== undefined && deepseekKey !== '') {
    const modelId = flags.model ?? 'deepseek-chat'
    return { model: createDeepSeek({ apiKey: deepseekKey })(modelId), description: `DeepSeek ${modelId}`, offline: false }
  }
  return offline()
}

/**
 * The models of `--models a,b` (SPEC §18's handoff choices), by id: each id
 * is a model of the same source {@link chooseModel} picks (the same
 * OpenAI-compatible server, DeepSeek, or the offline planner reporting that
 * id). Ids are trimmed; a blank or repeated id is an error.
 */
export function chooseModels(
  ids: readonly string[],
  flags: ModelFlags,
  section: string,
  env: NodeJS.ProcessEnv = process.env,
  chunkDelayMs = 0,
): Record<string, LanguageModelV3> {
  const models: Record<string, LanguageModelV3> = {}
  for (const raw of ids) {
    const id = raw.trim()
    if (id === '') throw new Error('--models: a model id is blank (give ids separated by commas, e.g. --models fast,careful)')
    if (Object.hasOwn(models, id)) throw new Error(`--models: model "${id}" is given twice`)
    models[id] = chooseModel({ ...flags, model: id }, section, env, chunkDelayMs).model
  }
  return models
}
