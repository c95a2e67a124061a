import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPlanmode } from '@planmode/cli'
import type { OpenAsks } from '@planmode/seams'
import { setup } from '@planmode/store-postgres'
import {
  assertBuilt,
  dropSchema,
  freshSchemaName,
  pgTestUrl,
  runChild,
  startChild,
  stopChildren,
  type StartedChild,
} from '@planmode/testkit'

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
let dir: string
let schema: string
/** A schema of its own for the listing of every session (the other tests leave open questions behind). */
let listSchema: string

beforeAll(async () => {
  assertBuilt('planmode cli test', ['context', 'seams', 'host', 'store-postgres', 'plan-core', 'plan-tool', 'cli'])
  dir = await mkdtemp(join(tmpdir(), 'planmode-cli-'))
  schema = freshSchemaName('cli')
  await setup({ connection: pgTestUrl(), schema })
  listSchema = freshSchemaName('cli_list')
  await setup({ connection: pgTestUrl(), schema: listSchema })
})
afterAll(async () => {
  stopChildren()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  if (schema !== undefined) await dropSchema(pgTestUrl(), schema)
  if (listSchema !== undefined) await dropSchema(pgTestUrl(), listSchema)
})

/** A writer: the reference host in a child process (review-writer.mjs), waiting on its reviews. */
const writer = (args: readonly string[]): StartedChild => startChild(writerFile, args, { env: { PLANMODE_PG_URL: pgTestUrl() } })

/** Runs `planmode` with `args` to its end (no PLANMODE_STORE unless `env` sets one). */
const planmode = (args: readonly string[], env: Record<string, string> = {}) => runChild(bin, args, { env: { PLANMODE_STORE: '', ...env } })

type ResultLine = { isError: boolean; text: string; active: boolean }
const KEEP_TEXT = 'The user chose to keep planning; their feedback: Split step 2\n- line 3: why the form first?'
const STOPPED =
  "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message."

describe('planmode over a JSONL session folder (the local channel)', () => {
  it('lists the open review, keeps planning with feedback and a comment, refuses a second answer naming who answered, approves, stops', async () => {
    const store = ['--dir', dir]
    const w = writer(['dir', dir, 'review-1', '3'])
    const first = await w.line(/^asked (\S+)$/)
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

    const kept = await planmode([
      'answer',
      'review-1',
      first,
      'keep',
      '--feedback',
      'Split step 2',
      '--comment',
      '3:why the form first?',
      '--by',
      'ada:Ada',
      ...store,
    ])
    expect(kept.code, kept.stderr).toBe(0)
    expect(kept.stdout).toContain(`answered question ${first} of session review-1`)
    expect(JSON.parse(await w.line(/^result (.+)$/)) as ResultLine).toEqual({ isError: true, text: `Error: ${KEEP_TEXT}`, active: true })
    const again = await planmode(['answer', 'review-1', first, 'approve', '--by', 'bob', ...store])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain('refused (ALREADY_ANSWERED)')
    expect(again.stderr).toContain('already answered by Ada (ada)')

    const second = await w.line(/^asked (\S+)$/)
    const approved = await planmode(['answer', 'review-1', second, 'approve', '--by', 'bob', '--json', ...store])
    expect(approved.code, approved.stderr).toBe(0)
    expect(JSON.parse(approved.stdout)).toMatchObject({ status: 'accepted', questionId: second })
    const approval = JSON.parse(await w.line(/^result (.+)$/)) as ResultLine
    expect(approval).toMatchObject({ isError: false, active: false })
    expect(approval.text).toContain('approved')

    const third = await w.line(/^asked (\S+)$/)
    expect((await planmode(['answer', 'review-1', third, 'stop', '--feedback', 'not now', ...store])).code).toBe(0)
    expect(JSON.parse(await w.line(/^result (.+)$/)) as ResultLine).toEqual({ isError: true, text: `Error: ${STOPPED}`, active: false })
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
    const asked = await w.line(/^asked (\S+)$/)
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
    const fresh = await next.line(/^asked (\S+)$/)
    const closed = await planmode(['answer', 'review-2', asked, 'approve', ...store])
    expect(closed.code).toBe(6)
    expect(closed.stderr).toContain('refused (QUESTION_CLOSED)')
    expect((await planmode(['answer', 'review-2', fresh, 'approve', ...store])).code).toBe(0)
    await next.line(/^result (.+)$/)
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
    const asked = await w.line(/^asked (\S+)$/)
    const file = join(dir, 'edited.md')
    await writeFile(file, '# Add a login page\n\n1. Read the routes\n2. Add the form with a test first')
    expect((await planmode(['answer', 'review-3', asked, 'approve', '--edit-file', file, ...store])).code).toBe(0)
    const result = JSON.parse(await w.line(/^result (.+)$/)) as ResultLine
    expect(result).toMatchObject({ isError: false, active: false })
    expect(result.text).toContain('2. Add the form with a test first')
    await w.exited
  })
})

