import { isPlanMarkdown, planTitle } from '@planmode/plan-core'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'

/** The longest title `session/list` gives. */
export const TITLE_LENGTH = 80

/** `text` cut to {@link TITLE_LENGTH} characters (an ellipsis ends a cut one). */
function cut(text: string): string {
  const chars = [...text]
  return chars.length <= TITLE_LENGTH ? text : `${chars.slice(0, TITLE_LENGTH - 1).join('')}…`
}

/**
 * A session's title for `session/list` (SPEC §23): the title of its latest
 * plan (an `exit_plan_mode` call's plan that passes the heading check, or
 * a handed-on plan's `title`), else the first line of its first user
 * message (a typed command's line counts), at most 80 characters; `null`
 * when it has neither.
 */
export function sessionTitle(events: readonly SessionEvent[]): string | null {
  let plan: string | undefined
  let first: string | undefined
  for (const event of events) {
    if (event.type === 'assistant/message') {
      for (const block of event.data.content) {
        if (block.type !== 'tool-call' || block.toolName !== EXIT_PLAN_MODE) continue
        const input = block.input as { plan?: unknown } | null
        if (typeof input?.plan === 'string' && isPlanMarkdown(input.plan)) plan = planTitle(input.plan)
      }
    } else if (event.type === 'plan/handoff') {
      plan = event.data.title
    } else if (first === undefined && event.type === 'user/message' && event.data.source.kind === 'user') {
      const text = event.data.content.find((block) => block.type === 'text')
      if (text?.type === 'text' && text.text.trim() !== '') first = text.text.trim().split('\n')[0]!.trim()
    } else if (first === undefined && event.type === 'command/run' && event.data.source.kind === 'user') {
      first = `/${event.data.name}${event.data.args}`.split('\n')[0]!.trim()
    }
  }
  const title = plan ?? first
  return title === undefined ? null : cut(title)
}
