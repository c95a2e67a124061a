import { spawn, type ChildProcess } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin, INTERRUPTED_TURN_ERROR } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProjectionPlugin } from '@planmode/plan-projection'
import type { SessionEvent } from '@planmode/seams'
import { asPostgresStore, postgresSessions, setup, type PostgresSessionStore } from '@planmode/store-postgres'
import { assertBuilt, boundedWork, dropSchema, freshSchemaName, PG_URL_ENV, pgTestUrl, type Work, type WorkLane } from '@planmode/testkit'
import { badQuestions, badTurnBrackets, type FoldedPlan, foldPlan, openQuestionIds } from './crash-fold.js'

/**
 * SIGKILL crash and failover trials on PostgreSQL, the twin of crash.test.ts.
 * A child process (plain `node` over the BUILT packages, see
 * pg-crash-child.mjs) writes a session through `@planmode/store-postgres`:
 * turns, tool calls, `/plan` idle and mid-turn, plan reviews approved or
 * refused, agreed entries. It is killed at a random moment, or kills itself
 * right after a targeted event is acknowledged; the NEXT child (another
 * process) then takes the lease, reopens from the log and goes on. The
 * parent reads the rows with a plain query and checks every acknowledged
 * event is there, seqs run 0..n-1, and the plan state the new writer rebuilt
 * is the plain fold of the rows it reopened (crash-fold.ts).
 * Two lanes (own session each) run side by side; the file has its own schema.
 */

const here = dirname(fileURLToPath(import.meta.url))
const childFile = join(here, 'pg-crash-child.mjs')
const KILLS = 100
const LANES = 2
/** Kills per session before a lane moves on to a new one. */
const SESSION_ROUNDS = 25
/**
 * Where the child kills itself, round by round: a /plan logged without its
 * command/done, an approved review or an agreed entry not applied yet, or
 * nowhere (the parent kills it at a random moment).
 */
const TARGETS = ['plan', 'none', 'exit', 'none', 'plan', 'entry', 'exit', 'none'] as const
type Target = (typeof TARGETS)[number]
/**
 * A targeted child that has not killed itself after this many acknowledged
 * events is killed by the parent: counted in events, not in ms, so a loaded
 * machine hits the targets as often as an idle one.
 */
const TARGET_FALLBACK_ACKS = 400
/**
 * How long one step (a writer opening the session, running to its kill,
 * dying; the checks of a reopen) may take on an idle machine, where it
 * takes well under a second; times the load factor when it is checked (see
 * `boundedWork`). The tests have no overall timeout: they are bounded by
 * their kills.
 */
const STEP_MS = 30_000

/** How a turn/end closes a turn a killed writer left open: `error` set to INTERRUPTED_TURN_ERROR, or reason `interrupted`. */
function closesInterrupted(event: SessionEvent): boolean {
  if (event.type !== 'turn/end') return false
  const data = event.data as { reason?: string; error?: string }
  return data.reason === 'interrupted' || data.error === INTERRUPTED_TURN_ERROR
}

/** What a child printed once it held the lease. */
interface Opened {
  /** The seq of the last event it reopened, -1 for an empty log. */
  readonly head: number
  readonly waitedMs: number
  readonly retries: number
  readonly epoch: number
  /** `planMode.get(agent)` right after the reopen. */
  readonly state: { active: boolean; pending?: boolean }
  /** The projection's `plan` value right after the reopen. */
  readonly projected: { active: boolean; pending: boolean }
}

interface Child {
  readonly holder: string
  readonly pid: number | undefined
  /** Every seq the child printed as acknowledged, in order. */
  readonly acks: number[]
  /** Resolves when the child printed `locked` (its first open found the lease held). */
  readonly locked: Promise<void>
  readonly opened: Promise<Opened>
  /** Resolves once the child is gone and its output read: its signal, and when it exited (performance.now()). */
  readonly gone: Promise<{ code: number | null; signal: NodeJS.Signals | null; exitedAt: number; stderr: string }>
  /** Resolves once the child printed at least `count` acknowledged seqs. */
  acked(count: number): Promise<void>
  /** How far it got, for a report: its acks, whether it was refused, its last stderr. */
  progress(): string
  /** The process has exited (its output may still be draining). */
  exited(): boolean
  kill(): void
}

