/**
 * The PostgreSQL job (issue 15): `@planmode/store-postgres` beside the JSONL
 * store, on the same machine and in the same run, against a fresh schema
 * that is dropped at the end.
 *
 * - durable appends per second, 1 and 64 sessions, one append awaited at a
 *   time, and one session with 32 in flight (group commit);
 * - a follower's latency, in another process, from the writer's
 *   acknowledged commit to the follower's projection change;
 * - cold open of one long session: `open()` on a new store vs the JSONL
 *   store's open of the same events.
 *
 * Every measurement runs in a child process (`main.js pg-child <job>`):
 * {@link pgChild} is what that process runs, {@link pgJob} what the parent
 * runs.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Context, type Logger } from '@planmode/context'
import { sessionProjectionsPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProjectionPlugin } from '@planmode/plan-projection'
import type { Session, SessionEvent, SessionEventType } from '@planmode/seams'
import { asPostgresStore, postgresSessionsPlugin, setup, type PostgresSessionStore } from '@planmode/store-postgres'
import { makeLog, writeJsonl } from './generator.js'
import type { Effort } from './measure.js'
import { analyzeEvents, dropSchema, eventsBytes, freshSchema, pgUrl, serverInfo, type PgServer } from './pg-db.js'
import { openStore, timedAppends } from './store-rows.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** The argument that makes `main.js` run {@link pgChild}. */
export const PG_CHILD = 'pg-child'

/** One append configuration, measured on both stores. */
export interface PgAppendRow {
  readonly id: string
  readonly sessions: number
  /** Appends in flight per session: 1 awaits each before the next, as an agent loop does. */
  readonly inflight: number
}

/** The append configurations. */
export const PG_APPEND_ROWS: readonly PgAppendRow[] = [
  { id: 'sessions-1', sessions: 1, inflight: 1 },
  { id: 'sessions-64', sessions: 64, inflight: 1 },
  { id: 'inflight-32', sessions: 1, inflight: 32 },
]

/** Both stores' rate for one {@link PgAppendRow}: events/s of the median round. */
export interface PgAppendResult extends PgAppendRow {
  readonly pg: number
  readonly jsonl: number
  /** Events appended over all rounds, per store. */
  readonly events: { readonly pg: number; readonly jsonl: number }
}

