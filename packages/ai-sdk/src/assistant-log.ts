import type { LanguageModelMiddleware } from 'ai'
import type { AssistantContentBlock } from '@planmode/seams'
import type { ModelContent, ModelStreamPart } from './sdk-types.js'

/** The step a model call belongs to, and how to log its answer. */
export interface AnswerSink {
  /** Logs the step's `assistant/message` (once per model call that answered). */
  log(content: readonly AssistantContentBlock[]): Promise<void>
}

/** A logged tool-call input: the parsed JSON arguments, or the raw text when it is not JSON. */
function loggedInput(input: string): unknown {
  try {
    return JSON.parse(input) as unknown
  } catch {
    return input
  }
}

function blocksOf(content: readonly ModelContent[]): AssistantContentBlock[] {
  const blocks: AssistantContentBlock[] = []
  for (const part of content) {
    if (part.type === 'text' && part.text !== '') blocks.push({ type: 'text', text: part.text })
    else if (part.type === 'reasoning' && part.text !== '') blocks.push({ type: 'reasoning', text: part.text })
    else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      blocks.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: loggedInput(part.input) })
    }
  }
  return blocks
}

/**
 * Folds a model stream into the blocks of its answer, in the order the model
 * produced them: text and reasoning by id, client tool calls as they arrive.
 */
class AnswerFold {
  private readonly blocks: ({ type: 'text' | 'reasoning'; text: string } | AssistantContentBlock)[] = []
  private readonly open = new Map<string, { type: 'text' | 'reasoning'; text: string }>()

  add(part: ModelStreamPart): void {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const block = { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' }
        this.open.set(`${block.type}:${part.id}`, block)
        this.blocks.push(block)
        break
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const type = part.type === 'text-delta' ? 'text' : 'reasoning'
        let block = this.open.get(`${type}:${part.id}`)
        if (block === undefined) {
          block = { type, text: '' }
          this.open.set(`${type}:${part.id}`, block)
          this.blocks.push(block)
        }
        block.text += part.delta
        break
      }
      case 'tool-call':
        if (part.providerExecuted !== true) {
          this.blocks.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: loggedInput(part.input) })
        }
        break
      default:
        break
    }
  }

  content(): AssistantContentBlock[] {
    return this.blocks.filter((block) => block.type === 'tool-call' || block.text !== '') as AssistantContentBlock[]
  }
}

/**
 * The middleware that logs each step's `assistant/message` before any of its
 * tool calls run: after `doGenerate` answers, or, for a stream, when it
 * finishes — holding the stream's `tool-call` parts (which start tool
 * execution in `streamText`) until the message is logged. Text and reasoning
 * deltas pass through at once. `sink()` returning `undefined` (a call made
 * outside a turn of the agent) logs nothing.
 */
export function answerLogMiddleware(sink: () => AnswerSink | undefined): LanguageModelMiddleware {
  return {
    specificationVersion: 'v3',
    async wrapGenerate({ doGenerate }) {
      const target = sink()
      const result = await doGenerate()
      if (target !== undefined) await target.log(blocksOf(result.content))
      return result
    },
    async wrapStream({ doStream }) {
      const target = sink()
      const result = await doStream()
      if (target === undefined) return result
      const fold = new AnswerFold()
      const held: ModelStreamPart[] = []
      let logged = false
      const release = async (controller: TransformStreamDefaultController<ModelStreamPart>): Promise<void> => {
        if (logged) return
        logged = true
        await target.log(fold.content())
        for (const part of held) controller.enqueue(part)
        held.length = 0
      }
      const stream = result.stream.pipeThrough(
        new TransformStream<ModelStreamPart, ModelStreamPart>({
          async transform(part, controller) {
            fold.add(part)
            if (part.type === 'tool-call' && part.providerExecuted !== true && !logged) {
              held.push(part)
              return
            }
            if (part.type === 'finish') await release(controller)
            controller.enqueue(part)
          },
          async flush(controller) {
            await release(controller)
          },
        }),
      )
      return { ...result, stream }
    },
  }
}
