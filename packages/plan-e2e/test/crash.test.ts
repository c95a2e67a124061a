import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm, truncate } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTERRUPTED_TURN_ERROR } from '@planmode/host'
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import type { SessionEvent } from '@planmode/seams'
import { assertBuilt, boundedWork, type Work, type WorkLane } from '@planmode/testkit'
import { badQuestions, badTurnBrackets, foldPlan, openQuestionIds } from './crash-fold.js'
import { createPlanHost } from './plan-host.js'

/**
 * SIGKILL crash test across all plan layers. A child process (plain `node`
 * over the BUILT packages, see crash-child.mjs) runs a scripted host that
 * appends continuously: turns, tool calls, `/plan` selections idle and
 * mid-turn, plan reviews approved or refused by a scripted provider. The
 * parent kills it at a random moment, then reopens the session with a fresh
 * host and checks it against a plain fold of the file computed here.
 * Two lanes (own directory, own session) run side by side on two cores.
 */

const here = dirname(fileURLToPath(import.meta.url))
const childFile = join(here, 'crash-child.mjs')
const KILLS = 200
const LANES = 2
/** Kills per session before a lane moves on to a new one. */
const SESSION_ROUNDS = 20
/**
 * How long one step of a lane (a child starting, running to its kill,
 * exiting; a reopen and its checks) may take on an idle machine, where it
 * takes well under a second; times the load factor when it is checked (see
 * `boundedWork`). The test has no overall timeout: it is bounded by its
 * kills.
 */
const STEP_MS = 30_000

/** Children still running: a failed test kills them in afterAll rather than leave them writing. */
const running = new Set<ChildProcess>()

/** How a turn/end closes a turn a killed writer left open: `error` set to INTERRUPTED_TURN_ERROR, or reason `interrupted`. */
function closesInterrupted(event: SessionEvent): boolean {
  if (event.type !== 'turn/end') return false
  const data = event.data as { reason?: string; error?: string }
  return data.reason === 'interrupted' || data.error === INTERRUPTED_TURN_ERROR
}

interface Kill {
  /** The highest seq the child saw acknowledged before it died. */
  readonly acked: number
  readonly stderr: string
}

/**
 * Starts the child, kills it with SIGKILL at a random moment after it is
 * ready, resolves once it has exited. Each phase is a step of `lane`, with
 * the child's pid and how far it got.
 */
function runAndKill(lane: WorkLane, where: string, dir: string, id: string, durability: string, seed: number): Promise<Kill> {
  return new Promise((resolveKill, reject) => {
    const child = spawn(process.execPath, [childFile, dir, id, durability, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(child)
    let acked = -1
    let buffered = ''
    let stderr = ''
    let killed = false
    let ready = false
    // Half the kills after a random delay, half after a random number of acknowledged appends
    // (fewer under 'append', where every append waits for an fsync).
    const afterAcks = seed % 2 === 0 ? undefined : 1 + (seed % (durability === 'append' ? 30 : 200))
    let acks = 0
    const progress = (): string => `${acks} appends acknowledged (last seq ${acked}); stderr: ${JSON.stringify(stderr.slice(-300))}`
    const step = (doing: string): void => {
      try {
        lane.step(`${where}: child pid ${String(child.pid)} ${doing}`, progress)
      } catch (error) {
        // The work stopped (another lane failed or got stuck): end this child, and this round.
        child.kill('SIGKILL')
        reject(error)
      }
    }
    const kill = (): void => {
      if (killed) return
      killed = true
      step('SIGKILLed, waiting for its exit')
      child.kill('SIGKILL')
    }
    step("started, waiting for its 'ready' line")
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) {
        if (line === 'ready') {
          ready = true
          if (afterAcks === undefined) {
            step(`ready, to be killed ${seed % 120} ms from now`)
            setTimeout(kill, seed % 120)
          } else step(`ready, to be killed after ${afterAcks} acknowledged appends`)
          continue
        }
        acked = Number(line)
        acks += 1
      }
      if (ready && afterAcks !== undefined && acks >= afterAcks) kill()
    })
    // Until the child is reaped its pid counts as running (a live lock): wait for `exit`.
    child.on('exit', (code, signal) => {
      running.delete(child)
      if (signal !== 'SIGKILL') reject(new Error(`crash child ${where} exited with ${String(code)} before it was killed:\n${stderr}`))
      else resolveKill({ acked, stderr })
    })
  })
}

