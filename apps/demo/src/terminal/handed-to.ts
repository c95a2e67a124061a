import { closeSync, openSync, readdirSync, readSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'

/** Where the plan this session approved last went: into a fresh session (SPEC §18), found by its first event when it is in the folder. */
export interface HandedTo {
  /** The `exit_plan_mode` call that was approved. */
  readonly toolCallId: string
  /** The fresh session carrying it out, when its log is in the session folder. */
  readonly session?: string
}

/** How much of a log's first line is read to find its `plan/handoff`'s `from` (it comes before the plan). */
const HEAD = 1024

/**
 * The session's latest approval, when its `plan/review` record chose a
 * fresh session (the plan is tracked there, not here: SPEC §17), with the
 * fresh session's id when a log in `dir` starts with the `plan/handoff` of
 * that approval; `undefined` when the latest approval kept the plan here,
 * or there was none.
 */
export function handedTo(events: readonly SessionEvent[], self: string, dir: string | undefined): HandedTo | undefined {
  const approved = events
    .filter((event) => (event.type as string) === 'plan/review' && (event.data as { outcome?: unknown }).outcome === 'approved')
    .at(-1)?.data as { toolCallId?: unknown; handoff?: { fresh?: unknown } } | undefined
  if (approved?.handoff?.fresh !== true || typeof approved.toolCallId !== 'string') return undefined
  const toolCallId = approved.toolCallId
  if (dir === undefined) return { toolCallId }
  const wanted = JSON.stringify({ session: self, toolCallId })
  let names: string[]
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.jsonl'))
  } catch {
    return { toolCallId }
  }
  for (const name of names) {
    let head = ''
    try {
      const fd = openSync(join(dir, name), 'r')
      try {
        const buffer = Buffer.alloc(HEAD)
        head = buffer.toString('utf8', 0, readSync(fd, buffer, 0, HEAD, 0))
      } finally {
        closeSync(fd)
      }
    } catch {
      continue
    }
    if (head.startsWith('{"type":"plan/handoff"') && head.includes(`"from":${wanted}`))
      return { toolCallId, session: name.slice(0, -'.jsonl'.length) }
  }
  return { toolCallId }
}
