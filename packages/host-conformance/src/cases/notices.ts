import type { SessionEvent } from '@planmode/seams'
import { messageText } from '../log-readers.js'

/** plan-core's notices, as the kit's cases expect them in the log. */
export const ENTER_NOTICE = 'The user switched this session to plan mode.'
export const LEAVE_NOTICE = 'The user switched this session back to the default mode.'

export const isNotice = (event: SessionEvent): boolean => {
  const source = event.type === 'user/message' ? (event.data?.source as { kind?: string; form?: string } | undefined) : undefined
  return source?.kind === 'plugin' && source.form === 'notice'
}

export function notices(events: readonly SessionEvent[]): string[] {
  return events.filter(isNotice).map((event) => messageText((event as SessionEvent<'user/message'>).data))
}
