import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { MockLanguageModelV3 } from 'ai/test'

/** One scripted answer: reasoning, text and/or tool calls. */
export interface Reply {
  /** Reasoning before the text, with provider metadata (a signature) as a reasoning model sends it. */
  readonly reasoning?: { readonly text: string; readonly signature: string }
  readonly text?: string
  /** For a stream: the text's deltas, when a test needs many (defaults to two halves of `text`). */
  readonly deltas?: readonly string[]
  readonly calls?: readonly { readonly name: string; readonly input: unknown; readonly id?: string; readonly signature?: string }[]
}

/** A reply, or a function of the request (may wait, e.g. for a test's signal). */
export type Script = Reply | ((request: LanguageModelV3CallOptions, index: number) => Reply | Promise<Reply>)

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
}

/** The AI SDK's own mock model, answering both doGenerate and doStream from one script, in order. */
export function scriptedMock(
  script: Script[],
  { modelId = 'scripted' }: { readonly modelId?: string } = {},
): MockLanguageModelV3 & { requests: LanguageModelV3CallOptions[] } {
  const requests: LanguageModelV3CallOptions[] = []
  let index = 0
  const next = async (request: LanguageModelV3CallOptions): Promise<{ reply: Reply; n: number }> => {
    const n = index++
    requests.push(request)
    const entry = script[n]
    if (entry === undefined) throw new Error(`scripted mock: no reply left for request #${n + 1}`)
    return { reply: typeof entry === 'function' ? await entry(request, n) : entry, n }
  }
  const content = (reply: Reply, n: number): LanguageModelV3Content[] => [
    ...(reply.reasoning === undefined
      ? []
      : [{ type: 'reasoning' as const, text: reply.reasoning.text, providerMetadata: { mock: { signature: reply.reasoning.signature } } }]),
    ...(reply.text === undefined ? [] : [{ type: 'text' as const, text: reply.text }]),
    ...(reply.calls ?? []).map((call, i) => ({
      type: 'tool-call' as const,
      toolCallId: call.id ?? `call-${n + 1}-${i + 1}`,
      toolName: call.name,
      input: typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
      ...(call.signature === undefined ? {} : { providerMetadata: { mock: { signature: call.signature } } }),
    })),
  ]
  const finishReason = (reply: Reply) => ({
    unified: (reply.calls?.length ?? 0) > 0 ? ('tool-calls' as const) : ('stop' as const),
    raw: undefined,
  })
  const model = new MockLanguageModelV3({
    provider: 'mock',
    modelId,
    doGenerate: async (request) => {
      const { reply, n } = await next(request)
      return { content: content(reply, n), finishReason: finishReason(reply), usage, warnings: [] }
    },
    doStream: async (request) => {
      const { reply, n } = await next(request)
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }]
      if (reply.reasoning !== undefined) {
        parts.push({ type: 'reasoning-start', id: 'r1' })
        parts.push({ type: 'reasoning-delta', id: 'r1', delta: reply.reasoning.text })
        // The signature arrives at the end of the reasoning, as Anthropic's does.
        parts.push({ type: 'reasoning-end', id: 'r1', providerMetadata: { mock: { signature: reply.reasoning.signature } } })
      }
      if (reply.text !== undefined) {
        parts.push({ type: 'text-start', id: 't1' })
        // Two deltas, so the fold of a streamed answer is exercised.
        const half = Math.ceil(reply.text.length / 2)
        for (const delta of reply.deltas ?? [reply.text.slice(0, half), reply.text.slice(half)])
          parts.push({ type: 'text-delta', id: 't1', delta })
        parts.push({ type: 'text-end', id: 't1' })
      }
      for (const part of content(reply, n)) if (part.type === 'tool-call') parts.push(part)
      parts.push({ type: 'finish', finishReason: finishReason(reply), usage })
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part)
            controller.close()
          },
        }),
      }
    },
  })
  return Object.assign(model, { requests })
}

/** The system text of a model request ('' when it has none). */
export function systemOf(request: LanguageModelV3CallOptions): string {
  return request.prompt
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n')
}

/** The text of every user message of a request, in order. */
export function userTexts(request: LanguageModelV3CallOptions): string[] {
  return request.prompt
    .filter((message) => message.role === 'user')
    .map((message) => message.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(''))
}

/** The tool names a request sends, in order. */
export function toolNames(request: LanguageModelV3CallOptions): string[] {
  return (request.tools ?? []).map((tool) => tool.name)
}