/** Children still running: a failed test kills them in afterAll rather than leave them writing. */
const running = new Set<ChildProcess>()

function startChild(schema: string, id: string, holder: string, seed: number, target: Target, report = false): Child {
  const child = spawn(process.execPath, [childFile, schema, id, holder, String(seed), target, ...(report ? ['report'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, [PG_URL_ENV]: pgTestUrl() },
  })
  running.add(child)
  const acks: number[] = []
  const ackWaiters: { count: number; resolve: () => void }[] = []
  let onLocked!: () => void
  const locked = new Promise<void>((resolveLocked) => (onLocked = resolveLocked))
  let onOpened!: (opened: Opened) => void
  let openFailed!: (error: Error) => void
  const opened = new Promise<Opened>((resolveOpened, reject) => ((onOpened = resolveOpened), (openFailed = reject)))
  opened.catch(() => {})
  let buffered = ''
  let stderr = ''
  let exitedAt = 0
  let wasLocked = false
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) {
      if (line === 'locked') {
        wasLocked = true
        onLocked()
      } else if (line.startsWith('open ')) onOpened(JSON.parse(line.slice(5)) as Opened)
      else acks.push(Number(line))
    }
    for (let index = ackWaiters.length - 1; index >= 0; index--) {
      if (acks.length >= ackWaiters[index]!.count) ackWaiters.splice(index, 1)[0]!.resolve()
    }
  })
  child.on('exit', () => {
    exitedAt = performance.now()
    running.delete(child)
  })
  const gone = new Promise<{ code: number | null; signal: NodeJS.Signals | null; exitedAt: number; stderr: string }>((resolveGone) => {
    // `close` comes after `exit` and after stdout is drained: every printed ack is in `acks`.
    child.on('close', (code, signal) => {
      openFailed(new Error(`child ${holder} (seed ${seed}) ended (${String(code ?? signal)}) before it opened the session:\n${stderr}`))
      for (const waiter of ackWaiters.splice(0)) waiter.resolve()
      resolveGone({ code, signal, exitedAt, stderr })
    })
  })
  return {
    holder,
    pid: child.pid,
    acks,
    locked,
    opened,
    gone,
    acked: (count) =>
      acks.length >= count || child.exitCode !== null
        ? Promise.resolve()
        : new Promise((resolveAcked) => ackWaiters.push({ count, resolve: resolveAcked })),
    progress: () =>
      `${acks.length} events acknowledged (last seq ${acks.at(-1) ?? -1})${wasLocked ? ', refused the lease at first' : ''}` +
      `${child.exitCode !== null || child.signalCode !== null ? `, exited (${String(child.exitCode ?? child.signalCode)})` : ''}; stderr: ${JSON.stringify(stderr.slice(-300))}`,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolveDelay) => setTimeout(resolveDelay, ms))

/**
 * Kills `child` after a random delay or a random number of acks (untargeted),
 * or only if it has not killed itself at its target within
 * TARGET_FALLBACK_ACKS acknowledged events. Resolves with whether the child
 * killed itself.
 */
async function killLater(child: Child, seed: number, target: Target): Promise<boolean> {
  await child.opened
  if (target !== 'none') {
    // Resolves at that many acks, or once the child is gone (it killed itself).
    await child.acked(child.acks.length + TARGET_FALLBACK_ACKS)
    if (child.exited()) return true
  } else if (seed % 2 === 0) await Promise.race([delay(seed % 150), child.gone])
  else await child.acked(child.acks.length + 1 + (seed % 150))
  child.kill()
  return false
}

/**
 * Resolves with how long after `exitedAt` the database stopped showing
 * `holder` holding the lease of `id`; stops (rejects) when `signal` aborts.
 */
