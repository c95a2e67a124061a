import { randomUUID } from 'node:crypto'
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Content } from '@ai-sdk/provider'

/** One scripted answer: text, then tool calls. */
export interface ScriptedReply {
  /** The answer text. */
  readonly text?: string
  /** Tool calls after the text; `input` is sent as JSON. */
  readonly toolCalls?: readonly { readonly toolName: string; readonly input: unknown }[]
}

/** An entry of the script: a reply, an error to throw, or a function of the request returning one of them. */
export type ScriptEntry =
  ScriptedReply | Error | ((request: LanguageModelV3CallOptions) => ScriptedReply | Error | Promise<ScriptedReply | Error>)

/** A `LanguageModelV3` answering from a script, offline. */
export interface ScriptedModel extends LanguageModelV3 {
  /** Every request received, in order. */
  readonly requests: LanguageModelV3CallOptions[]
  /** Appends entries to the script. */
  push(...entries: ScriptEntry[]): void
}

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } }

/** Creates a scripted model: each `doGenerate` takes the next entry (an empty script throws, naming the request). */
export function createScriptedModel(script: readonly ScriptEntry[] = []): ScriptedModel {
  const queue = [...script]
  const requests: LanguageModelV3CallOptions[] = []
  return {
    specificationVersion: 'v3',
    provider: 'scripted',
    modelId: 'own-host',
    supportedUrls: {},
    requests,
    push: (...entries) => void queue.push(...entries),
    async doGenerate(request) {
      requests.push(request)
      const entry = queue.shift()
      if (entry === undefined) throw new Error(`scripted model: no reply left for request #${requests.length}`)
      const signal = request.abortSignal
      signal?.throwIfAborted()
      const answer = typeof entry === 'function' ? entry(request) : entry
      // A reply that waits (a test holding the model) still ends when the turn is cancelled.
      let onAbort = (): void => {}
      const cancelled = new Promise<never>((_, reject) =>
        signal?.addEventListener('abort', (onAbort = () => reject(signal.reason)), { once: true }),
      )
      const reply = await Promise.race([answer, cancelled]).finally(() => signal?.removeEventListener('abort', onAbort))
      if (reply instanceof Error) throw reply
      const content: LanguageModelV3Content[] = reply.text === undefined ? [] : [{ type: 'text', text: reply.text }]
      for (const { toolName, input } of reply.toolCalls ?? []) {
        content.push({ type: 'tool-call', toolCallId: `call_${randomUUID().slice(0, 8)}`, toolName, input: JSON.stringify(input) })
      }
      const unified = content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop'
      return { content, finishReason: { unified, raw: undefined }, usage, warnings: [] }
    },
    doStream: () => Promise.reject(new Error('the scripted model answers doGenerate only')),
  }
}
