import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OpenAsks } from '@planmode/seams'
import { setup } from '@planmode/store-postgres'
import { assertBuilt, dropSchema, freshSchemaName, pgTestUrl } from '@planmode/testkit'

/**
 * `planmode` as a user runs it: the built bin, a child process of its own,
 * against a real writer in another child process (the reference host with
 * plan-core and plan-tool, its scripted model presenting a plan with
 * exit_plan_mode and the review waiting). Over a JSONL session folder
 * (the local channel) and over PostgreSQL.
 */

const here = dirname(fileURLToPath(import.meta.url))
const bin = join(here, '..', 'dist', 'bin.js')
const writerFile = join(here, 'review-writer.mjs')
const running = new Set<ChildProcess>()
let dir: string
let schema: string

beforeAll(async () => {
  assertBuilt('planmode cli test', ['context', 'seams', 'host', 'store-postgres', 'plan-core', 'plan-tool', 'cli'])
  dir = await mkdtemp(join(tmpdir(), 'planmode-cli-'))
  schema = freshSchemaName('cli')
  await setup({ connection: pgTestUrl(), schema })
})
afterAll(async () => {
  for (const child of running) child.kill('SIGKILL')
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  if (schema !== undefined) await dropSchema(pgTestUrl(), schema)
})

interface Writer {
  readonly child: ChildProcess
  /** The next line matching `pattern` not read yet (its first group). */
  next(pattern: RegExp): Promise<string>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function writer(args: readonly string[]): Writer {
  const child = spawn(process.execPath, [writerFile, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PLANMODE_PG_URL: pgTestUrl() } })
  running.add(child)
  const lines: string[] = []
  let partial = ''
  let stderr = ''
  const waiting: { pattern: RegExp; resolve: (value: string) => void }[] = []
  const check = (): void => {
    for (const wait of [...waiting]) {
      const at = lines.findIndex((line) => wait.pattern.test(line))
      if (at < 0) continue
      const [line] = lines.splice(at, 1)
      waiting.splice(waiting.indexOf(wait), 1)
      wait.resolve(wait.pattern.exec(line!)![1]!)
    }
  }
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString()
    const parts = text.split('\n')
    partial = parts.pop()!
    lines.push(...parts)
    check()
  })
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    }),
  )
  return {
    child,
    exited,
    next: (pattern) =>
      new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve })
        check()
        void exited.then(({ code, signal }) => reject(new Error(`the writer exited (${code ?? signal}) before printing ${pattern}: ${stderr.slice(-800)}`)))
      }),
  }
}

/** Runs `planmode` with `args`; resolves with its exit code and output. */
function planmode(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PLANMODE_STORE: '', ...env } })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('exit', (code) => {
      running.delete(child)
      resolve({ code, stdout, stderr })
    })
  })
}

type ResultLine = { isError: boolean; text: string; active: boolean }
const KEEP_TEXT = 'The user chose to keep planning; their feedback: Split step 2\n- line 3: why the form first?'
const STOPPED = "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message."