async function leaseReleasedAfter(
  store: PostgresSessionStore,
  id: string,
  holder: string,
  exitedAt: number,
  signal: AbortSignal,
): Promise<number> {
  for (;;) {
    signal.throwIfAborted()
    const lease = await store.lease(id)
    if (!lease.held || lease.holder !== holder) return performance.now() - exitedAt
  }
}

/** The session's rows, read with a plain query, in seq order. */
async function readRows(client: pg.Client, schema: string, id: string): Promise<SessionEvent[]> {
  const { rows } = await client.query<{ seq: string; time: number; type: string; data: unknown }>(
    `SELECT seq, time, type, data FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`,
    [id],
  )
  return rows.map((row) => ({ type: row.type, seq: Number(row.seq), time: row.time, data: row.data }) as SessionEvent)
}

/** A new session, its lease given back at once: the children reopen it. */
async function newSession(store: PostgresSessionStore, id: string): Promise<void> {
  const session = await store.create({ id })
  await store.close(session)
}

interface Counts {
  kills: number
  /** Kills the child made itself, at its target. */
  selfKills: number
  sessions: number
  events: number
  openTurnsAtKill: number
  interruptedTurnsClosed: number
  lockedAtOpen: number
  /** Reopens whose rebuilt plan state holds a `/plan` logged without its command/done (SPEC §9). */
  runningPlanRebuilt: number
  /** Reopens with any pending `/plan` selection rebuilt (running or done, not applied). */
  selectionsPending: number
  approvedExitsRebuilt: number
  approvedEntriesRebuilt: number
  leaseReleaseMs: number[]
  failoverMs: number[]
}

const newCounts = (): Counts => ({
  kills: 0,
  selfKills: 0,
  sessions: 0,
  events: 0,
  openTurnsAtKill: 0,
  interruptedTurnsClosed: 0,
  lockedAtOpen: 0,
  runningPlanRebuilt: 0,
  selectionsPending: 0,
  approvedExitsRebuilt: 0,
  approvedEntriesRebuilt: 0,
  leaseReleaseMs: [],
  failoverMs: [],
})

/**
 * Checks what a new writer reopened against the rows: every event its
 * predecessor acknowledged is there, seqs run 0..n-1, and its rebuilt plan
 * state is the plain fold of the rows up to the head it reopened.
 */
function checkReopen(
  rows: readonly SessionEvent[],
  opened: Opened,
  previous: Child | undefined,
  where: string,
  counts: Counts,
): FoldedPlan {
  expect(
    rows.every((event, index) => event.seq === index),
    `seqs run 0, 1, 2, … with no gap and no duplicate ${where}`,
  ).toBe(true)
  expect(opened.head, `the new writer reopened at most what is committed ${where}`).toBeLessThan(rows.length)
  if (previous !== undefined) {
    const lastAck = previous.acks.at(-1) ?? -1
    expect(opened.head, `the new writer reopened every event its predecessor acknowledged ${where}`).toBeGreaterThanOrEqual(lastAck)
  }
  const reopened = rows.slice(0, opened.head + 1)
  const folded = foldPlan(reopened)
  expect(opened.state, `planMode.get after the failover equals the plain fold of the rows ${where}`).toEqual(
    folded.pending === undefined ? { active: folded.active } : { active: folded.active, pending: folded.pending },
  )
  expect(opened.projected, `the projection after the failover agrees ${where}`).toEqual({
    active: folded.active,
    pending: folded.projected,
  })
  if (!folded.fromExit && !folded.replaced)
    expect(folded.projected, `both meanings of pending agree ${where}`).toBe(folded.pending !== undefined)

  if (opened.retries > 0) counts.lockedAtOpen += 1
  if (folded.pending !== undefined && !folded.fromExit) counts.selectionsPending += 1
  // What the kill hit is read from what the dead writer acknowledged: since SPEC §22.2 the next writer's open
  // commits an approval the interrupted turn left waiting, so the reopened rows rarely still show it pending.
  const left = previous === undefined ? folded : foldPlan(rows.slice(0, (previous.acks.at(-1) ?? -1) + 1))
  if (left.fromExit && left.pending === false) counts.approvedExitsRebuilt += 1
  if (left.fromExit && left.pending === true) counts.approvedEntriesRebuilt += 1
  const lastRun = reopened.findLast((e) => e.type === 'command/run' && e.data.name === 'plan')
  if (
    folded.pending !== undefined &&
    !folded.fromExit &&
    lastRun !== undefined &&
    !reopened.some((e) => e.type === 'command/done' && e.data.commandId === (lastRun.data as { commandId: string }).commandId)
  ) {
    counts.runningPlanRebuilt += 1
  }
  const lastTurnEvent = reopened.findLast((e) => e.type === 'turn/start' || e.type === 'turn/end')
  if (lastTurnEvent?.type === 'turn/start') counts.openTurnsAtKill += 1
  return folded
}

