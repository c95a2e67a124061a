/**
 * One measurement process (spawned by main.ts, one per size and job, so
 * sizes do not share a heap and peak RSS is per job):
 *
 *   node --expose-gc dist/run.js rows   --size N --effort full|quick --dir D
 *   node --expose-gc dist/run.js load   --size N --effort full|quick --dir D
 *   node --expose-gc dist/run.js host   --size N --effort full|quick --dir D   (the host-store rows)
 *   node --expose-gc dist/run.js memory --size N --dir D
 *   node --expose-gc dist/run.js heap   --size N --dir D   (what the loaded log holds, from two heap snapshots)
 *   node --expose-gc dist/run.js append --effort full|quick --dir D
 *   node --expose-gc dist/run.js flat   --size N --effort full|quick --dir D   (1k vs N, one process)
 *   node dist/run.js cache                                 (the prompt-cache session, cache-rows.ts)
 *   node --expose-gc dist/run.js history --effort full|quick [--before FILE]   (planHistory at 10–20,000 revisions, history-scale.ts)
 *   node dist/run.js jsonl --size N --out FILE   (just write a generated log)
 *
 * Progress goes to stderr; the result is the last stdout line, `@@result <json>`.
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Context, type Logger } from '@planmode/context'
import { sessionProjectionsPlugin, sessionStorePlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProjectionPlugin } from '@planmode/plan-projection'
import type { Agent, SessionEvent } from '@planmode/seams'
import { generateLog, logStats, makeLog, writeJsonl } from './generator.js'
import type { Effort } from './measure.js'
import { historyRows } from './history-rows.js'
import { flatRows, planRows } from './plan-rows.js'
import { ROWS, type FlatResult, type MemoryResult, type RowResult, type SizeResult } from './rows.js'
import { appendRows, jsonlLoad } from './store-rows.js'
import { hostRows } from './host-rows.js'
import { cacheRows } from './cache-rows.js'
import { historyScale } from './history-scale.js'
import { heapBreakdown } from './heap-breakdown.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

function done(result: unknown): void {
  process.stdout.write(`@@result ${JSON.stringify(result)}\n`)
}

async function rows(size: number, effort: Effort, dir: string): Promise<void> {
  const log = makeLog({ events: size, seed: 1 })
  const results: RowResult[] = []
  const collect = (row: RowResult): void => {
    results.push(row)
    process.stderr.write(`  ${size}: ${row.id}\n`)
  }
  await planRows(log, effort, collect)
  await historyRows(log as readonly SessionEvent[], effort, collect)
  const id = `s${size}`
  const jsonlBytes = await writeJsonl(join(dir, `${id}.jsonl`), log)
  const stats = logStats(log)
  let last = log.length - 1
  while (last >= 0 && log[last]!.type !== 'plan/mode') last--
  const result: SizeResult = { size, rows: results, jsonlBytes, stats, sinceLastPlanMode: log.length - 1 - last }
  done(result)
}

/**
 * Peak RSS of a host process holding the session: the store loads the JSONL
 * file, then plan-core and the plan projection (through the host's
 * projection registry) read it.
 */
async function memory(size: number, dir: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
  const ctx = new Context({ logger: quiet })
  ctx.plugin(sessionStorePlugin, { dir, durability: 'never' })
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(planCorePlugin)
  ctx.plugin(planProjectionPlugin)
  const store = ctx.require('sessions')
  const session = await store.open(`s${size}`)
  gc()
  const usage = process.memoryUsage()
  const heapLog = usage.heapUsed
  const agent: Agent = { id: 'agent', session, steer() {}, async inject() {} }
  ctx.require('planMode').get(agent)
  ctx.require('sessionProjections').snapshot(session)
  gc()
  const heapPlan = process.memoryUsage().heapUsed
  const result: MemoryResult = {
    size,
    peakRss: process.resourceUsage().maxRSS * 1024,
    heapLog,
    heapPlan,
    heapTotal: usage.heapTotal,
    external: usage.external,
    rssLog: usage.rss,
  }
  await store.close(session)
  done(result)
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    size: { type: 'string' },
    effort: { type: 'string', default: 'full' },
    dir: { type: 'string' },
    out: { type: 'string' },
    before: { type: 'string' },
  },
})
const job = positionals[0]
const effort = values.effort === 'quick' ? 'quick' : 'full'
const size = Number(values.size)
if (job === 'jsonl') {
  if (values.out === undefined) throw new Error('--out is required')
  const bytes = await writeJsonl(values.out, generateLog({ events: size, seed: 1 }))
  process.stderr.write(`wrote ${size} events, ${bytes} bytes, to ${values.out}\n`)
  process.exit(0)
}
if (job === 'cache') {
  // No files and no timing: the scripted session through the host loop and a loopback server.
  done(await cacheRows())
  process.exit(0)
}
if (job === 'history') {
  // No files: synthetic sessions of 10 to 20,000 revisions, and an older build of the unit beside ours when given.
  done(await historyScale(effort, values.before))
  process.exit(0)
}
const dir = values.dir
if (dir === undefined) throw new Error('--dir is required')
if (job === 'rows') await rows(size, effort, dir)
else if (job === 'load') {
  // A process of its own: no generated log in the heap to slow either side's GC.
  const load = await jsonlLoad(dir, `s${size}`, size, effort)
  done({ id: 'jsonl-load', ours: load.ours, baseline: load.raw } satisfies RowResult)
} else if (job === 'host') done(await hostRows(dir, size, effort))
else if (job === 'memory') await memory(size, dir)
else if (job === 'heap') done(await heapBreakdown(dir, `s${size}`))
else if (job === 'append') done(await appendRows(dir, effort))
else if (job === 'flat') {
  const ids = ROWS.filter((r) => r.perCall).map((r) => r.id)
  const rows = await flatRows(makeLog({ events: 1000, seed: 1 }), makeLog({ events: size, seed: 1 }), ids, effort)
  done({ small: 1000, large: size, rows } satisfies FlatResult)
} else throw new Error(`unknown job ${String(job)}`)
