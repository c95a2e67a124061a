import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { setup } from '@planmode/store-postgres'
import type { SessionEvent } from '@planmode/seams'
import { assertBuilt, dropSchema, freshSchemaName, pgTestUrl, scaledMs } from '@planmode/testkit'

/**
 * Followers in other processes agree with the writer. Three processes (plain
 * `node` over the BUILT packages, see follower-processes-child.mjs): a writer
 * that composes the reference host over PostgreSQL with every plan layer and
 * drives a scripted plan-mode arc through the agent loop (turns, tool calls,
 * `/plan`, `/plan <message>`, a `/plan` selected mid-turn, plan reviews kept
 * planning and approved, a model-asked entry, `/plan off`), and two followers
 * that fold the session with the same plan layers. Every process prints its
 * projection snapshot after every event; this test checks that each follower
 * saw every seq once and in order, and that its snapshot at every `asOfSeq`
 * is the writer's. The early follower follows the empty session before the
 * first append; the late one starts once the writer has written half, and
 * follows while the writer goes on.
 *
 * It also prints (does not assert) the latency from the writer's
 * acknowledged commit to a follower's projection update; see
 * {@link commitToUpdateLatencies}.
 */

const here = dirname(fileURLToPath(import.meta.url))
const childFile = join(here, 'follower-processes-child.mjs')
const PACKAGES = ['context', 'seams', 'host', 'plan-core', 'plan-policy', 'plan-commands', 'plan-tool', 'plan-projection', 'store-postgres']

/** A projection snapshot as a child printed it. */
interface Snapshot {
  readonly asOfSeq: number
  readonly values: Record<string, unknown>
}
/** An appended event (writer) or a received one (follower), with the snapshot right after it and when (wall clock, ms). */
interface EventLine extends Snapshot {
  readonly kind: 'event'
  readonly seq: number
  readonly at: number
}
type Line =
  | EventLine
  | (Snapshot & { readonly kind: 'created' })
  | { readonly kind: 'half'; readonly head: number }
  | { readonly kind: 'done'; readonly head: number; readonly events: SessionEvent[] }
  | { readonly kind: 'ready' }
  | (Snapshot & { readonly kind: 'open'; readonly seqs: number[] })
  | { readonly kind: 'final'; readonly events: SessionEvent[] }

/** A child process and the JSON lines it printed, in order. */
class Child {
  readonly lines: Line[] = []
  stderr = ''
  readonly exited: Promise<number | null>
  private readonly process: ChildProcessByStdio<Writable, Readable, Readable>
  private readonly waiting: {
    readonly kind: Line['kind']
    readonly resolve: (line: Line) => void
    readonly reject: (error: Error) => void
  }[] = []
  private exitCode: number | null | undefined

  constructor(
    readonly name: string,
    args: readonly string[],
    url: string,
  ) {
    this.process = spawn(process.execPath, [childFile, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PLANMODE_PG_URL: url },
    })
    let buffered = ''
    this.process.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const text of lines) {
        let line: Line
        try {
          line = JSON.parse(text) as Line
        } catch {
          this.stderr += `(stdout) ${text}\n`
          continue
        }
        this.lines.push(line)
        for (let index = this.waiting.length - 1; index >= 0; index--) {
          if (this.waiting[index]!.kind === line.kind) this.waiting.splice(index, 1)[0]!.resolve(line)
        }
      }
    })
    this.process.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.exited = new Promise((resolveExit) => {
      this.process.on('exit', (code) => {
        this.exitCode = code
        for (const waiter of this.waiting.splice(0))
          waiter.reject(new Error(`${this.name} exited (code ${code}) before printing ${waiter.kind}:\n${this.stderr}`))
        resolveExit(code)
      })
    })
  }

  /** The first line of `kind`, printed already or to come. */
  next<K extends Line['kind']>(kind: K): Promise<Extract<Line, { kind: K }>> {
    const seen = this.lines.find((line) => line.kind === kind)
    if (seen !== undefined) return Promise.resolve(seen as Extract<Line, { kind: K }>)
    if (this.exitCode !== undefined)
      return Promise.reject(new Error(`${this.name} exited (code ${this.exitCode}) without printing ${kind}:\n${this.stderr}`))
    return new Promise((resolveLine, reject) => this.waiting.push({ kind, resolve: resolveLine as (line: Line) => void, reject }))
  }

  send(line: string): void {
    this.process.stdin.write(`${line}\n`)
  }

  kill(): void {
    if (this.exitCode === undefined) this.process.kill('SIGKILL')
  }
}

/** The `p`-th percentile (0–100) of ascending `sorted`, nearest rank. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/**
 * Commit-to-projection latency, in ms, of every event a follower received
 * live: the follower's wall-clock time once its projections folded the event,
 * minus the writer's wall-clock time when that event's commit was
 * acknowledged. Both processes read `performance.timeOrigin +
 * performance.now()` (see the child), one clock on one machine. Events the
 * follower read while `follow()` was still catching up are left out: their
 * delay is the follower's start, not the store's.
 */
function commitToUpdateLatencies(writer: readonly EventLine[], follower: readonly Line[]): number[] {
  const acked = new Map(writer.map((line) => [line.seq, line.at]))
  const opened = follower.findIndex((line) => line.kind === 'open')
  return follower
    .slice(opened + 1)
    .filter((line): line is EventLine => line.kind === 'event')
    .map((line) => line.at - acked.get(line.seq)!)
}