/** Waits for `promise` as a step of `lane`: what it waits for, which child (pid) and how far the child got. */
function waitOn<T>(lane: WorkLane, promise: Promise<T>, what: string, child?: Child): Promise<T> {
  return lane.wait(promise, child === undefined ? what : `${what}: child pid ${String(child.pid)} (${child.holder})`, child?.progress)
}

/**
 * One session: `rounds` writers, each killed, each reopened by the next one
 * (a new process), then a last child that only reopens and reports.
 */
async function failovers(lane: WorkLane, id: string, rounds: number, seeds: () => number, counts: Counts): Promise<void> {
  await lane.wait(newSession(store, id), `creating session ${id}`)
  counts.sessions += 1
  let previous: { child: Child; exitedAt: number; epoch: number } | undefined
  for (let round = 0; round <= rounds; round++) {
    const seed = seeds()
    const report = round === rounds
    const target = report ? 'none' : TARGETS[(seed >>> 8) % TARGETS.length]!
    const where = `(session ${id}, round ${round}, seed ${seed}, target ${target})`
    // The next writer starts at once; the parent meanwhile watches the dead one's lease go.
    const child = startChild(schema, id, `${id}-w${round}`, seed, target, report)
    const released =
      previous === undefined ? undefined : leaseReleasedAfter(store, id, previous.child.holder, previous.exitedAt, lane.signal)
    released?.catch(() => {})
    const opened = await waitOn(lane, child.opened, `the writer of ${where} opening the session`, child)
    if (previous !== undefined) {
      counts.leaseReleaseMs.push(await waitOn(lane, released!, `the lease of ${previous.child.holder} showing released ${where}`))
      counts.failoverMs.push(performance.now() - previous.exitedAt)
    }
    const rows = await waitOn(lane, readRows(raw, schema, id), `reading the rows ${where}`)
    lane.step(`checking the reopen ${where}`)
    checkReopen(rows, opened, previous?.child, where, counts)
    if (previous !== undefined) expect(opened.epoch, `the new writer holds the next lease ${where}`).toBe(previous.epoch + 1)
    if (report) {
      const { code, stderr } = await waitOn(lane, child.gone, `the reporting child of ${where} exiting`, child)
      expect(code, `the reporting child ends cleanly ${where}: ${stderr}`).toBe(0)
      break
    }
    const killing = killLater(child, seed, target)
    const gone = await waitOn(
      lane,
      child.gone,
      `the writer of ${where} running until ${target === 'none' ? 'the parent kills it' : `it kills itself at its target (or ${TARGET_FALLBACK_ACKS} acks)`}, then dying`,
      child,
    )
    if (await killing) counts.selfKills += 1
    expect(gone.signal, `the child was SIGKILLed ${where}: ${gone.stderr}`).toBe('SIGKILL')
    expect(
      child.acks.every((seq) => seq > opened.head),
      `the writer wrote only after the head it reopened ${where}`,
    ).toBe(true)
    counts.kills += 1
    lane.done()
    previous = { child, exitedAt: gone.exitedAt, epoch: opened.epoch }
  }
  const rows = await waitOn(lane, readRows(raw, schema, id), `reading the final rows of session ${id}`)
  // Every turn but the last is closed: each writer closed the turn its predecessor left open.
  expect(badTurnBrackets(rows), `(session ${id})`).toEqual([])
  // Every question is settled once: each writer settled, as interrupted, the questions its predecessor left open.
  expect(badQuestions(rows), `(session ${id})`).toEqual([])
  expect(openQuestionIds(rows), `no question is left open by the last reopen (session ${id})`).toEqual([])
  counts.events += rows.length
  counts.interruptedTurnsClosed += rows.filter(closesInterrupted).length
}

