import { readFile, rm, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Context, type Logger } from '@planmode/context'
import { sessionStorePlugin, type Durability, type SessionStore } from '@planmode/host'
import type { SessionEventMap, SessionEventType } from '@planmode/seams'
import { generateLog } from './generator.js'
import { medianOfRuns, type Effort } from './measure.js'
import { APPEND_ROWS, type AppendResult, type AppendRow } from './rows.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** A fresh store over `dir`. */
export function openStore(dir: string, durability: Durability): { store: SessionStore; ctx: Context } {
  const ctx = new Context({ logger: quiet })
  ctx.plugin(sessionStorePlugin, { dir, durability })
  return { store: ctx.require('sessions'), ctx }
}

/** The reference: read the file, split it into lines, `JSON.parse` every line. */
export async function rawParse(file: string): Promise<unknown[]> {
  const text = await readFile(file, 'utf8')
  const out: unknown[] = []
  for (const line of text.split('\n')) if (line !== '') out.push(JSON.parse(line))
  return out
}

/**
 * Cold load of `<dir>/<id>.jsonl` through the session store (`open`, then
 * `close` so the next run reads the file again) against {@link rawParse}.
 * The two alternate, so drift on a shared machine hits both alike; each
 * side's median run counts. Returns both throughputs in events/s.
 */
export async function jsonlLoad(dir: string, id: string, events: number, effort: Effort): Promise<{ ours: number; raw: number }> {
  const runs = effort === 'quick' ? 1 : events >= 1_000_000 ? 3 : events >= 100_000 ? 5 : 15
  const { store, ctx } = openStore(dir, 'never')
  const file = join(dir, `${id}.jsonl`)
  const ours: number[] = []
  const raw: number[] = []
  const warm = effort === 'quick' ? 0 : 1
  for (let run = 0; run < runs + warm; run++) {
    const a = await medianOfRuns(async () => {
      const session = await store.open(id)
      if (session.events.length !== events) throw new Error(`loaded ${session.events.length} events, expected ${events}`)
      await store.close(session)
    }, 1)
    const b = await medianOfRuns(async () => {
      const parsed = await rawParse(file)
      if (parsed.length !== events) throw new Error(`parsed ${parsed.length} lines, expected ${events}`)
    }, 1)
    // The first pair warms the code paths and the page cache.
    if (run >= warm) {
      ours.push(a)
      raw.push(b)
    }
  }
  ctx.dispose()
  const mid = (xs: number[]): number => xs.sort((x, y) => x - y)[(xs.length - 1) >> 1]!
  return { ours: (events * 1e9) / mid(ours), raw: (events * 1e9) / mid(raw) }
}

/**
 * Appends to `sessions` new sessions of `store` (ids `<prefix>-<k>`) at once,
 * `inflight` appends at a time each, until `budgetNs` of wall time has
 * passed; closes them. Events appended and the wall time (ns).
 */
export async function timedAppends(
  store: SessionStore,
  shape: { readonly sessions: number; readonly inflight: number },
  prefix: string,
  budgetNs: number,
): Promise<{ events: number; elapsed: number }> {
  const sessions = await Promise.all(Array.from({ length: shape.sessions }, (_, k) => store.create({ id: `${prefix}-${k}` })))
  const t0 = process.hrtime.bigint()
  const counts = await Promise.all(
    sessions.map(async (session, k) => {
      const source = generateLog({ events: 10_000_000, seed: 7 + k })
      let count = 0
      let elapsed = 0
      const batch: Array<Promise<unknown>> = []
      while (elapsed < budgetNs) {
        // 64 appends between clock reads.
        for (let i = 0; i < 64; i += shape.inflight) {
          batch.length = 0
          for (let q = 0; q < shape.inflight; q++) {
            const next = source.next().value!
            batch.push(session.append(next.type as SessionEventType, next.data as SessionEventMap[SessionEventType]))
          }
          if (batch.length === 1) await batch[0]
          else await Promise.all(batch)
          count += shape.inflight
        }
        elapsed = Number(process.hrtime.bigint() - t0)
      }
      return count
    }),
  )
  const elapsed = Number(process.hrtime.bigint() - t0)
  for (const session of sessions) await store.close(session)
  return { events: counts.reduce((x, y) => x + y, 0), elapsed }
}

/** One round of one append row: events appended and the wall time (ns). */
async function appendRound(dir: string, row: AppendRow, round: number, budgetNs: number): Promise<{ events: number; elapsed: number }> {
  const sub = join(dir, `append-${row.id}-${round}`)
  await rm(sub, { recursive: true, force: true })
  await mkdir(sub, { recursive: true })
  const { store, ctx } = openStore(sub, row.durability)
  const result = await timedAppends(store, row, 'append', budgetNs)
  ctx.dispose()
  await rm(sub, { recursive: true, force: true })
  return result
}

/**
 * Append throughput per row of {@link APPEND_ROWS}: each of the row's
 * sessions (one JSONL file each, one store) appends generated events for a
 * time budget, keeping `inflight` appends outstanding and awaiting them
 * before the next batch (1: each awaited before the next, as an agent loop
 * appends). All the sessions run at once; the rate counts every session's
 * events. Full effort measures three rounds of 1 s per row, the rows taking
 * turns (so a neighbour's burst of disk traffic hits them alike), and keeps
 * each row's median rate; quick effort one round of 0.25 s.
 */
export async function appendRows(dir: string, effort: Effort): Promise<AppendResult[]> {
  const budgetNs = effort === 'quick' ? 250e6 : 1e9
  const rounds = effort === 'quick' ? 1 : 3
  const measured = APPEND_ROWS.map(() => ({ events: 0, rates: [] as number[] }))
  for (let round = 0; round < rounds; round++) {
    for (let r = 0; r < APPEND_ROWS.length; r++) {
      const { events, elapsed } = await appendRound(dir, APPEND_ROWS[r]!, round, budgetNs)
      measured[r]!.events += events
      measured[r]!.rates.push((events * 1e9) / elapsed)
    }
  }
  return APPEND_ROWS.map((row, r) => {
    const rates = measured[r]!.rates.sort((x, y) => x - y)
    return {
      id: row.id,
      durability: row.durability,
      sessions: row.sessions,
      inflight: row.inflight,
      events: measured[r]!.events,
      rate: rates[(rates.length - 1) >> 1]!,
    }
  })
}
