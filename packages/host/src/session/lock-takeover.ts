import { readdir, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { createExclusive } from './exclusive-create.js'
import { newToken, ownerLine, readLockText, readOwner, shapeProblem, unlinkOwn, type LockOwner } from './lock-file.js'
import { lockTable, standsBehind } from './lock-table.js'
import { processState } from './process-identity.js'

// Rules 2 to 5 of session-lock.ts: who may delete a stale lock (the one
// holder of its takeover claim), how claims left by dead processes are
// cleared (the same rule one level down), and when a holder is stale
// (process-identity.ts, plus this process's own lock table).

type Verdict = { readonly live: true; readonly who: string } | { readonly live: false; readonly why: string }

/** Whether the holder of a lock (or claim) may still be running: rule 5. */
export function judge(owner: LockOwner): Verdict {
  const who = `process ${owner.pid} on ${owner.host}`
  const state = processState(owner)
  switch (state.state) {
    case 'self':
      return standsBehind(owner.token)
        ? { live: true, who: 'another session store of this process' }
        : { live: false, why: 'of this process (no longer held)' }
    case 'alive':
      return { live: true, who }
    case 'gone':
      return { live: false, why: `of process ${owner.pid} (${state.why})` }
    case 'unchecked':
      return state.where === 'namespace'
        ? { live: true, who: `${who} in ${state.why}; whether it still runs cannot be checked from here` }
        : { live: true, who: `${who} (${state.why}: whether it still runs cannot be checked from here)` }
  }
}

/** Depth of abandoned claims on claims we clear before giving up. */
const MAX_DEPTH = 6
/** Rounds of "taken over, then someone else was quicker" before giving up. */
const MAX_ROUNDS = 20

/** How a {@link take} ended: the file is ours, or who holds it. */
export type Outcome = { readonly won: true } | { readonly won: false; readonly who: string }

/**
 * Creates `path` with `content` (whose token this process already stands
 * behind), taking over a stale file there by rules 2–4. `onStale` hears of
 * each stale file removed.
 */
export async function take(
  path: string,
  content: string,
  log: string,
  depth: number,
  onStale: (message: string) => void,
  durable: boolean,
): Promise<Outcome> {
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    if (await createExclusive(path, content, durable)) return { won: true }
    const owner = await readOwner(path, log)
    if (owner === undefined) continue // released meanwhile: race for it again
    const verdict = judge(owner)
    if (verdict.live) return { won: false, who: verdict.who }
    if (depth >= MAX_DEPTH) return { won: false, who: `an abandoned takeover (${path}; delete it if no process is using ${log})` }
    const claim = `${path}.takeover-${owner.token}`
    const claimToken = newToken()
    const locks = lockTable()
    locks.tokens.add(claimToken)
    try {
      const claimed = await take(claim, ownerLine(claimToken), log, depth + 1, onStale, durable)
      if (!claimed.won) return { won: false, who: `${claimed.who}, which is taking over the stale lock` }
      locks.claims.set(claim, claimToken)
      try {
        const again = await readOwner(path, log)
        if (again?.token === owner.token) {
          onStale(
            depth === 0
              ? `${path}: taking over a stale lock ${verdict.why}`
              : `${path}: removing an abandoned takeover claim ${verdict.why}`,
          )
          await unlink(path).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error
          })
        }
      } finally {
        unlinkOwn(claim, claimToken)
        locks.claims.delete(claim)
      }
    } finally {
      locks.tokens.delete(claimToken)
    }
  }
  return { won: false, who: `other writers racing for it (${MAX_ROUNDS} rounds lost)` }
}

/** Once the lock is won: removes temp and claim files of `file` left by processes that died (see rule 4). */
export async function sweepLitter(file: string, token: string): Promise<void> {
  const base = basename(file)
  const litter = /^(?:takeover-([A-Za-z0-9_-]+)(?:\.takeover-[A-Za-z0-9_-]+)*)?(?:\.?tmp-\d+-[0-9a-f]+)?$/
  let names: string[]
  try {
    names = await readdir(dirname(file))
  } catch {
    return
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`)) continue
    const rest = name.slice(base.length + 1)
    const match = litter.exec(rest)
    // Claims on our own token are not litter: nobody should hold one, and we leave it to the protocol.
    if (rest === '' || match === null || match[1] === token) continue
    const path = join(dirname(file), name)
    try {
      const text = readLockText(path, file)
      if (text === undefined) continue
      const owner = JSON.parse(text) as unknown
      if (shapeProblem(owner) === undefined && !judge(owner as LockOwner).live) await unlink(path)
    } catch {
      // gone, or not something we dare remove
    }
  }
}