function summary(values: readonly number[]): string {
  if (values.length === 0) return 'n/a'
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number): string => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1)
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (n=${sorted.length})`
}

function seeder(): () => number {
  let state = (Math.random() * 2 ** 31) | 0
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0)
}

const schema = freshSchemaName('pg_crash')
let root: Context
let store: PostgresSessionStore
let raw: pg.Client
beforeAll(async () => {
  assertBuilt('pg crash test', [
    'context',
    'seams',
    'host',
    'plan-core',
    'plan-policy',
    'plan-commands',
    'plan-tool',
    'plan-projection',
    'store-postgres',
  ])
  await setup({ connection: pgTestUrl(), schema })
  root = new Context()
  root.plugin(hostPlugin, {
    sessions: postgresSessions({ connection: pgTestUrl(), schema, holder: 'parent' }),
    model: createScriptedModel([]),
  })
  root.plugin(planCorePlugin)
  root.plugin(planProjectionPlugin)
  store = asPostgresStore(root.require('sessions'))!
  raw = new pg.Client({ connectionString: pgTestUrl() })
  await raw.connect()
})
afterAll(async () => {
  for (const child of running) child.kill('SIGKILL')
  await store?.end()
  await raw?.end()
  await dropSchema(pgTestUrl(), schema)
})

/** LANES lanes of failovers, KILLS / LANES kills each, then the figures. */
async function failoverTrials(work: Work): Promise<void> {
  const seeds = seeder()
  const lanes = Array.from({ length: LANES }, newCounts)
  await Promise.all(
    lanes.map((counts, lane) =>
      work.lane(
        `lane ${lane}`,
        async (each) => {
          for (let done = 0, part = 0; done < KILLS / LANES; done += SESSION_ROUNDS, part++) {
            await failovers(each, `pg-crash-${lane}-${part}`, Math.min(SESSION_ROUNDS, KILLS / LANES - done), seeds, counts)
          }
        },
        { total: KILLS / LANES, unit: 'kills' },
      ),
    ),
  )
  const total = newCounts()
  for (const counts of lanes) {
    for (const key of Object.keys(total) as (keyof Counts)[]) {
      if (Array.isArray(total[key])) (total[key] as number[]).push(...(counts[key] as number[]))
      else (total[key] as number) += counts[key] as number
    }
  }
  console.info(
    `pg crash test: ${total.kills} kills (${total.selfKills} by the child at its target) over ${total.sessions} sessions, ${total.events} events in the final rows; ` +
      `${total.openTurnsAtKill} kills mid-turn, ${total.interruptedTurnsClosed} interrupted turns closed by the next writer; ` +
      `${total.runningPlanRebuilt} reopens rebuilt a pending /plan still running (command/run without command/done), ${total.selectionsPending} any pending /plan; ` +
      `${total.approvedExitsRebuilt} approved reviews and ${total.approvedEntriesRebuilt} agreed entries not applied yet at the kill; ` +
      `${total.lockedAtOpen} next writers found the lease still held and waited. ` +
      `Lease gone after SIGKILL: ${summary(total.leaseReleaseMs)}; kill to the next process writing: ${summary(total.failoverMs)}`,
  )
  expect(total.kills).toBe(KILLS)
  expect(total.runningPlanRebuilt, 'the trials hit a /plan logged without its command/done').toBeGreaterThan(0)
  expect(total.approvedExitsRebuilt, 'the trials hit an approved review not applied yet').toBeGreaterThan(0)
}

/** A follower kept open across ROUNDS writers, each killed; the follower's events always equal the rows. */
async function followerTrials(work: Work): Promise<void> {
  const id = 'pg-follow'
  const seeds = seeder()
  const counts = newCounts()
  await waitOn(work, newSession(store, id), `creating session ${id}`)
  const follower = await waitOn(work, store.follow(id), `following session ${id}`)
  const announced: number[] = []
  root.on('session/event', ({ session, event }) => {
    if (session === follower) announced.push(event.seq)
  })
  const projections = root.require('sessionProjections')
  const agree = async (rows: readonly SessionEvent[], upTo: number, where: string): Promise<void> => {
    if (upTo >= 0)
      await waitOn(work, follower.reached(upTo), `the follower reaching seq ${upTo} ${where} (it holds ${follower.events.length} events)`)
    expect(
      JSON.stringify(follower.events.slice(0, upTo + 1)) === JSON.stringify(rows.slice(0, upTo + 1)),
      `the follower's events are the rows ${where}`,
    ).toBe(true)
    const folded = foldPlan(follower.events)
    expect(projections.snapshot(follower).values.plan, `the follower's projection folds what it follows ${where}`).toEqual({
      active: folded.active,
      pending: folded.projected,
    })
  }
  // The session is new: the follower started empty and must see every commit of every writer.
  const ROUNDS = 6
  let previous: Child | undefined
  for (let round = 0; round <= ROUNDS; round++) {
    const seed = seeds()
    const target = round === ROUNDS ? 'none' : TARGETS[round % TARGETS.length]!
    const where = `(followed session, round ${round}, seed ${seed}, target ${target})`
    const child = startChild(schema, id, `${id}-w${round}`, seed, target, round === ROUNDS)
    const opened = await waitOn(work, child.opened, `the writer of ${where} opening the session`, child)
    const rows = await waitOn(work, readRows(raw, schema, id), `reading the rows ${where}`)
    checkReopen(rows, opened, previous, where, counts)
    // Everything the dead writer acknowledged reached the follower, and nothing else before the new head.
    await agree(rows, opened.head, where)
    if (round === ROUNDS) {
      expect((await waitOn(work, child.gone, `the reporting child of ${where} exiting`, child)).code, where).toBe(0)
      break
    }
    void killLater(child, seed, target)
    const gone = await waitOn(work, child.gone, `the writer of ${where} running until it is killed, then dying`, child)
    expect(gone.signal, where).toBe('SIGKILL')
    counts.kills += 1
    work.done()
    const lastAck = child.acks.at(-1) ?? -1
    await agree(
      await waitOn(work, readRows(raw, schema, id), `reading the rows ${where}, after the kill`),
      lastAck,
      `${where}, after the kill`,
    )
    previous = child
  }
  const rows = await waitOn(work, readRows(raw, schema, id), 'reading the final rows')
  await waitOn(
    work,
    follower.reached(rows.length - 1),
    `the follower reaching the last row, seq ${rows.length - 1} (it holds ${follower.events.length} events)`,
  )
  expect(JSON.stringify(follower.events) === JSON.stringify(rows), 'the follower holds exactly the rows').toBe(true)
  expect(announced, 'the follower announced every commit of every writer once, in order').toEqual(rows.map((event) => event.seq))
  expect(counts.kills).toBe(ROUNDS)
  await waitOn(work, store.close(follower), 'closing the follower')
}

