import type { SessionEvent } from '@planmode/seams'
import type { Database } from './database.js'

// Range reads of a session's log, for `open`, `follow` and each follower's
// catch-up. A read goes up to the head the session row shows when it
// starts: a commit moves the head in the statement that inserts its events,
// so every row up to that head is there, and none past it is read.

/** The seq range one statement reads when loading a log (at most this many rows). */
const PAGE = 10_000

/**
 * Reads every event of `id` after `seq`, in order, up to the head the
 * session row shows now. Each page is a range of seq values (`seq > a AND
 * seq <= a + PAGE`), so its plan is an index range scan whatever the
 * table's statistics say; a range with no rows (a gap a fork left) jumps
 * to the next seq there is.
 */
export async function readAfter(db: Database, id: string, seq: number, each: (event: SessionEvent) => void): Promise<void> {
  const found = await db.query<{ head: string }>(`reading session ${id}`, `SELECT head FROM ${db.table.sessions} WHERE id = $1`, [id])
  if (found.rows[0] === undefined) return
  await readRange(db, id, seq, Number(found.rows[0].head), each)
}

/** {@link readAfter} up to a known `head`. */
export async function readRange(db: Database, id: string, seq: number, head: number, each: (event: SessionEvent) => void): Promise<void> {
  let after = seq
  while (after < head) {
    const { rows } = await db.query<{ seq: string; time: number; type: string; data: unknown }>(
      `reading session ${id}`,
      `SELECT seq, time, type, data FROM ${db.table.events} WHERE session_id = $1 AND seq > $2 AND seq <= $2::bigint + ${PAGE} ORDER BY seq`,
      [id, after],
    )
    if (rows.length === 0) {
      const next = await db.query<{ seq: string | null }>(
        `reading session ${id}`,
        `SELECT min(seq) AS seq FROM ${db.table.events} WHERE session_id = $1 AND seq > $2`,
        [id, after],
      )
      const gapEnd = next.rows[0]?.seq
      if (gapEnd == null) return
      after = Number(gapEnd) - 1
      continue
    }
    for (const row of rows) {
      const event = { type: row.type, seq: Number(row.seq), time: row.time, data: row.data } as SessionEvent
      after = event.seq
      each(event)
    }
  }
}

/** Every event of `id` (up to `head`, when given). */
export async function readAll(db: Database, id: string, head?: number): Promise<SessionEvent[]> {
  const events: SessionEvent[] = []
  if (head === undefined) await readAfter(db, id, -1, (event) => events.push(event))
  else await readRange(db, id, -1, head, (event) => events.push(event))
  return events
}
