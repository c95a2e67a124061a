import type { Logger } from '@planmode/context'
import type { SessionEvent, ToolPresentation, ToolRegistry } from '@planmode/seams'
import type { EventPresentation } from './session-feed.js'

/**
 * How a UI may show the tool calls or result of `event`: `presentCall` /
 * `presentResult` of the registered tool (`tools` absent: none). A tool whose
 * presenter throws is shown without a presentation (the failure goes to the
 * logger's debug).
 */
export function presentEvent(tools: ToolRegistry | undefined, event: SessionEvent, logger: Logger): EventPresentation | undefined {
  if (tools === undefined) return undefined
  if (event.type === 'assistant/message') {
    const calls: Record<string, ToolPresentation> = {}
    for (const block of event.data.content) {
      if (block.type !== 'tool-call') continue
      try {
        const shown = tools.get(block.toolName)?.presentCall?.(block.input as never)
        if (shown !== undefined) calls[block.toolCallId] = shown
      } catch (error) {
        logger.debug(`presentCall of ${block.toolName} failed: ${String(error)}`)
      }
    }
    return Object.keys(calls).length === 0 ? undefined : { calls }
  }
  if (event.type === 'tool/result') {
    try {
      const { isError, content, value } = event.data
      const shown = tools.get(event.data.toolName)?.presentResult?.({ isError, content, ...(value === undefined ? {} : { value }) })
      return shown === undefined ? undefined : { result: shown }
    } catch (error) {
      logger.debug(`presentResult of ${event.data.toolName} failed: ${String(error)}`)
    }
  }
  return undefined
}
