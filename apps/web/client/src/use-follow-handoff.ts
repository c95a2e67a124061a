import { useCallback, useEffect, useRef, useState } from 'react'
import { handedOffAfter } from './handoff-follow.js'
import type { SessionEvent } from './wire.js'

/**
 * The tab that approves a plan with a fresh session follows it there: armed
 * (with the last seq held) as the approval goes out, it opens the session the
 * next `web/handed-off` names. Returns whether it waits, and the arm/disarm.
 */
export function useFollowHandoff(
  events: readonly SessionEvent[],
  onOpenSession: (id: string) => void,
): { waiting: boolean; follow: (armed: boolean) => void } {
  const latest = useRef(events)
  latest.current = events
  const [after, setAfter] = useState<number | null>(null)
  const follow = useCallback((armed: boolean) => setAfter(armed ? (latest.current.at(-1)?.seq ?? -1) : null), [])
  useEffect(() => {
    if (after === null) return
    const session = handedOffAfter(events, after)
    if (session === undefined) return
    setAfter(null)
    onOpenSession(session)
  }, [events, after, onOpenSession])
  return { waiting: after !== null, follow }
}