/** What the test reads from the raw file by itself: whole lines, and a last line without its newline. */
interface RawLog {
  readonly events: SessionEvent[]
  /** The file ended in a line without its newline. */
  readonly torn: boolean
}

function parseRaw(text: string): RawLog {
  const lines = text.split('\n')
  const last = lines.pop()!
  const events = lines.map((line) => JSON.parse(line) as SessionEvent)
  if (last === '') return { events, torn: false }
  // A torn last line is dropped, unless it parses whole (only its newline was lost).
  try {
    const parsed = JSON.parse(last) as SessionEvent
    if (typeof parsed === 'object' && parsed !== null && typeof parsed.seq === 'number') events.push(parsed)
  } catch {
    // dropped
  }
  return { events, torn: true }
}

interface Counts {
  kills: number
  sessions: number
  events: number
  tornNatural: number
  tornSimulated: number
  openTurnsAtKill: number
  interruptedTurnsClosed: number
  selectionsPending: number
  selectionsFromRunningCommand: number
  approvedExitsRebuilt: number
  approvedEntriesRebuilt: number
  /** Reopens whose closing turn/end committed a silent selection the killed turn left pending (§22.2). */
  silentCommittedAtOpen: number
  planModeEvents: number
  questionsOpenAtKill: number
  questionsInterrupted: number
}

