import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import type { AssistantContentBlock } from '@planmode/seams'
import { newId } from '../ids.js'
import { untilAborted } from '../until-aborted.js'

type Textual = { type: 'text' | 'reasoning'; text: string }

/**
 * One model call through `doStream`, collected into assistant blocks in the
 * order they began (empty text and reasoning dropped). Each part is passed
 * to `onPart` as it arrives. An `error` part, a failed read or an abort
 * rejects, and cancels the provider's stream so its body does not stay open.
 */
export async function streamAnswer(
  model: LanguageModelV3,
  request: LanguageModelV3CallOptions,
  signal: AbortSignal,
  onPart: (part: LanguageModelV3StreamPart) => void,
): Promise<AssistantContentBlock[]> {
  const { stream } = await untilAborted(model.doStream(request), signal)
  const blocks: (Textual | AssistantContentBlock)[] = []
  const open = new Map<string, Textual>()
  const textual = (kind: 'text' | 'reasoning', id: string): Textual => {
    const key = `${kind}:${id}`
    let block = open.get(key)
    if (block === undefined) {
      block = { type: kind, text: '' }
      open.set(key, block)
      blocks.push(block)
    }
    return block
  }
  const reader = stream.getReader()
  let completed = false
  try {
    for (;;) {
      const { done, value: part } = await untilAborted(reader.read(), signal)
      if (done) {
        completed = true
        break
      }
      onPart(part)
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start':
          textual(part.type === 'text-start' ? 'text' : 'reasoning', part.id)
          break
        case 'text-delta':
        case 'reasoning-delta':
          textual(part.type === 'text-delta' ? 'text' : 'reasoning', part.id).text += part.delta
          break
        case 'tool-call': {
          let input: unknown
          try {
            input = part.input.trim() === '' ? {} : JSON.parse(part.input)
          } catch {
            input = part.input
          }
          blocks.push({ type: 'tool-call', toolCallId: part.toolCallId || newId('call'), toolName: part.toolName, input })
          break
        }
        case 'error':
          throw part.error
        default:
          break
      }
    }
  } catch (error) {
    // An `error` part, a failed read or a cancel: the provider's body must not stay open
    // (a retry may start right after this).
    void reader.cancel(signal.aborted ? signal.reason : error).catch(() => {})
    throw error
  } finally {
    if (completed) reader.releaseLock()
  }
  return blocks
    .filter((block) => block.type === 'tool-call' || block.text !== '')
    .map((block) => (block.type === 'tool-call' ? block : { type: block.type, text: block.text }))
}