/** Follower latency percentiles, in ns. */
export interface Percentiles {
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

/** The follower job's figures. */
export interface PgFollowResult {
  readonly samples: number
  /** Writer's acknowledged commit (its `append` resolved) → the follower's projection change. */
  readonly fromAck: Percentiles
  /** Writer's `append` call → the follower's projection change. */
  readonly fromAppend: Percentiles
  /** The writer's own append, call → acknowledged. */
  readonly append: Percentiles
}

/** One cold open, in its own process. */
interface OpenRun {
  readonly ns: number
  readonly rssDelta: number
  readonly heapDelta: number
}

/** Cold open of one store, the median run. */
export interface PgOpenSide {
  readonly seconds: number
  readonly rate: number
  /** RSS after the open minus before it (after a GC each), bytes. */
  readonly rssDelta: number
  /** Heap retained by the open session (after a GC), bytes. */
  readonly heapDelta: number
  readonly runs: number
}

/** The cold-open job's figures. */
export interface PgOpenResult {
  readonly events: number
  readonly jsonlBytes: number
  readonly tableBytes: number
  /** Writing the generated log into PostgreSQL (`fork` of it: multi-row inserts in one transaction). */
  readonly fillSeconds: number
  /** PostgreSQL's `open()` once right after the fill, before the table has statistics. */
  readonly pgStale: PgOpenSide
  /** PostgreSQL's `open()` after `ANALYZE` of the table. */
  readonly pg: PgOpenSide
  readonly jsonl: PgOpenSide
}

/** Everything the `pg` job measured. */
export interface PgResult {
  readonly server: PgServer
  /** The URL without its password. */
  readonly url: string
  readonly effort: Effort
  readonly poolSize: number
  readonly append: readonly PgAppendResult[]
  readonly follow: PgFollowResult
  readonly open: PgOpenResult
  readonly seconds: number
}

/** The store's default pool (the bench keeps it: it is what a host gets). */
const POOL = 10

function pgStore(url: string, schema: string, holder: string): { store: PostgresSessionStore; ctx: Context } {
  const ctx = new Context({ logger: quiet })
  ctx.plugin(postgresSessionsPlugin, { connection: url, schema, holder })
  return { store: asPostgresStore(ctx.require('sessions'))!, ctx }
}

function done(result: unknown): void {
  process.stdout.write(`@@result ${JSON.stringify(result)}\n`)
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.()

/**
 * Every {@link PG_APPEND_ROWS} row on both stores: rounds of a time budget
 * (full: 3 of 1 s, quick: 1 of 0.25 s), the rows and the stores taking
 * turns so a neighbour's burst of disk traffic hits them alike; each
 * side's median round counts. The JSONL store is `sessionStorePlugin` with
 * `durability: 'append'` (an fsync per batch); both get the generator's
 * events (~300 bytes of JSON each), no invariants.
 */
async function appendJob(url: string, schema: string, dir: string, effort: Effort): Promise<PgAppendResult[]> {
  const budgetNs = effort === 'quick' ? 250e6 : 1e9
  const rounds = effort === 'quick' ? 1 : 3
  const pgSide = pgStore(url, schema, 'bench-append')
  const measured = PG_APPEND_ROWS.map(() => ({ pg: [] as number[], jsonl: [] as number[], events: { pg: 0, jsonl: 0 } }))
  // A warm-up: the pool's connections and the code paths.
  await timedAppends(pgSide.store, { sessions: 4, inflight: 4 }, 'warm', 100e6)
  for (let round = 0; round < rounds; round++) {
    for (let r = 0; r < PG_APPEND_ROWS.length; r++) {
      const row = PG_APPEND_ROWS[r]!
      const a = await timedAppends(pgSide.store, row, `r${round}-${row.id}`, budgetNs)
      measured[r]!.pg.push((a.events * 1e9) / a.elapsed)
      measured[r]!.events.pg += a.events
      const sub = join(dir, `pg-append-r${round}-${row.id}`)
      await mkdir(sub, { recursive: true })
      const file = openStore(sub, 'append')
      const b = await timedAppends(file.store, row, `r${round}-${row.id}`, budgetNs)
      file.ctx.dispose()
      await rm(sub, { recursive: true, force: true })
      measured[r]!.jsonl.push((b.events * 1e9) / b.elapsed)
      measured[r]!.events.jsonl += b.events
    }
  }
  await pgSide.store.end()
  const mid = (xs: number[]): number => xs.sort((x, y) => x - y)[(xs.length - 1) >> 1]!
  return PG_APPEND_ROWS.map((row, r) => ({ ...row, pg: mid(measured[r]!.pg), jsonl: mid(measured[r]!.jsonl), events: measured[r]!.events }))
}

function percentiles(values: number[]): Percentiles {
  const xs = [...values].sort((a, b) => a - b)
  const at = (p: number): number => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: xs[xs.length - 1]! }
}

/**
 * The writer side of the follower job: creates the session, starts the
 * follower process and, once it follows, appends `plan/mode` events
 * (alternating on and off, so every one changes the `plan` projection), one
 * at a time, each after the follower reported the previous one. Times are
 * `process.hrtime` in both processes: the machine's monotonic clock, the
 * same in every process.
 */
async function followJob(url: string, schema: string, effort: Effort, self: string): Promise<PgFollowResult> {
  const samples = effort === 'quick' ? 100 : 1000
  const warm = effort === 'quick' ? 10 : 50
  const { store } = pgStore(url, schema, 'bench-writer')
  const session = await store.create({ id: 'follow' })
  await session.append('plan/mode' as SessionEventType, { active: false } as never)
  const child: ChildProcess = spawn(process.execPath, [self, PG_CHILD, 'follower', '--url', url, '--schema', schema], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const seen = new Map<number, bigint>()
  let wake: (() => void) | undefined
  let exited: Error | undefined
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => {
      exited = new Error(`bench: the follower process exited (${code}) before the end`)
      reject(exited)
      wake?.()
    })
    child.on('message', (message: { ready?: true; seq?: number; t?: string }) => {
      if (message.ready === true) resolve()
      else {
        seen.set(message.seq!, BigInt(message.t!))
        wake?.()
      }
    })
  })
  await ready
  const fromAck: number[] = []
  const fromAppend: number[] = []
  const append: number[] = []
  for (let i = 0; i < warm + samples; i++) {
    const t0 = process.hrtime.bigint()
    const event = await session.append('plan/mode' as SessionEventType, { active: i % 2 === 0 } as never)
    const ack = process.hrtime.bigint()
    while (!seen.has(event.seq)) {
      if (exited !== undefined) throw exited
      await new Promise<void>((resolve) => (wake = resolve))
    }
    const t = seen.get(event.seq)!
    seen.delete(event.seq)
    if (i < warm) continue
    fromAck.push(Number(t - ack))
    fromAppend.push(Number(t - t0))
    append.push(Number(ack - t0))
  }
  child.removeAllListeners('exit')
  child.send({ stop: true })
  await new Promise((resolve) => child.once('exit', resolve))
  await store.end()
  return { samples, fromAck: percentiles(fromAck), fromAppend: percentiles(fromAppend), append: percentiles(append) }
}