async function lane(work: WorkLane, dir: string, prefix: string, rounds: number, seeds: () => number, counts: Counts): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    // A new session every SESSION_ROUNDS kills keeps each log (and each restart) small.
    const id = `${prefix}-${Math.floor(round / SESSION_ROUNDS)}`
    const seed = seeds()
    const durability = ['turn', 'never', 'append'][round % 3]!
    const where = `(lane ${id}, round ${round}, seed ${seed})`
    const { acked } = await runAndKill(
      work,
      `round ${round} of session ${id} (seed ${seed}, durability ${durability})`,
      dir,
      id,
      durability,
      seed,
    )
    counts.kills += 1
    work.step(`round ${round} of session ${id} (seed ${seed}): reopening after the kill and checking the plan state`)
    const file = join(dir, `${id}.jsonl`)
    let raw = await readFile(file, 'utf8').catch(() => '')
    if (raw.length > 0 && !raw.endsWith('\n')) counts.tornNatural += 1
    // Every fourth round also simulates what only a power loss leaves: a torn last line.
    const simulate = round % 4 === 3 && raw.length > 0
    if (simulate) {
      const lastLine = raw.slice(raw.lastIndexOf('\n', raw.length - 2) + 1)
      const cut = 1 + (seed % Math.max(1, lastLine.length - 1))
      await truncate(file, Buffer.byteLength(raw) - cut)
      raw = await readFile(file, 'utf8')
      counts.tornSimulated += 1
    }
    const expected = parseRaw(raw)
    if (!simulate)
      expect(expected.events.at(-1)?.seq ?? -1, `every acknowledged append is in the file ${where}`).toBeGreaterThanOrEqual(acked)

    // A fresh host over the same directory: the reopen must succeed.
    const host = createPlanHost(undefined, [], { dir })
    host.root.plugin(planModeInvariantPlugin)
    const sessions = host.root.require('sessions')
    const session = (await sessions.list()).includes(id) ? await sessions.open(id) : undefined
    if (session === undefined) {
      // Killed before the session file existed.
      expect(raw, where).toBe('')
      host.root.dispose()
      work.done()
      continue
    }
    // The reopened log is the whole lines of the file, then what the store
    // appended at open to close what the killed writer left open: each open
    // question settled `interrupted` (a review being asked), then, for an
    // open turn, `step/end` for an open step and `turn/end { reason: 'interrupted' }`,
    // and right after it the plan/mode of an approval or agreed entry that turn
    // left pending (SPEC §22.2: plan-core commits it at that turn end; waited for here,
    // since under durability 'append' it lands after open resolves).
    // (Compared as JSON text: a deep equality over thousands of events costs more than the kill.)
    await session.settled()
    const inFile = foldPlan(expected.events)
    const fromFile = session.events.slice(0, expected.events.length)
    expect(
      JSON.stringify(fromFile) === JSON.stringify(expected.events),
      `the reopened log starts with exactly the whole lines of the file ${where}`,
    ).toBe(true)
    const closing = session.events.slice(expected.events.length)
    const lastTurnInFile = expected.events.findLast((e) => e.type === 'turn/start' || e.type === 'turn/end')
    const openStepInFile = expected.events.findLast((e) => e.type === 'step/start' || e.type === 'step/end' || e.type === 'turn/start')
    const openQuestions = openQuestionIds(expected.events)
    if (openQuestions.length > 0) counts.questionsOpenAtKill += 1
    const settledAtOpen = closing.slice(0, openQuestions.length)
    expect(
      settledAtOpen.map((e) => [e.type, e.data]),
      `every question open in the file is settled interrupted at open, first, in ask order ${where}`,
    ).toEqual(openQuestions.map((questionId) => ['question/settled', { questionId, outcome: 'interrupted' }]))
    const closingTurn = closing.slice(openQuestions.length)
    if (lastTurnInFile?.type === 'turn/start') {
      counts.openTurnsAtKill += 1
      const types = closingTurn.map((e) => e.type)
      const silentDue = inFile.fromExit && inFile.pending !== undefined
      expect(
        types,
        `an open turn is closed at open ${where}, and a silent selection it left pending is committed right after its turn/end`,
      ).toEqual([...(openStepInFile?.type === 'step/start' ? ['step/end'] : []), 'turn/end', ...(silentDue ? ['plan/mode'] : [])])
      const turnEnd = closingTurn.findLast((e) => e.type === 'turn/end')!
      expect(closesInterrupted(turnEnd), `with reason interrupted ${where}`).toBe(true)
      if (silentDue) {
        expect(closingTurn.at(-1)!.data, `the pending selection, with its cause ${where}`).toEqual({
          active: inFile.pending,
          cause: inFile.pending ? 'model' : 'review',
        })
        counts.silentCommittedAtOpen += 1
      }
    } else {
      expect(closingTurn, `nothing else is appended at open when every turn is closed ${where}`).toEqual([])
    }
    expect(badQuestions(session.events), `every question is asked once and settled at most once ${where}`).toEqual([])
    expect(openQuestionIds(session.events), `no question is left open after the reopen ${where}`).toEqual([])
    expect(
      session.events.every((e, index) => e.seq === index),
      `seq runs 0, 1, 2, … ${where}`,
    ).toBe(true)
    if (expected.torn) {
      expect(
        host.logger.lines.some((l) => l.level === 'warn' && /torn last line|lost its newline|newline/.test(l.message)),
        where,
      ).toBe(true)
      expect((await readFile(file, 'utf8')).endsWith('\n'), `the torn tail is repaired ${where}`).toBe(true)
    }

    const folded = foldPlan(session.events)
    const agent = host.root.require('agents').create({ session })
    expect(host.root.require('planMode').get(agent), `planMode.get equals the plain fold ${where}`).toEqual(
      folded.pending === undefined ? { active: folded.active } : { active: folded.active, pending: folded.pending },
    )
    expect(host.root.require('sessionProjections').snapshot(session).values.plan, `the projection agrees ${where}`).toEqual({
      active: folded.active,
      pending: folded.projected,
    })
    if (!folded.fromExit && !folded.replaced)
      expect(folded.projected, `both meanings of pending agree ${where}`).toBe(folded.pending !== undefined)

    // Figures.
    if (folded.pending !== undefined && !folded.fromExit) counts.selectionsPending += 1
    // Counted on the file as the kill left it: an approval or entry not applied yet (§22.2 commits it at the reopen when its turn was open).
    if (inFile.fromExit && inFile.pending === false) counts.approvedExitsRebuilt += 1
    if (inFile.fromExit && inFile.pending === true) counts.approvedEntriesRebuilt += 1
    const lastRun = session.events.findLast((e) => e.type === 'command/run' && e.data.name === 'plan')
    if (
      folded.pending !== undefined &&
      lastRun !== undefined &&
      !session.events.some((e) => e.type === 'command/done' && e.data.commandId === (lastRun.data as { commandId: string }).commandId)
    ) {
      counts.selectionsFromRunningCommand += 1
    }
    // Every turn is closed: the store closed the one the kill left open.
    expect(badTurnBrackets(session.events), where).toEqual([])
    await sessions.close(session)
    host.root.dispose()
    work.done()
  }
}