describe('planmode over PostgreSQL', () => {
  it('lists and answers a review a writer in another process waits on; refuses a second answer; NO_WRITER once the writer is killed', async () => {
    const store = ['--store', pgTestUrl(), '--schema', schema]
    const w = writer(['postgres', schema, 'pg-review', '2'])
    const first = await w.line(/^asked (\S+)$/)
    const listed = await planmode(['questions', 'pg-review', ...store])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(`session pg-review (schema ${schema}): 1 open question; a process is waiting for answers`)
    expect(listed.stdout).toContain(first)
    // The URL from the environment works the same (and keeps a password out of `ps`).
    const viaEnv = await planmode(['questions', 'pg-review', '--schema', schema], { PLANMODE_STORE: pgTestUrl() })
    expect(viaEnv.stdout).toContain(first)
    const kept = await planmode([
      'answer',
      'pg-review',
      first,
      'keep',
      '--feedback',
      'Split step 2',
      '--comment',
      '3:why the form first?',
      '--by',
      'ada:Ada',
      ...store,
    ])
    expect(kept.code, kept.stderr).toBe(0)
    expect(JSON.parse(await w.line(/^result (.+)$/)) as ResultLine).toEqual({ isError: true, text: `Error: ${KEEP_TEXT}`, active: true })
    const again = await planmode(['answer', 'pg-review', first, 'stop', ...store])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain('already answered by Ada (ada)')
    const second = await w.line(/^asked (\S+)$/)
    w.child.kill('SIGKILL')
    await w.exited
    const nobody = await planmode(['answer', 'pg-review', second, 'approve', ...store])
    expect(nobody.code).toBe(8)
    expect(nobody.stderr).toContain('refused (NO_WRITER)')
    expect((await planmode(['answer', 'pg-none', 'q', 'approve', ...store])).code).toBe(3)
    expect((await planmode(['questions', 'pg-review', '--store', 'postgres://127.0.0.1:1/none', '--schema', schema])).code).toBe(10)
  })
})

/** `planmode answer …` as the listing printed it for `questionId`, with `approve` for the review's decision: the words to run. */
function pastedHint(stdout: string, questionId: string): string[] {
  const line = stdout.split('\n').find((text) => text.includes(`answer: planmode answer `) && text.includes(` ${questionId} `))
  if (line === undefined) throw new Error(`no answer hint for ${questionId} in:\n${stdout}`)
  return line
    .slice(line.indexOf('planmode answer ') + 'planmode '.length)
    .replace('approve|keep|stop [--feedback …] [--comment N:text]', 'approve')
    .split(' ')
}

