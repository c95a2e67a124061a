// The terminal review as a person meets it (`pnpm start`, driven through piped stdin): approval words, an empty
// line and a mistyped command that dismiss nothing, answers that cannot be logged refused at the prompt, a
// revision shown as its changed lines, an answer from another process that names who gave it, and every logged
// string printed with its control characters escaped (SPEC §22.4).
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { runPlanmode } from '@planmode/cli'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  childEnv,
  ensureBuilt,
  hasScriptPty,
  onlySessionFile,
  readSession,
  runScript,
  spawnStart,
  spawnStartOnPty,
} from './support/built-demo.js'
import { lines, tempFolders } from './support/temp-folders.js'

beforeAll(() => ensureBuilt(), 300_000)

const temp = tempFolders()
const count = (text: string, part: string): number => text.split(part).length - 1

type ReviewRecord = { outcome: string; feedback?: string; comments?: { line: number; text: string }[] }
const reviews = (file: string): ReviewRecord[] =>
  readSession(file).flatMap((event) => ((event.type as string) === 'plan/review' ? [event.data as unknown as ReviewRecord] : []))

describe('pnpm start: a review a person cannot get wrong', () => {
  it('an empty line, a mistyped command, a bare no and feedback with U+0000 dismiss nothing; /help keeps it open; a revision shows what changed; lgtm approves', async () => {
    const sessionDir = temp('review-safe')
    const { code, stdout, stderr } = await runScript(
      'start',
      ['--session-dir', sessionDir],
      lines(
        '/plan Add due dates to tasks',
        '',
        '/plnas',
        'no',
        'split step 2\u0000',
        '/help',
        'c 3 keep the dates plain',
        'also flag overdue tasks',
        'lgtm',
        '/quit',
      ),
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain(
      '  └ answer with a number or a label (yes approves); other text is feedback (keep planning); a /command dismisses\n',
    )
    expect(stdout).toContain(
      'review › \n  (still waiting for your answer: type 1 (Approve), 2 (Keep planning), 3 (Stop planning) or 4 (Approve in a fresh session), or what should change)\n' +
        'review › /plnas\n  ! unknown command /plnas: the review is still open (/help lists the commands)\n' +
        'review › no\n  ! “no” says nothing the agent can revise: type what should change (that keeps planning), or 2 to keep planning as it is\n' +
        'review › split step 2\\x00\n  ! the feedback holds U+0000 or a broken character (a lone surrogate), which cannot be logged; nothing was sent: type it again without it\n' +
        'review › /help\n  Commands:\n',
    )
    // /help during the review: aligned, and no note about who handles /plans.
    expect(stdout).toContain('    /plan [off|message]                           Enter or leave plan mode\n')
    expect(stdout).toContain('    /plans [show N | diff A B | save [N] <file>]  The plan revisions of this session\n')
    expect(stdout).toContain('    /quit                                         Leave (the session stays on disk; --resume reopens it)\n')
    expect(stdout).not.toContain('the demo host handles it')
    expect(stdout).toContain(
      'review › c 3 keep the dates plain\n  (comment on line 3; 1 so far — pick an option to send)\nreview › also flag overdue tasks\n  reviewer › “also flag overdue tasks”\n    line 3: keep the dates plain\n',
    )
    expect(stdout).not.toContain('(review dismissed)')
    // The revision: what changed since #1, numbered by its own lines, then the options on one line.
    expect(stdout).toMatch(
      / {2}┌ Plan review, revision 2 — what changed since #1: \d+ lines added, \d+ removed \(\/plans show 2 prints it whole\)\n/,
    )
    expect(stdout).toMatch(/\n {2}\+ {0,2}\d+ {2}_Revision 2: revised after your review\._\n/)
    expect(stdout).toMatch(/\n {2}\+ {0,2}\d+ {2}- "also flag overdue tasks": step 2 now adds `isOverdue`/)
    expect(stdout).toContain('\n  │ 1 Approve · 2 Keep planning · 3 Stop planning · 4 Approve in a fresh session\n')
    // The plan's first line is printed once: in the first review, not again in the revision.
    expect(count(stdout, '  # Plan: due dates for tasks\n')).toBe(1)
    expect(stdout).toContain('review › lgtm\n  reviewer › Approve\n')
    expect(stdout).toMatch(/assistant Done\. Tasks now take an optional due date/)
    const file = onlySessionFile(sessionDir)
    expect(reviews(file)).toEqual([
      expect.objectContaining({
        outcome: 'keep-planning',
        feedback: 'also flag overdue tasks',
        comments: [{ line: 3, text: 'keep the dates plain' }],
      }),
      expect.objectContaining({ outcome: 'approved' }),
    ])
    // Nothing of the refused lines reached the log.
    expect(readFileSync(file, 'utf8')).not.toMatch(/split step 2|\\u0000|plnas/)
  })

  it.each(['yes', 'y', 'ok', 'OK', 'lgtm', 'approve', 'Yes!'])('`%s` at review › approves', async (word) => {
    const sessionDir = temp('review-yes')
    const { code, stdout } = await runScript(
      'start',
      ['--session-dir', sessionDir, '--plan'],
      lines('Add due dates to tasks', word, '/quit'),
    )
    expect(code).toBe(0)
    expect(stdout).toContain(`review › ${word}\n  reviewer › Approve\n    ✓ The user approved the plan`)
    expect(stdout).toContain('[plan: off] plan 5/5 › /quit')
    expect(reviews(onlySessionFile(sessionDir)).map((record) => record.outcome)).toEqual(['approved'])
  })

  it.skipIf(!hasScriptPty()).each(['system', 'transcript'])(
    '/plan off at a review on a terminal (placement %s): the turn goes on in the default mode, and the model says plan mode is off, as the badge does',
    async (placement) => {
      const sessionDir = temp('review-off')
      const child = spawnStartOnPty(
        ['--session-dir', sessionDir, '--placement', placement],
        childEnv({ NO_COLOR: '1', TERM: 'xterm-256color' }),
      )
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      try {
        await child.waitFor('[plan: off] › ')
        child.stdin.write('/plan Add due dates to tasks\r')
        await child.waitFor('review › ')
        child.stdin.write('/plan off\r')
        await child.waitFor('(review dismissed)')
        // The turn goes on after the dismissal; it is over once its turn/end is logged.
        while (!readSession(onlySessionFile(sessionDir)).some((event) => event.type === 'turn/end'))
          await new Promise((resolve) => setTimeout(resolve, 50))
        child.stdin.write('/quit\r')
        expect(await exited).toBe(0)
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL')
      }
      const events = readSession(onlySessionFile(sessionDir))
      const said = events.flatMap((event) =>
        event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
      )
      expect(said.at(-1)).toBe(
        "Understood: plan mode is off now, so I've stopped planning and won't carry out that plan. I'll wait for your message.",
      )
      expect(said.join('\n')).not.toContain('staying in plan mode')
      // The command ran during the turn: its plan/mode (the user's) and the leaving notice came before that answer.
      const modes = events
        .filter((event) => (event.type as string) === 'plan/mode')
        .map((event) => event.data as unknown as { active: boolean; cause?: string })
      expect(modes.at(-1)).toMatchObject({ active: false, cause: 'user' })
      const types = events.map((event) => event.type as string)
      expect(types.lastIndexOf('plan/mode')).toBeLessThan(types.lastIndexOf('assistant/message'))
      expect(types.lastIndexOf('turn/end')).toBeGreaterThan(types.lastIndexOf('assistant/message'))
    },
  )
})

describe('pnpm start: what another process answers, and logged strings with control characters', () => {
  it('an answer from `planmode answer` names who gave it; its feedback and the plan print their control characters escaped', async () => {
    const sessionDir = temp('review-elsewhere')
    const child = spawnStart(['--session-dir', sessionDir, '--plan'])
    try {
      child.stdin.write('Add due dates to tasks \u001b[31mnow\u001b[0m\n')
      await child.waitFor('`e` edits the plan')
      const session = basename(onlySessionFile(sessionDir), '.jsonl')
      const cli = async (...args: string[]) => {
        let out = ''
        let err = ''
        const code = await runPlanmode([...args, '--dir', sessionDir], {
          stdout: { write: (text: string) => (out += text) },
          stderr: { write: (text: string) => (err += text) },
          env: {},
        })
        return { code, out, err }
      }
      const listed = await cli('questions', session, '--json')
      expect(listed.code).toBe(0)
      const question = /"(q_[A-Za-z0-9_]+)"/.exec(listed.out)![1]!
      const answered = await cli(
        'answer',
        session,
        question,
        'keep',
        '--feedback',
        'Ask first \u001b[2J please',
        '--comment',
        '3:why \u0007this?',
        '--by',
        'ada:Ada Lovelace',
      )
      expect(answered.err).toBe('')
      expect(answered.code).toBe(0)
      await child.waitFor('answered by Ada Lovelace (ada), from another process')
      await child.waitFor('what changed since #1')
      child.stdin.write('1\n/quit\n')
      await new Promise<void>((resolve) => child.once('close', () => resolve()))
      const out = child.output()
      expect(out).toContain(
        '  reviewer › Keep planning: “Ask first \\x1b[2J please”\n    answered by Ada Lovelace (ada), from another process\n    line 3: why \\x07this?\n',
      )
      // The goal typed with colour codes is in the plan, the prompt echo and the revision: escaped everywhere.
      expect(out).toContain('[plan: on] › Add due dates to tasks \\x1b[31mnow\\x1b[0m\n')
      expect(out).toContain('  Goal: Add due dates to tasks \\x1b[31mnow\\x1b[0m\n')
      expect(out).not.toContain('\u001b')
      expect(out).not.toContain('\u0007')
      expect(reviews(onlySessionFile(sessionDir)).map((record) => record.outcome)).toEqual(['keep-planning', 'approved'])
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })
})