let root: string
beforeAll(async () => {
  assertBuilt('crash test', ['context', 'seams', 'host', 'plan-core', 'plan-policy', 'plan-commands', 'plan-tool', 'plan-projection'])
  root = await mkdtemp(join(tmpdir(), 'plan-e2e-crash-'))
})
afterAll(async () => {
  for (const child of running) child.kill('SIGKILL')
  // beforeAll may have failed (a stale build) before creating it: `root` is then unset.
  if (root !== undefined) await rm(root, { recursive: true, force: true })
})

/** The trials: LANES lanes of KILLS / LANES kills each, then the figures over the final logs. */
async function crashTrials(work: Work): Promise<void> {
  let state = (Math.random() * 2 ** 31) | 0
  const seeds = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0)
  const lanes = Array.from({ length: LANES }, (): Counts => ({
    kills: 0,
    sessions: 0,
    events: 0,
    tornNatural: 0,
    tornSimulated: 0,
    openTurnsAtKill: 0,
    interruptedTurnsClosed: 0,
    selectionsPending: 0,
    selectionsFromRunningCommand: 0,
    approvedExitsRebuilt: 0,
    approvedEntriesRebuilt: 0,
    silentCommittedAtOpen: 0,
    planModeEvents: 0,
    questionsOpenAtKill: 0,
    questionsInterrupted: 0,
  }))
  await Promise.all(
    lanes.map((counts, index) =>
      work.lane(`lane ${index}`, (each) => lane(each, join(root, `lane-${index}`), `crash-${index}`, KILLS / LANES, seeds, counts), {
        total: KILLS / LANES,
        unit: 'kills',
      }),
    ),
  )
  work.step('reading the final logs')

  const total = { ...lanes[0]! }
  for (const counts of lanes.slice(1)) for (const key of Object.keys(total) as (keyof Counts)[]) total[key] += counts[key]
  // Over the final logs: events, plan/mode events, interrupted turns closed on restart.
  for (const [index] of lanes.entries()) {
    const laneDir = join(root, `lane-${index}`)
    for (const name of (await readdir(laneDir)).filter((file) => file.endsWith('.jsonl'))) {
      const events = parseRaw(await readFile(join(laneDir, name), 'utf8')).events
      total.sessions += 1
      total.events += events.length
      total.interruptedTurnsClosed += events.filter(closesInterrupted).length
      total.planModeEvents += events.filter((e) => e.type === 'plan/mode').length
      total.questionsInterrupted += events.filter(
        (e) => e.type === 'question/settled' && (e.data as { outcome?: unknown }).outcome === 'interrupted',
      ).length
    }
  }
  console.info(
    `crash test: ${total.kills} kills over ${total.sessions} sessions, ${total.events} events in the final logs (${total.planModeEvents} plan/mode), ` +
      `torn tails: ${total.tornNatural} left by a kill, ${total.tornSimulated} simulated (power loss) and repaired; ` +
      `${total.openTurnsAtKill} kills mid-turn, ${total.interruptedTurnsClosed} interrupted turns closed on restart; ` +
      `${total.questionsOpenAtKill} kills mid-question, ${total.questionsInterrupted} questions settled interrupted on restart; ` +
      `${total.selectionsPending} reopens with a pending /plan selection rebuilt (${total.selectionsFromRunningCommand} from a /plan still running); ` +
      `${total.approvedExitsRebuilt} approved plan reviews and ${total.approvedEntriesRebuilt} agreed entries not applied yet at the kill, ` +
      `${total.silentCommittedAtOpen} of them committed right after the turn/end that closed their interrupted turn`,
  )
  expect(total.kills).toBe(KILLS)
  expect(total.selectionsPending).toBeGreaterThan(0)
  expect(await readdir(root)).toHaveLength(LANES)
}

describe('crash safety across the plan layers (SIGKILL at random moments)', () => {
  // No overall timeout (0): every step is bounded (STEP_MS × the load factor), and the kills are counted.
  it(
    `${KILLS} kills: every reopen succeeds and holds exactly the plan state the file implies, pending /plan selections included`,
    ({ signal }) => boundedWork({ what: `crash test (${KILLS} kills in ${LANES} lanes)`, stepMs: STEP_MS, signal }, crashTrials),
    0,
  )
})
