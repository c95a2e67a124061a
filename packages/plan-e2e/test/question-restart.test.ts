import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { questionsProjectionPlugin } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { assertBuilt, boundedWork, type WorkLane } from '@planmode/testkit'
import { badQuestions, badTurnBrackets, openQuestionIds } from './crash-fold.js'
import { createPlanHost } from './plan-host.js'

/**
 * A review question left open by a killed process (SIGKILL) is settled
 * `interrupted` by the writer that reopens the session, before the step and
 * the turn it was asked in are closed. Each round a child process (plain
 * `node` over the BUILT packages, question-child.mjs) reopens the session,
 * enters plan mode, presents a plan and waits on its review; the parent kills
 * it once the question is logged, reopens the session with a fresh host and
 * checks the log against the file. A few kills, bounded by their work.
 */

const here = dirname(fileURLToPath(import.meta.url))
const childFile = join(here, 'question-child.mjs')
const KILLS = 3
/** How long one step (a child starting and asking, exiting; a reopen) may take on an idle machine, times the load factor. */
const STEP_MS = 30_000

const running = new Set<ChildProcess>()
let dir: string
beforeAll(async () => {
  assertBuilt('question restart test', [
    'context',
    'seams',
    'host',
    'plan-core',
    'plan-policy',
    'plan-commands',
    'plan-tool',
    'plan-projection',
  ])
  dir = await mkdtemp(join(tmpdir(), 'plan-e2e-question-'))
})
afterAll(async () => {
  for (const child of running) child.kill('SIGKILL')
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Starts the child, SIGKILLs it once it printed `asked <id>`, resolves with that id once it has exited. */
function askAndKill(lane: WorkLane, round: number, id: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childFile, dir, id], { stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(child)
    let stdout = ''
    let stderr = ''
    let asked: string | undefined
    const detail = (): string => `stdout ${JSON.stringify(stdout.slice(-200))}; stderr ${JSON.stringify(stderr.slice(-300))}`
    lane.step(`round ${round}: child pid ${String(child.pid)} started, waiting for its review question`, detail)
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const line = /^asked (\S+)$/m.exec(stdout)
      if (line === null || asked !== undefined) return
      asked = line[1]!
      lane.step(`round ${round}: child pid ${String(child.pid)} asked ${asked}, SIGKILLed, waiting for its exit`, detail)
      child.kill('SIGKILL')
    })
    child.on('exit', (code, signal) => {
      running.delete(child)
      if (signal === 'SIGKILL' && asked !== undefined) resolve(asked)
      else
        reject(
          new Error(`question child of round ${round} exited with ${String(code ?? signal)} before it was killed mid-review: ${detail()}`),
        )
    })
  })
}

const lines = (text: string): SessionEvent[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SessionEvent)

describe('a review question open when its process is killed', () => {
  it(
    `${KILLS} kills mid-review: each reopen settles the question interrupted, then closes its step and turn`,
    ({ signal }) =>
      boundedWork({ what: `question restart test (${KILLS} kills)`, stepMs: STEP_MS, signal }, async (work) => {
        const id = 'review-kills'
        for (let round = 1; round <= KILLS; round += 1) {
          const questionId = await askAndKill(work, round, id)
          work.step(`round ${round}: reopening after the kill and checking the log`)
          const file = lines(await readFile(join(dir, `${id}.jsonl`), 'utf8'))
          const asked = file.findLast((event) => event.type === 'question/asked')!
          expect(asked.data, `round ${round}: the file holds the review as asked`).toMatchObject({
            questionId,
            question: [{ id: 'plan-review', header: 'Plan review' }],
          })
          expect(openQuestionIds(file), `round ${round}: the kill left exactly the review open`).toEqual([questionId])

          const host = createPlanHost(undefined, [], { dir })
          host.root.plugin(questionsProjectionPlugin)
          const sessions = host.root.require('sessions')
          const session = await sessions.open(id)
          expect(JSON.stringify(session.events.slice(0, file.length)), `round ${round}: the reopened log starts with the file`).toBe(
            JSON.stringify(file),
          )
          const lastStep = file.findLast((event) => event.type === 'step/start')!.data as { turn: number; step: number }
          expect(
            session.events.slice(file.length).map((event) => [event.type, event.data]),
            `round ${round}: what the reopen appended`,
          ).toEqual([
            ['question/settled', { questionId, outcome: 'interrupted' }],
            ['step/end', { turn: lastStep.turn, step: lastStep.step }],
            ['turn/end', { turn: lastStep.turn, reason: 'interrupted' }],
          ])
          expect(host.root.require('sessionProjections').snapshot(session).values.questions, `round ${round}: no question waits`).toEqual({
            open: [],
          })
          expect(badQuestions(session.events), `round ${round}`).toEqual([])
          expect(badTurnBrackets(session.events), `round ${round}`).toEqual([])
          // Every review so far was asked once and settled interrupted once.
          const interrupted = session.events.filter(
            (event) => event.type === 'question/settled' && (event.data as { outcome: string }).outcome === 'interrupted',
          )
          expect(interrupted, `round ${round}`).toHaveLength(round)
          await sessions.close(session)
          host.root.dispose()
          work.done()
        }
      }),
    0,
  )
})
