import { readFile, rm, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Context, type Logger } from '@planmode/context'
import { sessionStorePlugin, type Durability, type SessionStore } from '@planmode/host'
import type { SessionEventMap, SessionEventType } from '@planmode/seams'
import { generateLog } from './generator.js'
import { medianOfRuns, type Effort } from './measure.js'
import type { AppendResult } from './rows.js'

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
export async function jsonlLoad(
  dir: string,
  id: string,
  events: number,
  effort: Effort,
): Promise<{ ours: number; raw: number }> {
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
 * Append throughput of one JSONL session per durability: each event is
 * awaited before the next (as an agent loop appends), for a time budget.
 */
export async function appendRows(dir: string, effort: Effort): Promise<AppendResult[]> {
  const budgetNs = effort === 'quick' ? 250e6 : 3e9
  const results: AppendResult[] = []
  for (const durability of ['append', 'turn', 'never'] as const) {
    const sub = join(dir, `append-${durability}`)
    await rm(sub, { recursive: true, force: true })
    await mkdir(sub, { recursive: true })
    const { store, ctx } = openStore(sub, durability)
    const session = await store.create({ id: 'append' })
    const source = generateLog({ events: 10_000_000, seed: 7 })
    let count = 0
    const t0 = process.hrtime.bigint()
    let elapsed = 0
    while (elapsed < budgetNs) {
      // 64 appends between clock reads.
      for (let i = 0; i < 64; i++) {
        const next = source.next().value!
        await session.append(next.type as SessionEventType, next.data as SessionEventMap[SessionEventType])
        count++
      }
      elapsed = Number(process.hrtime.bigint() - t0)
    }
    await store.close(session)
    ctx.dispose()
    await rm(sub, { recursive: true, force: true })
    results.push({ durability, events: count, rate: (count * 1e9) / elapsed })
  }
  return results
}
