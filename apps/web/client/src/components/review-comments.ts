import { useCallback, useMemo, useState } from 'react'
import { api } from '../api.js'
import { isMe, namedUsers } from '../me.js'
import { useAction } from '../use-action.js'
import type { Me, PendingQuestion, PlanReviewer, UserAnswer } from '../wire.js'

/** A line comment of the open review as the panel shows it. */
export interface ReviewComment {
  /** Stable within the review (React key). */
  readonly key: string
  readonly line: number
  readonly text: string
  /** Who wrote it (shared comments of named users). */
  readonly by?: PlanReviewer
  /** Whether this tab may remove it: its own, or any while the user is an owner. */
  readonly removable: boolean
}

/** The comments of a review panel and what changes them. */
export interface ReviewComments {
  readonly list: readonly ReviewComment[]
  /** Adds one; resolves true once it is held (shared: the server took it). */
  add(line: number, text: string): Promise<boolean>
  remove(comment: ReviewComment): Promise<boolean>
  /** The comments this tab sends with its answer (shared ones go with the server's, not from here). */
  forAnswer(): NonNullable<UserAnswer['comments']>
  /** A failed add or remove. */
  readonly error: string | null
}

/**
 * The line comments of a plan review. With named users (`--users`) they are
 * shared: each one is posted as it is added, everyone sees everyone's with
 * their names (the question's `comments`, kept up to date by the stream),
 * and the server adds them all to whichever answer decides. Without named
 * users they stay in this tab until its answer, as they always did.
 */
export function useReviewComments(sessionId: string, pending: PendingQuestion, me: Me | undefined): ReviewComments {
  const shared = namedUsers(me)
  const [local, setLocal] = useState<{ key: string; line: number; text: string }[]>([])
  const [nextKey, setNextKey] = useState(0)
  const action = useAction()
  const list = useMemo<readonly ReviewComment[]>(
    () =>
      shared
        ? (pending.comments ?? []).map((comment) => ({
            key: comment.id,
            line: comment.line,
            text: comment.text,
            ...(comment.by === undefined ? {} : { by: comment.by }),
            removable: me?.role === 'owner' || isMe(me, comment.by),
          }))
        : local.map((comment) => ({ ...comment, removable: true })),
    [shared, pending.comments, local, me],
  )
  const add = useCallback(
    (line: number, text: string): Promise<boolean> => {
      if (shared) return action.run(() => api.comment(sessionId, pending.id, line, text))
      setLocal((held) => [...held, { key: `local-${nextKey}`, line, text }])
      setNextKey((key) => key + 1)
      return Promise.resolve(true)
    },
    [shared, action, sessionId, pending.id, nextKey],
  )
  const remove = useCallback(
    (comment: ReviewComment): Promise<boolean> => {
      if (shared) return action.run(() => api.uncomment(sessionId, pending.id, comment.key))
      setLocal((held) => held.filter((other) => other.key !== comment.key))
      return Promise.resolve(true)
    },
    [shared, action, sessionId, pending.id],
  )
  const forAnswer = useCallback(() => (shared ? [] : local.map(({ line, text }) => ({ line, text }))), [shared, local])
  return { list, add, remove, forAnswer, error: action.error }
}
