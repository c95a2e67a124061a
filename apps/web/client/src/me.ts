/**
 * Who this tab's token is (`GET /api/me`), asked once per page: `{ role }`
 * for the app's single token (the one anonymous owner), `{ id, name, role }`
 * for a user of `--users`. Until it is known (or when it cannot be read) the
 * tab acts as today's single owner: the server refuses what the role does
 * not allow anyway.
 */
import { useEffect, useState } from 'react'
import { api } from './api.js'
import type { Me, PlanReviewer } from './wire.js'

let asked: Promise<Me | undefined> | undefined
let known: Me | undefined

function askOnce(): Promise<Me | undefined> {
  asked ??= api.me().then(
    (me) => {
      known = me
      return me
    },
    () => {
      asked = undefined // asked again by the next component that needs it
      return undefined
    },
  )
  return asked
}

/** This tab's user, once known. */
export function useMe(): Me | undefined {
  const [me, setMe] = useState<Me | undefined>(known)
  useEffect(() => {
    let live = true
    if (known === undefined) void askOnce().then((answer) => live && setMe(answer))
    return () => {
      live = false
    }
  }, [])
  return me
}

/** Whether the server has named users (`--users`): then comments are shared and answers carry who sent them. */
export const namedUsers = (me: Me | undefined): boolean => me?.id !== undefined

/** Whether `me` may only comment and keep planning. */
export const isReviewer = (me: Me | undefined): boolean => me?.role === 'reviewer'

/** What only owners can do, said on the buttons a reviewer cannot use. */
export const OWNERS_ONLY_TITLE = 'Only owners can approve or stop planning: you are a reviewer (comment, then Keep planning)'

/** A person as shown: their name, else their id. */
export const personName = (by: PlanReviewer | undefined): string | undefined =>
  by === undefined ? undefined : by.name !== undefined && by.name.trim() !== '' ? by.name : by.id

/** Whether `by` is `me`. */
export const isMe = (me: Me | undefined, by: PlanReviewer | undefined): boolean => me?.id !== undefined && by?.id === me.id