/**
 * The follower process: its own context with the PostgreSQL store,
 * `sessionProjectionsPlugin`, plan-core and the `plan` projection unit; it
 * follows the session and reports the time of each `plan` change.
 */
async function follower(url: string, schema: string): Promise<void> {
  const ctx = new Context({ logger: quiet })
  ctx.plugin(postgresSessionsPlugin, { connection: url, schema, holder: 'bench-follower' })
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(planCorePlugin)
  ctx.plugin(planProjectionPlugin)
  const projections = ctx.require('sessionProjections')
  projections.onChange((change) => {
    if (change.key !== 'plan') return
    const t = process.hrtime.bigint()
    process.send!({ seq: change.asOfSeq, t: String(t) })
  })
  const store = asPostgresStore(ctx.require('sessions'))!
  const session = await store.follow('follow')
  projections.snapshot(session)
  process.send!({ ready: true })
  await new Promise<void>((resolve) => process.once('message', () => resolve()))
  await store.end()
  process.disconnect()
}

/** Writes the generated log as a JSONL session file and into PostgreSQL (the store's `fork`, one transaction). */
async function fillJob(url: string, schema: string, dir: string, events: number): Promise<{ jsonlBytes: number; fillSeconds: number }> {
  const log = makeLog({ events, seed: 1 })
  const jsonlBytes = await writeJsonl(join(dir, 'cold.jsonl'), log)
  const { store } = pgStore(url, schema, 'bench-fill')
  const t0 = process.hrtime.bigint()
  const session = await store.fork({ id: 'generated', events: log as readonly SessionEvent[] } as Session, undefined, { id: 'cold' })
  const fillSeconds = Number(process.hrtime.bigint() - t0) / 1e9
  if (session.events.length !== events) throw new Error(`bench: the fork holds ${session.events.length} events, expected ${events}`)
  await store.end()
  return { jsonlBytes, fillSeconds }
}

/** One cold open of the `cold` session on a new store, in a process of its own: time, RSS and heap deltas. */
async function openOne(kind: 'pg' | 'jsonl', url: string, schema: string, dir: string, events: number): Promise<OpenRun> {
  const side = kind === 'pg' ? pgStore(url, schema, 'bench-open') : openStore(dir, 'append')
  if (kind === 'pg') await side.store.list() // connect before the clock starts, as a server that is up has
  gc()
  const before = process.memoryUsage()
  const t0 = process.hrtime.bigint()
  const session = await side.store.open('cold')
  const ns = Number(process.hrtime.bigint() - t0)
  if (session.events.length !== events) throw new Error(`bench: ${kind} opened ${session.events.length} events, expected ${events}`)
  gc()
  const after = process.memoryUsage()
  const run: OpenRun = { ns, rssDelta: after.rss - before.rss, heapDelta: after.heapUsed - before.heapUsed }
  await side.store.close(session)
  if (kind === 'pg') await (side.store as PostgresSessionStore).end()
  else side.ctx.dispose()
  return run
}

/** What `main.js pg-child …` runs: one measurement, its result as the last stdout line. */
export async function pgChild(argv: readonly string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      schema: { type: 'string' },
      dir: { type: 'string' },
      effort: { type: 'string', default: 'full' },
      events: { type: 'string' },
      store: { type: 'string' },
      self: { type: 'string' },
    },
  })
  const url = values.url!
  const schema = values.schema!
  const effort: Effort = values.effort === 'quick' ? 'quick' : 'full'
  const job = positionals[0]
  if (job === 'append') done(await appendJob(url, schema, values.dir!, effort))
  else if (job === 'follow') done(await followJob(url, schema, effort, values.self!))
  else if (job === 'follower') await follower(url, schema)
  else if (job === 'fill') done(await fillJob(url, schema, values.dir!, Number(values.events)))
  else if (job === 'open') done(await openOne(values.store === 'pg' ? 'pg' : 'jsonl', url, schema, values.dir!, Number(values.events)))
  else throw new Error(`bench: unknown pg job ${String(job)}`)
  return 0
}