/** PAIRS pairs of processes opening one session at once: one writes, the other waits LOCKED and takes over when the writer dies. */
async function pairTrials(work: Work): Promise<void> {
  const seeds = seeder()
  const counts = newCounts()
  const waits: number[] = []
  const PAIRS = 3
  for (let pair = 0; pair < PAIRS; pair++) {
    const id = `pg-pair-${pair}`
    await waitOn(work, newSession(store, id), `creating session ${id}`)
    const [a, b] = [startChild(schema, id, `${id}-a`, seeds(), 'none'), startChild(schema, id, `${id}-b`, seeds(), 'none')]
    const both = (): string => `${a.holder}: pid ${String(a.pid)}, ${a.progress()}; ${b.holder}: pid ${String(b.pid)}, ${b.progress()}`
    const first = await work.wait(
      Promise.race([a.opened.then(() => a), b.opened.then(() => b)]),
      `a writer of ${id} opening the session`,
      both,
    )
    const second = first === a ? b : a
    // The other one found the lease held, and keeps waiting while the writer lives.
    await work.wait(second.locked, `the second process of ${id} being refused`, both)
    await work.wait(first.acked(30), `the writer of ${id} acknowledging 30 events`, both)
    expect(await store.lease(id), `the lease names the one writer (${id})`).toMatchObject({ held: true, holder: first.holder })
    expect(second.acks, `the refused process wrote nothing while the writer lived (${id})`).toEqual([])
    first.kill()
    const gone = await waitOn(work, first.gone, `the writer of ${id} dying after its SIGKILL`, first)
    expect(gone.signal, gone.stderr).toBe('SIGKILL')
    counts.kills += 1
    const opened = await waitOn(work, second.opened, `the waiting process of ${id} taking over`, second)
    waits.push(performance.now() - gone.exitedAt)
    expect(opened.retries, `the second process was refused before it opened (${id})`).toBeGreaterThan(0)
    expect(opened.epoch, `the takeover is the next lease (${id})`).toBe((await first.opened).epoch + 1)
    checkReopen(await waitOn(work, readRows(raw, schema, id), `reading the rows of ${id}`), opened, first, `(${id})`, counts)
    await waitOn(work, second.acked(10), `the new writer of ${id} acknowledging 10 events`, second)
    second.kill()
    await waitOn(work, second.gone, `the new writer of ${id} dying after its SIGKILL`, second)
    counts.kills += 1
    work.done()
    expect(
      first.acks.every((seq) => seq <= opened.head) && second.acks.every((seq) => seq > opened.head),
      `the two writers never interleave (${id})`,
    ).toBe(true)
    const check = startChild(schema, id, `${id}-check`, seeds(), 'none', true)
    const checked = await waitOn(work, check.opened, `the check of ${id} opening the session`, check)
    checkReopen(
      await waitOn(work, readRows(raw, schema, id), `reading the rows of ${id}`),
      checked,
      second,
      `(${id}, after the takeover)`,
      counts,
    )
    expect((await waitOn(work, check.gone, `the check of ${id} exiting`, check)).code).toBe(0)
  }
  console.info(`pg crash test: a waiting process took the lease ${summary(waits)} after the writer's SIGKILL`)
  expect(counts.kills).toBe(2 * PAIRS)
}

// No overall timeouts (0): every step is bounded (STEP_MS × the load factor), and the kills are counted.
describe('crash safety and failover on PostgreSQL (SIGKILL at random moments, the next process takes over)', () => {
  it(
    `${KILLS} kills: each next writer reopens every acknowledged event and exactly the plan state the rows imply`,
    ({ signal }) => boundedWork({ what: `pg crash test (${KILLS} kills in ${LANES} lanes)`, stepMs: STEP_MS, signal }, failoverTrials),
    0,
  )

  it(
    'a follower in another process stays open across writers and kills, and its events always equal the rows',
    ({ signal }) => boundedWork({ what: 'pg crash test (a follower across 6 kills)', stepMs: STEP_MS, signal }, followerTrials),
    0,
  )

  it(
    'two processes opening one session at once: exactly one writes, the other gets LOCKED and takes over only when the writer dies',
    ({ signal }) => boundedWork({ what: 'pg crash test (3 pairs of writers)', stepMs: STEP_MS, signal }, pairTrials),
    0,
  )
})
