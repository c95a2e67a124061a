import type { ToolResult } from '@planmode/seams'

/** The message of a thrown value: `error.message` for an `Error`, else `String(error)`. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A failed tool result whose text is `Error: <message>`. */
export function failed(message: string): ToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }] }
}