describe('planmode over a JSONL session folder (the local channel)', () => {
  it('lists the open review, keeps planning with feedback and a comment, refuses a second answer naming who answered, approves, stops', async () => {
    const store = ['--dir', dir]
    const w = writer(['dir', dir, 'review-1', '3'])
    const first = await w.next(/^asked (\S+)$/)
    const listed = await planmode(['questions', 'review-1', ...store])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(`session review-1 (${dir}): 1 open question; a process is waiting for answers`)
    expect(listed.stdout).toContain(first)
    expect(listed.stdout).toContain('Plan review: Approve this plan and leave plan mode?')
    expect(listed.stdout).toContain('plan: "Add a login page" (5 lines)')
    expect(listed.stdout).toContain('options: Approve | Keep planning | Stop planning')
    expect(listed.stdout).toContain(`answer: planmode answer review-1 ${first} approve|keep|stop`)
    const json = await planmode(['questions', 'review-1', '--json', ...store])
    expect((JSON.parse(json.stdout) as OpenAsks).open.map((ask) => ask.questionId)).toEqual([first])

    // Refused before anything is sent: a bad command line (2), an answer that does not fit (7).
    expect((await planmode(['answer', 'review-1', first, 'approve', '--feedback', 'looks good', ...store])).code).toBe(2)
    expect((await planmode(['answer', 'review-1', first, '--option', 'Maybe', ...store])).code).toBe(2)
    const outOfRange = await planmode(['answer', 'review-1', first, 'keep', '--comment', '99:no such line', ...store])
    expect(outOfRange.code).toBe(7)
    expect(outOfRange.stderr).toContain('refused (INVALID_ANSWER)')
    expect(outOfRange.stderr).toContain('1 to 5')

    const kept = await planmode(['answer', 'review-1', first, 'keep', '--feedback', 'Split step 2', '--comment', '3:why the form first?', '--by', 'ada:Ada', ...store])
    expect(kept.code, kept.stderr).toBe(0)
    expect(kept.stdout).toContain(`answered question ${first} of session review-1`)
    expect(JSON.parse(await w.next(/^result (.+)$/)) as ResultLine).toEqual({ isError: true, text: `Error: ${KEEP_TEXT}`, active: true })
    const again = await planmode(['answer', 'review-1', first, 'approve', '--by', 'bob', ...store])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain('refused (ALREADY_ANSWERED)')
    expect(again.stderr).toContain('already answered by Ada (ada)')

    const second = await w.next(/^asked (\S+)$/)
    const approved = await planmode(['answer', 'review-1', second, 'approve', '--by', 'bob', '--json', ...store])
    expect(approved.code, approved.stderr).toBe(0)
    expect(JSON.parse(approved.stdout)).toMatchObject({ status: 'accepted', questionId: second })
    const approval = JSON.parse(await w.next(/^result (.+)$/)) as ResultLine
    expect(approval).toMatchObject({ isError: false, active: false })
    expect(approval.text).toContain('approved')

    const third = await w.next(/^asked (\S+)$/)
    expect((await planmode(['answer', 'review-1', third, 'stop', '--feedback', 'not now', ...store])).code).toBe(0)
    expect(JSON.parse(await w.next(/^result (.+)$/)) as ResultLine).toEqual({ isError: true, text: `Error: ${STOPPED}`, active: false })
    expect((await w.exited).code).toBe(0)
    const none = await planmode(['questions', 'review-1', ...store])
    expect(none.stdout).toContain('no open questions')
  })

  it('exit codes for every refusal: unknown session, unknown question, a writer that was killed (nobody waits), a question closed', async () => {
    const store = ['--dir', dir]
    const unknownSession = await planmode(['answer', 'no-such-session', 'q_x', 'approve', ...store])
    expect(unknownSession.code).toBe(3)
    expect(unknownSession.stderr).toContain('refused (UNKNOWN_SESSION)')
    expect((await planmode(['questions', 'no-such-session', ...store])).code).toBe(3)
    const w = writer(['dir', dir, 'review-2', '1'])
    const asked = await w.next(/^asked (\S+)$/)
    const unknownQuestion = await planmode(['answer', 'review-2', 'q_nope', 'approve', ...store])
    expect(unknownQuestion.code).toBe(4)
    expect(unknownQuestion.stderr).toContain('refused (UNKNOWN_QUESTION)')
    w.child.kill('SIGKILL')
    await w.exited
    const listed = await planmode(['questions', 'review-2', ...store])
    expect(listed.stdout).toContain('no process is waiting for answers: they would be refused')
    const nobody = await planmode(['answer', 'review-2', asked, 'approve', ...store])
    expect(nobody.code).toBe(8)
    expect(nobody.stderr).toContain('refused (NO_WRITER)')
    // The next writer settles the question interrupted: it is closed now.
    const next = writer(['dir', dir, 'review-2', '1'])
    const fresh = await next.next(/^asked (\S+)$/)
    const closed = await planmode(['answer', 'review-2', asked, 'approve', ...store])
    expect(closed.code).toBe(6)
    expect(closed.stderr).toContain('refused (QUESTION_CLOSED)')
    expect((await planmode(['answer', 'review-2', fresh, 'approve', ...store])).code).toBe(0)
    await next.next(/^result (.+)$/)
    expect((await next.exited).code).toBe(0)
    // A bad command line: 2.
    expect((await planmode(['answer', 'review-2', fresh, 'approve', '--store', 'postgres://x', '--dir', dir])).code).toBe(2)
    expect((await planmode(['answer', 'review-2'])).code).toBe(2)
    expect((await planmode(['frobnicate'])).code).toBe(2)
    const help = await planmode(['help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Exit codes')
  })

  it('approves with an edited plan from a file', async () => {
    const store = ['--dir', dir]
    const w = writer(['dir', dir, 'review-3', '1'])
    const asked = await w.next(/^asked (\S+)$/)
    const file = join(dir, 'edited.md')
    await writeFile(file, '# Add a login page\n\n1. Read the routes\n2. Add the form with a test first')
    expect((await planmode(['answer', 'review-3', asked, 'approve', '--edit-file', file, ...store])).code).toBe(0)
    const result = JSON.parse(await w.next(/^result (.+)$/)) as ResultLine
    expect(result).toMatchObject({ isError: false, active: false })
    expect(result.text).toContain('2. Add the form with a test first')
    await w.exited
  })
})

describe('planmode over PostgreSQL', () => {
  it('lists and answers a review a writer in another process waits on; refuses a second answer; NO_WRITER once the writer is killed', async () => {
    const store = ['--store', pgTestUrl(), '--schema', schema]
    const w = writer(['postgres', schema, 'pg-review', '2'])
    const first = await w.next(/^asked (\S+)$/)
    const listed = await planmode(['questions', 'pg-review', ...store])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(`session pg-review (schema ${schema}): 1 open question; a process is waiting for answers`)
    expect(listed.stdout).toContain(first)
    // The URL from the environment works the same (and keeps a password out of `ps`).
    const viaEnv = await planmode(['questions', 'pg-review', '--schema', schema], { PLANMODE_STORE: pgTestUrl() })
    expect(viaEnv.stdout).toContain(first)
    const kept = await planmode(['answer', 'pg-review', first, 'keep', '--feedback', 'Split step 2', '--comment', '3:why the form first?', '--by', 'ada:Ada', ...store])
    expect(kept.code, kept.stderr).toBe(0)
    expect(JSON.parse(await w.next(/^result (.+)$/)) as ResultLine).toEqual({ isError: true, text: `Error: ${KEEP_TEXT}`, active: true })
    const again = await planmode(['answer', 'pg-review', first, 'stop', ...store])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain('already answered by Ada (ada)')
    const second = await w.next(/^asked (\S+)$/)
    w.child.kill('SIGKILL')
    await w.exited
    const nobody = await planmode(['answer', 'pg-review', second, 'approve', ...store])
    expect(nobody.code).toBe(8)
    expect(nobody.stderr).toContain('refused (NO_WRITER)')
    expect((await planmode(['answer', 'pg-none', 'q', 'approve', ...store])).code).toBe(3)
    expect((await planmode(['questions', 'pg-review', '--store', 'postgres://127.0.0.1:1/none', '--schema', schema])).code).toBe(10)
  })
})