/** Runs `main.js pg-child …` (`self` is main.js) and returns its `@@result`. */
function child<T>(self: string, args: string[]): Promise<T> {
  const t0 = Date.now()
  return new Promise<T>((resolve, reject) => {
    const proc = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=16384', self, PG_CHILD, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString()
      if (process.env['BENCH_VERBOSE'] === '1') process.stderr.write(d)
    })
    proc.on('error', reject)
    proc.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@result '))
      if (code !== 0 || line === undefined) {
        reject(new Error(`bench: pg job "${args[0]}" failed (exit ${code})\n${err.slice(-4000)}`))
        return
      }
      process.stderr.write(
        `bench:   pg ${args[0]}${args[0] === 'open' ? ` ${args[args.indexOf('--store') + 1]}` : ''} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
      )
      resolve(JSON.parse(line.slice('@@result '.length)) as T)
    })
  })
}

function side(runs: OpenRun[], events: number): PgOpenSide {
  const mid = <T>(xs: T[], key: (x: T) => number): number => xs.map(key).sort((a, b) => a - b)[(xs.length - 1) >> 1]!
  const ns = mid(runs, (r) => r.ns)
  return {
    seconds: ns / 1e9,
    rate: (events * 1e9) / ns,
    rssDelta: mid(runs, (r) => r.rssDelta),
    heapDelta: mid(runs, (r) => r.heapDelta),
    runs: runs.length,
  }
}

/**
 * The whole `pg` job, from the parent: a fresh schema (set up, then
 * dropped at the end), the append rows, the follower, the cold open of
 * `openEvents` events (1M in a full run). `self` is main.js; `dir` a
 * temporary directory for the JSONL side.
 */
export async function pgJob(self: string, dir: string, effort: Effort, openEvents: number): Promise<PgResult> {
  const started = Date.now()
  const url = pgUrl()
  const schema = freshSchema()
  const server = await serverInfo(url).catch((error: unknown) => {
    throw new Error(
      `bench: cannot reach PostgreSQL at ${redact(url)} (set PLANMODE_PG_URL, or run with --no-pg): ${(error as Error).message}`,
    )
  })
  await setup({ connection: url, schema })
  try {
    const common = ['--url', url, '--schema', schema, '--dir', dir, '--effort', effort]
    const append = await child<PgAppendResult[]>(self, ['append', ...common])
    const follow = await child<PgFollowResult>(self, ['follow', ...common, '--self', self])
    const events = String(openEvents)
    const fill = await child<{ jsonlBytes: number; fillSeconds: number }>(self, ['fill', ...common, '--events', events])
    const tableBytes = await eventsBytes(url, schema)
    // Right after the bulk insert the table has no statistics (and none come while autovacuum is off).
    const stale = await child<OpenRun>(self, ['open', ...common, '--events', events, '--store', 'pg'])
    await analyzeEvents(url, schema)
    // Full: a discarded warm-up pair, then three measured pairs, alternating; quick: one pair.
    const warm = effort === 'quick' ? 0 : 1
    const runs = effort === 'quick' ? 1 : 3
    const pg: OpenRun[] = []
    const jsonl: OpenRun[] = []
    for (let run = 0; run < warm + runs; run++) {
      const a = await child<OpenRun>(self, ['open', ...common, '--events', events, '--store', 'pg'])
      const b = await child<OpenRun>(self, ['open', ...common, '--events', events, '--store', 'jsonl'])
      if (run < warm) continue
      pg.push(a)
      jsonl.push(b)
    }
    return {
      server,
      url: redact(url),
      effort,
      poolSize: POOL,
      append,
      follow,
      open: {
        events: openEvents,
        jsonlBytes: fill.jsonlBytes,
        tableBytes,
        fillSeconds: fill.fillSeconds,
        pgStale: side([stale], openEvents),
        pg: side(pg, openEvents),
        jsonl: side(jsonl, openEvents),
      },
      seconds: (Date.now() - started) / 1000,
    }
  } finally {
    await dropSchema(url, schema).catch((error: unknown) =>
      console.error(`bench: could not drop schema ${schema}: ${(error as Error).message}`),
    )
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')
}
