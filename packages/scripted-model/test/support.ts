import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider'

/** A one-message request. */
export function requestOf(text = 'hi', system?: string): LanguageModelV3CallOptions {
  return {
    prompt: [
      ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
      { role: 'user' as const, content: [{ type: 'text' as const, text }] },
    ],
  }
}

/** Every part of a stream, in order. */
export async function partsOf(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const parts: LanguageModelV3StreamPart[] = []
  const reader = stream.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value)
  return parts
}
