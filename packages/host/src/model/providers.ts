import { createDeepSeek } from '@ai-sdk/deepseek'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV3 } from '@ai-sdk/provider'

/** A `fetch` implementation (for proxies, tests or instrumentation). @public */
export type FetchFunction = typeof globalThis.fetch

/**
 * Options of {@link createDeepSeekModel}.
 *
 * @public
 */
export interface DeepSeekModelOptions {
  /** The API key; defaults to the `DEEPSEEK_API_KEY` environment variable (read when a request is made). */
  readonly apiKey?: string
  /** The API base URL; defaults to DeepSeek's public endpoint. */
  readonly baseURL?: string
  /** The model id; defaults to `deepseek-chat`. */
  readonly model?: string
  /** Extra request headers. */
  readonly headers?: Record<string, string>
  /** A custom `fetch`. */
  readonly fetch?: FetchFunction
}

/**
 * A DeepSeek chat model through `@ai-sdk/deepseek` (streaming chat
 * completions, tool calls, retryable 408/409/429/5xx errors).
 *
 * @public
 */
export function createDeepSeekModel(options: DeepSeekModelOptions = {}): LanguageModelV3 {
  const provider = createDeepSeek({
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })
  return provider.languageModel(options.model ?? 'deepseek-chat')
}

/**
 * Options of {@link createOpenAICompatibleModel}.
 *
 * @public
 */
export interface OpenAICompatibleModelOptions {
  /** The base URL of the server, e.g. `http://127.0.0.1:11434/v1` (requests go to `<baseURL>/chat/completions`). */
  readonly baseURL: string
  /** The model id the server expects. */
  readonly model: string
  /** The provider name in `request/header` model strings (`<name>:<model>`); default `openai-compatible`. */
  readonly name?: string
  /** Sent as a bearer token when given. */
  readonly apiKey?: string
  /** Extra request headers. */
  readonly headers?: Record<string, string>
  /** A custom `fetch`. */
  readonly fetch?: FetchFunction
  /** Ask the server for token usage in streams (`stream_options.include_usage`). Default false. */
  readonly includeUsage?: boolean
}

/**
 * A chat model on any OpenAI-compatible server (vLLM, llama.cpp, Ollama,
 * LM Studio, hosted gateways) through `@ai-sdk/openai-compatible`.
 *
 * @public
 */
export function createOpenAICompatibleModel(options: OpenAICompatibleModelOptions): LanguageModelV3 {
  if (typeof options?.baseURL !== 'string' || options.baseURL === '')
    throw new TypeError('createOpenAICompatibleModel: `baseURL` is required')
  if (typeof options.model !== 'string' || options.model === '') throw new TypeError('createOpenAICompatibleModel: `model` is required')
  const provider = createOpenAICompatible({
    name: options.name ?? 'openai-compatible',
    baseURL: options.baseURL,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.includeUsage === undefined ? {} : { includeUsage: options.includeUsage }),
  })
  return provider.chatModel(options.model)
}

/**
 * Picks a model from environment variables, or `undefined` when none is
 * configured: `OPENAI_BASE_URL` (with `OPENAI_MODEL`, required, and
 * `OPENAI_API_KEY`) for an OpenAI-compatible server; else
 * `DEEPSEEK_API_KEY` (with `DEEPSEEK_MODEL`, default `deepseek-chat`, and
 * `DEEPSEEK_BASE_URL`) for DeepSeek.
 *
 * @public
 */
export function modelFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): LanguageModelV3 | undefined {
  const set = (name: string): string | undefined => {
    const value = env[name]
    return value === undefined || value === '' ? undefined : value
  }
  const baseURL = set('OPENAI_BASE_URL')
  if (baseURL !== undefined) {
    const model = set('OPENAI_MODEL')
    if (model === undefined) throw new Error('OPENAI_BASE_URL is set but OPENAI_MODEL is not: name the model the server should run')
    const apiKey = set('OPENAI_API_KEY')
    return createOpenAICompatibleModel({ baseURL, model, ...(apiKey === undefined ? {} : { apiKey }) })
  }
  const apiKey = set('DEEPSEEK_API_KEY')
  if (apiKey !== undefined) {
    const deepseekBase = set('DEEPSEEK_BASE_URL')
    return createDeepSeekModel({
      apiKey,
      model: set('DEEPSEEK_MODEL') ?? 'deepseek-chat',
      ...(deepseekBase === undefined ? {} : { baseURL: deepseekBase }),
    })
  }
  return undefined
}