describe('planmode questions without a session: every session with an open question', () => {
  it('over a folder: lists the sessions with open questions and leaves out the others; the answer hint repeats --dir, and pasted it answers', async () => {
    const home = await mkdtemp(join(tmpdir(), 'planmode-cli-home-'))
    const folder = join(home, '.planmode', 'sessions')
    await mkdir(folder, { recursive: true })
    try {
      const idle = writer(['dir', folder, 'all-idle', '0'])
      expect((await idle.exited).code).toBe(0)
      const a = writer(['dir', folder, 'all-a', '1'])
      const b = writer(['dir', folder, 'all-b', '1'])
      const [qa, qb] = [await a.line(/^asked (\S+)$/), await b.line(/^asked (\S+)$/)]

      const listed = await planmode(['questions', '--dir', folder])
      expect(listed.code, listed.stderr).toBe(0)
      expect(listed.stdout).toContain(`2 sessions with open questions in ${folder} (3 sessions)`)
      expect(listed.stdout).toContain('session all-a: 1 open question; a process is waiting for answers')
      expect(listed.stdout).toContain('session all-b: 1 open question; a process is waiting for answers')
      expect(listed.stdout).not.toContain('all-idle')
      expect(listed.stdout).toContain(
        `answer: planmode answer all-a ${qa} approve|keep|stop [--feedback …] [--comment N:text] --dir ${folder}\n`,
      )
      expect(listed.stdout).toContain(
        `answer: planmode answer all-b ${qb} approve|keep|stop [--feedback …] [--comment N:text] --dir ${folder}\n`,
      )
      const json = JSON.parse((await planmode(['questions', '--dir', folder, '--json'])).stdout) as ({ session: string } & OpenAsks)[]
      expect(json.map((entry) => [entry.session, entry.open.map((ask) => ask.questionId), entry.writer])).toEqual([
        ['all-a', [qa], true],
        ['all-b', [qb], true],
      ])

      // The default folder (~/.planmode/sessions): nothing to repeat.
      const byDefault = await planmode(['questions'], { HOME: home })
      expect(byDefault.code, byDefault.stderr).toBe(0)
      expect(byDefault.stdout).toContain(`answer: planmode answer all-a ${qa} approve|keep|stop [--feedback …] [--comment N:text]\n`)

      // The hint, pasted, answers the question it names.
      const pasted = await planmode(pastedHint(listed.stdout, qa))
      expect(pasted.code, pasted.stderr).toBe(0)
      expect(JSON.parse(await a.line(/^result (.+)$/)) as ResultLine).toMatchObject({ isError: false, active: false })
      expect((await a.exited).code).toBe(0)
      const after = await planmode(['questions', '--dir', folder])
      expect(after.stdout).toContain(`1 session with open questions in ${folder} (3 sessions)`)
      expect(after.stdout).not.toContain('session all-a')
      expect((await planmode(['answer', 'all-b', qb, 'stop', '--dir', folder])).code).toBe(0)
      await b.exited
      expect((await planmode(['questions', '--dir', folder])).stdout).toBe(`no open questions in ${folder} (3 sessions)\n`)
      expect((await planmode(['questions', '--dir', join(home, 'nowhere')])).stdout).toBe(
        `no open questions in ${join(home, 'nowhere')} (no sessions)\n`,
      )
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  })

  it("over PostgreSQL: lists the schema's sessions with open questions; the hint repeats --store (without its password) and --schema, or only --schema when the URL came from PLANMODE_STORE", async () => {
    const a = writer(['postgres', listSchema, 'pg-all-a', '1'])
    const b = writer(['postgres', listSchema, 'pg-all-b', '1'])
    const [qa, qb] = [await a.line(/^asked (\S+)$/), await b.line(/^asked (\S+)$/)]
    const listed = await planmode(['questions', '--store', pgTestUrl(), '--schema', listSchema])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(`2 sessions with open questions in schema ${listSchema} (2 sessions)`)
    expect(listed.stdout).toContain(
      `answer: planmode answer pg-all-a ${qa} approve|keep|stop [--feedback …] [--comment N:text] --store ${pgTestUrl()} --schema ${listSchema}\n`,
    )
    const viaEnv = await planmode(['questions', '--schema', listSchema], { PLANMODE_STORE: pgTestUrl() })
    expect(viaEnv.stdout).toContain(
      `answer: planmode answer pg-all-b ${qb} approve|keep|stop [--feedback …] [--comment N:text] --schema ${listSchema}\n`,
    )
    // Trust authentication ignores a password: one in the URL still connects, and is not printed.
    const withPassword = new URL(pgTestUrl())
    withPassword.password = withPassword.password || 'hunter2'
    const secret = withPassword.password
    const masked = await planmode(['questions', '--store', withPassword.href, '--schema', listSchema])
    expect(masked.code, masked.stderr).toBe(0)
    expect(masked.stdout).toContain(':****@')
    expect(masked.stdout).not.toContain(`:${secret}@`)

    const pasted = await planmode(pastedHint(listed.stdout, qa))
    expect(pasted.code, pasted.stderr).toBe(0)
    expect(JSON.parse(await a.line(/^result (.+)$/)) as ResultLine).toMatchObject({ isError: false, active: false })
    await a.exited
    expect((await planmode(['questions', '--store', pgTestUrl(), '--schema', listSchema])).stdout).toContain(
      `1 session with open questions in schema ${listSchema} (2 sessions)`,
    )
    expect((await planmode(['answer', 'pg-all-b', qb, 'stop', '--store', pgTestUrl(), '--schema', listSchema])).code).toBe(0)
    await b.exited
    const unreachable = await planmode(['questions', '--store', 'postgres://127.0.0.1:1/none'])
    expect(unreachable.code).toBe(10)
    expect(unreachable.stderr).toContain('cannot list the sessions in schema planmode')
  })
})

describe('logged strings are printed escaped, and text that may not be logged is refused before it is sent (SPEC §22.4)', () => {
  it('escapes the question, its options and the plan title; refuses --by with an escape, a bidirectional override, or nothing visible, and an edited plan or feedback that is not well-formed', async () => {
    const store = ['--dir', dir]
    const w = writer(['dir', dir, 'hostile-1', '1', 'hostile'])
    const asked = await w.line(/^asked (\S+)$/)
    const listed = await planmode(['questions', 'hostile-1', ...store])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/)
    expect(listed.stdout).toContain('Deploy\\x1b[2J: Ship it now?\\u202e')
    expect(listed.stdout).toContain('  to production\\x1b]0;pwned\\x07\n')
    expect(listed.stdout).not.toContain('second line')
    expect(listed.stdout).toContain('options: Yes\\x1b[31m | No')
    const everySession = await planmode(['questions', ...store])
    expect(everySession.stdout).toContain('Deploy\\x1b[2J: Ship it now?\\u202e')
    expect(everySession.stdout).not.toMatch(/[\x1b\x07\u202e]/)
    // JSON: the same strings once parsed, and nothing raw a terminal would act on.
    const json = await planmode(['questions', 'hostile-1', '--json', ...store])
    expect(json.stdout).not.toMatch(/[\x1b\x07\u202e]/)
    expect((JSON.parse(json.stdout) as OpenAsks).open[0]!.question[0]).toMatchObject({
      header: 'Deploy\x1b[2J',
      question: 'Ship it now?\u202e',
    })

    for (const by of ['eve:Eve\x1b[2J', '\u202eeve', 'eve:\u200b', 'eve\x07']) {
      const refused = await planmode(['answer', 'hostile-1', asked, '--option', 'No', '--by', by, ...store])
      expect(refused.code, by).toBe(2)
      expect(refused.stderr).toMatch(
        /cannot send this answer: by\.(id|name) must have a visible character and no control character, U\+0000, lone surrogate or bidirectional control \(from --by\); nothing was sent/,
      )
      expect(refused.stderr).not.toMatch(/[\x1b\x07\u202e]/)
    }
    // Lone surrogates and U+0000 cannot come through a process's arguments: through the library, as the bin runs it.
    for (const text of ['fine \uD800 text', 'nul \u0000 here']) {
      const out: string[] = []
      const io = { stdout: { write: (line: string) => out.push(line) }, stderr: { write: (line: string) => out.push(line) }, env: {} }
      expect(await runPlanmode(['answer', 'hostile-1', asked, '--option', 'No', '--text', text, ...store], io)).toBe(2)
      expect(out.join('')).toContain(
        'cannot send this answer: answers[0].custom must be well-formed Unicode text without U+0000 (from --feedback or --text); nothing was sent',
      )
    }
    // Nothing was sent: the question is still open, and the writer still waits for it.
    expect((await planmode(['questions', 'hostile-1', ...store])).stdout).toContain(asked)
    const answered = await planmode(['answer', 'hostile-1', asked, '--option', 'No', '--by', 'eve:Eve', ...store])
    expect(answered.code, answered.stderr).toBe(0)
    expect(JSON.parse(await w.line(/^answered (.+)$/))).toEqual([{ id: 'deploy', selected: ['No'], by: { id: 'eve', name: 'Eve' } }])

    const review = await w.line(/^asked (\S+)$/)
    const reviewListed = await planmode(['questions', 'hostile-1', ...store])
    expect(reviewListed.stdout).toContain('plan: "Add \\x1b[2Ja login page" (5 lines)')
    const file = join(dir, 'nul-plan.md')
    await writeFile(file, '# Add a login page\n\n1. Read the routes\u0000\n')
    const nul = await planmode(['answer', 'hostile-1', review, 'approve', '--edit-file', file, ...store])
    expect(nul.code).toBe(2)
    expect(nul.stderr).toContain('answers[0].edit must be well-formed Unicode text without U+0000 (from --edit-file); nothing was sent')
    for (const feedback of ['split \uDC00 it', 'nul\u0000']) {
      const out: string[] = []
      const io = { stdout: { write: (line: string) => out.push(line) }, stderr: { write: (line: string) => out.push(line) }, env: {} }
      expect(await runPlanmode(['answer', 'hostile-1', review, 'keep', '--feedback', feedback, ...store], io)).toBe(2)
      expect(out.join('')).toContain('answers[0].custom must be well-formed Unicode text without U+0000 (from --feedback or --text)')
    }
    expect((await planmode(['questions', 'hostile-1', ...store])).stdout).toContain(review)
    expect((await planmode(['answer', 'hostile-1', review, 'approve', ...store])).code).toBe(0)
    expect(JSON.parse(await w.line(/^result (.+)$/)) as ResultLine).toMatchObject({ isError: false, active: false })
    expect((await w.exited).code).toBe(0)
  })
})