function describeLatencies(name: string, latencies: readonly number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b)
  const ms = (value: number): string => `${value.toFixed(2)} ms`
  return `${name}: n=${sorted.length} min=${ms(sorted[0]!)} p50=${ms(percentile(sorted, 50))} p95=${ms(percentile(sorted, 95))} p99=${ms(percentile(sorted, 99))} max=${ms(sorted[sorted.length - 1]!)}`
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index)

let url: string | undefined
const schema = freshSchemaName('follower_processes')
const children: Child[] = []

beforeAll(async () => {
  assertBuilt('follower test', PACKAGES)
  url = pgTestUrl()
  await setup({ connection: url, schema })
})

afterAll(async () => {
  for (const child of children) child.kill()
  await Promise.all(children.map((child) => child.exited))
  // Unset when the build check refused to start.
  if (url !== undefined) await dropSchema(url, schema)
})

it(
  'followers in two other processes see every event once, in order, and agree with the writer at every asOfSeq',
  async () => {
    const id = 'followed'
    const start = (name: string, args: readonly string[]): Child => {
      const child = new Child(name, args, url!)
      children.push(child)
      return child
    }

    const writer = start('writer', ['writer', schema, id])
    const created = await writer.next('created')
    const early = start('early follower', ['follower', schema, id, 'early'])
    const earlyOpen = await early.next('open')
    writer.send('go')
    const half = await writer.next('half')
    // The late follower follows while the writer goes on: `continue` goes out as it is about to call follow().
    const late = start('late follower', ['follower', schema, id, 'late'])
    await late.next('ready')
    writer.send('continue')
    const done = await writer.next('done')
    expect(await writer.exited).toBe(0)
    for (const follower of [early, late]) follower.send(`until ${done.head}`)
    const finals = await Promise.all([early.next('final'), late.next('final')])
    expect(await early.exited).toBe(0)
    expect(await late.exited).toBe(0)
    // Nothing logged a warning or an error (a projection that threw while folding would, and fold on regardless).
    for (const child of [writer, early, late]) expect(child.stderr, `${child.name} stderr`).toBe('')

    // The writer appended every seq once, in order, and printed its snapshot as of each.
    const written = writer.lines.filter((line): line is EventLine => line.kind === 'event')
    expect(written.map((line) => line.seq)).toEqual(range(0, done.head))
    expect(written.every((line) => line.asOfSeq === line.seq)).toBe(true)
    expect(done.events.map((event) => event.seq)).toEqual(range(0, done.head))
    const byType = new Set(done.events.map((event) => event.type))
    for (const type of ['plan/mode', 'plan/review', 'command/run', 'tool/result']) expect(byType).toContain(type)
    const writerAt = new Map<number, Snapshot>([[created.asOfSeq, created], ...written.map((line) => [line.seq, line] as const)])
    expect(created.asOfSeq).toBe(-1)

    const agree = (name: string, lines: readonly Line[]): void => {
      const open = lines.find((line) => line.kind === 'open')!
      const opened = lines.indexOf(open)
      const received = lines.filter((line): line is EventLine => line.kind === 'event')
      const duringFollow = lines.slice(0, opened).filter((line): line is EventLine => line.kind === 'event')
      // What follow() read at once (never announced), then every announced event: each seq once, in order.
      const loaded = open.seqs.slice(0, open.seqs.length - duringFollow.length)
      expect(open.seqs.slice(loaded.length), `${name}: announced while following`).toEqual(duringFollow.map((line) => line.seq))
      expect([...loaded, ...received.map((line) => line.seq)], `${name}: seqs seen`).toEqual(range(0, done.head))
      // Every snapshot, the first one included, is the writer's at that asOfSeq.
      const snapshots = lines.filter(
        (line): line is Extract<Line, { kind: 'event' | 'open' }> => line.kind === 'event' || line.kind === 'open',
      )
      for (const snapshot of snapshots) {
        const mine = writerAt.get(snapshot.asOfSeq)
        expect(mine, `${name}: the writer printed no snapshot as of ${snapshot.asOfSeq}`).toBeDefined()
        expect(snapshot.values, `${name}: snapshot as of seq ${snapshot.asOfSeq}`).toStrictEqual(mine!.values)
      }
      for (const line of received) expect(line.asOfSeq, `${name}: snapshot after seq ${line.seq}`).toBe(line.seq)
    }
    agree('early', early.lines)
    agree('late', late.lines)

    // The early follower followed the empty session: it saw every event live.
    expect(earlyOpen.seqs).toEqual([])
    expect(earlyOpen.values).toStrictEqual(created.values)
    // The late one started after half the arc, and agreed from its first snapshot on (checked above).
    const lateFirst = late.lines.find((line) => line.kind === 'event' || line.kind === 'open') as Snapshot
    expect(lateFirst.asOfSeq).toBeGreaterThanOrEqual(half.head)

    // Both followers end with the writer's events, which are the table's rows.
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const { rows } = await client
      .query<{ seq: string; time: number; type: string; data: unknown }>(
        `SELECT seq, time, type, data FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`,
        [id],
      )
      .finally(() => client.end())
    const table = rows.map((row) => ({ type: row.type, seq: Number(row.seq), time: row.time, data: row.data }))
    expect(done.events).toStrictEqual(table)
    for (const final of finals) expect(final.events).toStrictEqual(table)

    console.log(
      [
        `commit → follower projection update, ${done.head + 1} events (late follower started at seq ${lateFirst.asOfSeq}):`,
        describeLatencies('  early follower', commitToUpdateLatencies(written, early.lines)),
        describeLatencies('  late follower ', commitToUpdateLatencies(written, late.lines)),
      ].join('\n'),
    )
  },
  scaledMs(60_000),
)
