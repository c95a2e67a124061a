// `pnpm start` hands an approved plan on (SPEC §18) and shows its progress (SPEC §17), driven as a
// child process through piped stdin (each line waits for the turn), with the offline model: an
// approval with a model, one into a fresh session that the terminal follows, `plan 2/5` beside the
// badge, `/plans progress`, `--resume` of every session afterwards, and bad `--models`.
import { spawnSync } from 'node:child_process'
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'
import { beforeAll, describe, expect, it } from 'vitest'
import { childEnv, ensureBuilt, hasScriptPty, readSession, REPO, runScript, spawnStartOnPty } from './support/built-demo.js'
import { lines, tempFolders } from './support/temp-folders.js'

beforeAll(() => ensureBuilt(), 300_000)

const temp = tempFolders()
const data = (event: SessionEvent | undefined): Record<string, unknown> => (event?.data ?? {}) as unknown as Record<string, unknown>
const ofType = (events: readonly SessionEvent[], type: string): SessionEvent[] => events.filter((event) => (event.type as string) === type)
const sessionFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => join(dir, name))
/** Each `plan/progress` list of a log as one letter per step: `d`one, `i`n progress, `p`ending, `s`kipped. */
const progressTrail = (events: readonly SessionEvent[]): string[] =>
  ofType(events, 'plan/progress').map((event) => (data(event).steps as { status: string }[]).map((step) => step.status[0]).join(''))
const STEP_1 = '`src/tasks.js`: `add(title, { due })` accepts an optional `due` date'

describe('pnpm start --models: an approval that hands the plan to another model', () => {
  it('the review offers the models and a fresh session; "Approve with fast" switches the next steps to it; the prompt and /plans progress show the plan; --resume goes on with fast', async () => {
    const sessionDir = temp('handoff-model')
    const run = await runScript(
      'start',
      ['--offline', '--models', 'fast,careful', '--session-dir', sessionDir],
      lines('/plan Add due dates to tasks', '1 fsat', '9', '4', '/plans progress', '/quit'),
    )
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const out = run.stdout
    expect(out).toContain('  handoff:   an approval can hand the plan to fast, careful (from the next step), or to a fresh session\n')
    expect(out).toContain('  │   3. Stop planning — ')
    expect(out).toContain(
      '  │   4. Approve with fast — Leave plan mode; the agent carries out the plan with model fast from its next step.\n',
    )
    expect(out).toContain('  │   5. Approve with careful — ')
    expect(out).toContain('  │   6. Approve in a fresh session — ')
    expect(out).toContain('  │   8. Approve in a fresh session with careful — The same, with model careful in the new session.\n')
    expect(out).toContain('`1 <model>`, `1 fresh`, `1 fresh <model>` for short\n')
    // A short form that names nothing offered, and a number past the choices, keep the review open.
    expect(out).toContain(
      'review › 1 fsat\n  ! “1 fsat” hands the plan on to nothing offered: after 1 type fresh, fast, careful (or fresh and a model)\nreview › 9\n  ! no choice 9: the review has 1-8\nreview › 4\n',
    )
    expect(out).toContain(
      '  reviewer › Approve\n    with model fast\n    ✓ The user approved the plan and plan mode is now off. Carry out the plan from your next step.\n',
    )
    expect(out).toContain('  · request header: plan section removed from the system prompt; model changed (planmode-offline:fast)\n')
    expect(out).toContain('  → update_plan 1 in progress\n')
    expect(out).toContain('    ← plan 3/5, step 4 in progress\n')
    expect(out).toContain(
      `[plan: off] plan 5/5 · model fast › /plans progress\n  plan 5/5  “Plan: due dates for tasks”  (every step done)\n    [x] 1. ${STEP_1}`,
    )
    expect(out).toContain('    [x] 5. `README.md`: one usage line for `--due`.\n')
    const [file] = sessionFiles(sessionDir)
    expect(sessionFiles(sessionDir)).toHaveLength(1)
    expect(out.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`resume with: npx -y pnpm@\\S+ start --resume ${file} --models fast,careful$`),
    )

    const events = readSession(file!)
    expect(ofType(events, 'plan/review').map((event) => [data(event).outcome, data(event).handoff])).toEqual([
      ['approved', { model: 'fast' }],
    ])
    const approvedAt = events.findIndex((event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode')
    const headers = events.flatMap((event, index) => (event.type === 'request/header' ? [{ model: event.data.model, index }] : []))
    expect(headers.filter((header) => header.index < approvedAt).map((header) => header.model)).toEqual(['planmode-offline:planner-1'])
    expect(headers.filter((header) => header.index > approvedAt).map((header) => header.model)).toEqual(['planmode-offline:fast'])
    expect(progressTrail(events)).toEqual(['ipppp', 'dddip', 'ddddd'])

    // Reopened with the same flags it goes on with fast: the prompt names it, and no request goes to the default.
    const resumed = await runScript(
      'start',
      ['--offline', '--models', 'fast,careful', '--resume', basename(file!, '.jsonl'), '--session-dir', sessionDir],
      lines('thanks', '/quit'),
    )
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('  progress:  plan 5/5 “Plan: due dates for tasks” (/plans progress lists the steps)\n')
    expect(resumed.stdout).toContain('  model:     goes on with fast, as the review chose (--models)\n')
    expect(resumed.stdout).toContain("[plan: off] plan 5/5 · model fast › thanks\n  assistant You're welcome.\n")
    expect(ofType(readSession(file!), 'request/header').at(-1)?.data).toMatchObject({ model: 'planmode-offline:fast' })

    // Without --models the handoff model is gone: the host says so (a request already went to it, so the header rule
    // decides), and the default model answers.
    const without = await runScript('start', ['--offline', '--resume', file!], lines('thanks', '/quit'))
    expect(without.code).toBe(0)
    expect(without.stdout).toMatch(
      /! agents\.create \(session s_\w+\): the session's last request went to "planmode-offline:fast", but no entry of the `models` option is that model; the agent starts on the default model "planmode-offline:planner-1"\n/,
    )
    expect(without.stdout).toContain('[plan: off] plan 5/5 › thanks\n')
    expect(ofType(readSession(file!), 'request/header').at(-1)?.data).toMatchObject({ model: 'planmode-offline:planner-1' })
  })

  it('a plan the model cannot finish stays where it got to: plan 3/5 beside the badge, step 4 marked in progress', async () => {
    // The README line the last change edits is gone, so that edit fails and the model does not mark the rest done.
    const workspace = temp('handoff-partial-workspace')
    cpSync(join(REPO, 'apps/demo/workspace'), workspace, { recursive: true })
    const readme = join(workspace, 'README.md')
    writeFileSync(readme, readFileSync(readme, 'utf8').replace('tasks add "Write the release notes"\n', ''))
    const run = await runScript(
      'start',
      ['--offline', '--plan', '--workspace', workspace, '--session-dir', temp('handoff-partial')],
      lines('Add due dates to tasks', '1', '/plans progress', '/quit'),
    )
    expect(run.code).toBe(0)
    // Without --models the review offers a fresh session only.
    expect(run.stdout).toContain('  handoff:   an approval can hand the plan to a fresh session (--models a,b offers models too)\n')
    expect(run.stdout).toContain('  │   4. Approve in a fresh session — ')
    expect(run.stdout).not.toContain('  │   5. ')
    expect(run.stdout).toContain('I carried out the plan, but 1 change failed')
    expect(run.stdout).toContain(`[plan: off] plan 3/5 › /plans progress\n  plan 3/5  “Plan: due dates for tasks”\n    [x] 1. ${STEP_1}`)
    expect(run.stdout).toMatch(
      /\n {4}\[>\] 4\. `test\/due-dates\.test\.js`: [^\n]*  ← in progress\n {4}\[ \] 5\. `README\.md`: one usage line for `--due`\.\n/,
    )
    expect(run.stdout).toContain('[plan: off] plan 3/5 › /quit')
  })
})

describe('pnpm start: an approval into a fresh session', () => {
  it('the host creates the session, the terminal follows it and shows its turn; both sessions reopen with --resume', async () => {
    const sessionDir = temp('handoff-fresh')
    const run = await runScript(
      'start',
      ['--offline', '--models', 'fast,careful', '--session-dir', sessionDir],
      lines('/plan Add due dates to tasks', '8', '/plans', '/plans progress', '/quit'),
    )
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const out = run.stdout
    const files = sessionFiles(sessionDir)
    expect(files).toHaveLength(2)
    const fresh = files.find((file) => (readSession(file)[0]?.type as string) === 'plan/handoff')!
    const handing = files.find((file) => file !== fresh)!
    const [a, b] = [basename(handing, '.jsonl'), basename(fresh, '.jsonl')]
    expect(out).toContain(
      '  reviewer › Approve\n    in a fresh session, with model careful\n    ✓ The user approved the plan and will carry it out in a fresh session. Stop here: do not carry it out in this conversation.\n',
    )
    expect(out).toContain(
      `\n── fresh session ${b}: “Plan: due dates for tasks” ──\n  the plan approved in ${a} is carried out here, with model careful; that session stops here (--resume ${a} reopens it)\n` +
        `  ● plan/handoff logged: “Plan: due dates for tasks” from session ${a}, model careful\n` +
        '  ⓘ handoff (to the model) the approved plan “Plan: due dates for tasks” to carry out (23 lines)\n' +
        '  ⓘ progress (to the model) track the approved plan with update_plan (0/5 done)\n' +
        '  · request header: first of this session; model planmode-offline:careful\n' +
        "  assistant I'm carrying out the approved plan “Plan: due dates for tasks” handed to this session. First, a look at the workspace.\n  → list_files .\n",
    )
    expect(out).toContain('  → update_plan 1, 2, 3 done; 4 in progress\n')
    expect(out).toContain(
      `[plan: off] plan 5/5 · model careful › /plans\n  no plan revisions in this session: it carries out “Plan: due dates for tasks”, approved in session ${a} (/plans there lists its revisions; /plans progress here)\n`,
    )
    expect(out).toContain(
      '[plan: off] plan 5/5 · model careful › /plans progress\n  plan 5/5  “Plan: due dates for tasks”  (every step done)\n',
    )
    expect(out).toContain(`  session saved: ${fresh}\n  handed off from: ${handing} (--resume ${a} reopens it)\n`)
    expect(out.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`resume with: npx -y pnpm@\\S+ start --resume ${fresh} --models fast,careful$`),
    )

    // The handing session: the approval recorded with its handoff, and no request after the step that ran the tool.
    const first = readSession(handing)
    const exit = first.flatMap((event) =>
      event.type === 'assistant/message'
        ? event.data.content.filter((block) => block.type === 'tool-call' && block.toolName === 'exit_plan_mode')
        : [],
    )[0]
    const exitId = exit?.type === 'tool-call' ? exit.toolCallId : ''
    expect(ofType(first, 'plan/review').map((event) => data(event).handoff)).toEqual([{ fresh: true, model: 'careful' }])
    const resultAt = first.findIndex((event) => event.type === 'tool/result' && event.data.toolCallId === exitId)
    // SPEC §22.2: the approval's exit is logged right after the turn/end, so this session's log says plan mode is off.
    expect(first.slice(resultAt + 1).map((event) => event.type as string)).toEqual(['step/end', 'turn/end', 'plan/mode'])
    expect(first.at(-2)?.data).toMatchObject({ reason: 'completed' })
    expect(first.at(-1)?.data).toEqual({ active: false, cause: 'review' })

    // The fresh session: plan/handoff first, the workspace, then a turn whose first message is the handoff's, no user's.
    const second = readSession(fresh)
    const plan = exit?.type === 'tool-call' ? (exit.input as { plan: string }).plan : ''
    expect(second[0]?.data).toEqual({
      from: { session: a, toolCallId: exitId },
      plan,
      title: 'Plan: due dates for tasks',
      model: 'careful',
    })
    expect(second.slice(1, 3).map((event) => event.type)).toEqual(['demo/workspace', 'turn/start'])
    const messages = ofType(second, 'user/message').map((event) => (event.type === 'user/message' ? event.data.source : undefined))
    expect(messages).toEqual([
      { kind: 'plugin', plugin: 'plan-mode', form: 'handoff' },
      { kind: 'plugin', plugin: 'plan-mode', form: 'progress' },
    ])
    expect(second[3]?.type === 'user/message' && second[3].data.content).toEqual([
      { type: 'text', text: `Carry out this approved plan:\n\n${plan}` },
    ])
    expect(ofType(second, 'request/header').map((event) => data(event).model)).toEqual(['planmode-offline:careful'])
    expect(progressTrail(second)).toEqual(['ipppp', 'dddip', 'ddddd'])
    expect(ofType(second, 'plan/progress').every((event) => data(event).plan === exitId)).toBe(true)
    // The work was done there: the sample project's tests pass in the workspace both sessions logged.
    const workspace = String(data(ofType(second, 'demo/workspace')[0]).root)
    expect(data(ofType(first, 'demo/workspace')[0]).root).toBe(workspace)
    expect(spawnSync(process.execPath, ['--test'], { cwd: workspace, encoding: 'utf8' }).status).toBe(0)

    // Both reopen: the handing one with its approved plan (tracked elsewhere), the fresh one with its progress and model.
    const reopenA = await runScript(
      'start',
      ['--offline', '--models', 'fast,careful', '--resume', a, '--session-dir', sessionDir],
      lines('/plans progress', '/quit'),
    )
    expect(reopenA.code).toBe(0)
    expect(reopenA.stdout).toContain('  latest plan: #1  “Plan: due dates for tasks”  approved (1 in all; /plans lists them)\n')
    // The start lines, the badge and /plans progress agree with the log: plan mode is off, and the plan is tracked in b.
    expect(reopenA.stdout).toMatch(/ {2}resumed \d+ events; plan mode off\n/)
    expect(reopenA.stdout).not.toContain('pending')
    expect(reopenA.stdout).toContain(
      `[plan: off] › /plans progress\n  the plan approved here, “Plan: due dates for tasks”, is carried out in session ${b}, which tracks its steps: /plans progress there lists them (--resume ${b} reopens it)\n`,
    )
    const reopenB = await runScript(
      'start',
      ['--offline', '--models', 'fast,careful', '--resume', b, '--session-dir', sessionDir],
      lines('/quit'),
    )
    expect(reopenB.code).toBe(0)
    expect(reopenB.stdout).toContain(`  workspace: ${workspace} (from the session log)\n`)
    expect(reopenB.stdout).toContain(`  handed on: this session carries out “Plan: due dates for tasks”, approved in session ${a}\n`)
    expect(reopenB.stdout).toContain('  progress:  plan 5/5 “Plan: due dates for tasks” (/plans progress lists the steps)\n')
    expect(reopenB.stdout).toContain('  model:     goes on with careful, as the review chose (--models)\n')
    expect(reopenB.stdout).toContain('[plan: off] plan 5/5 · model careful › /quit')
    expect(sessionFiles(sessionDir)).toHaveLength(2)
  })

  it('"1 fresh" hands the plan on with the model this session uses', async () => {
    const sessionDir = temp('handoff-fresh-default')
    const run = await runScript(
      'start',
      ['--offline', '--plan', '--session-dir', sessionDir],
      lines('Add due dates to tasks', '1 fresh', '/quit'),
    )
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('  reviewer › Approve\n    in a fresh session\n')
    const fresh = sessionFiles(sessionDir)
      .map(readSession)
      .find((events) => (events[0]?.type as string) === 'plan/handoff')!
    expect(fresh[0]?.data).not.toHaveProperty('model')
    expect(ofType(fresh, 'request/header').map((event) => data(event).model)).toEqual(['planmode-offline:planner-1'])
    expect(progressTrail(fresh).at(-1)).toBe('ddddd')
    expect(run.stdout).toContain('[plan: off] plan 5/5 › /quit')
  })
})

describe('pnpm start on a terminal', () => {
  it.skipIf(!hasScriptPty())(
    'the live prompt shows the progress as the steps go by, and follows the fresh session: its working indicator, then its prompt',
    async () => {
      const sessionDir = temp('handoff-tty')
      // Slow enough that the prompt is drawn between the steps.
      const child = spawnStartOnPty(
        ['--offline', '--models', 'fast', '--session-dir', sessionDir, '--plan'],
        childEnv({ NO_COLOR: '1', TERM: 'xterm-256color', PLANMODE_DEMO_DELAY_MS: '5' }),
      )
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      await child.waitFor('[plan: on] › ')
      child.stdin.write('Add due dates to tasks\r')
      await child.waitFor('review › ')
      child.stdin.write('1 fresh fast\r')
      await child.waitFor(/── fresh session s_\S+: “Plan: due dates for tasks” ──/)
      await child.waitFor(/assistant Done\./)
      await child.waitFor('[plan: off] plan 5/5 · model fast › ')
      child.stdin.write('/quit\r')
      expect(await exited).toBe(0)
      const output = child.output()
      // The new session's turn ran under the working indicator, with its progress beside the badge while it went.
      expect(output).toMatch(/working… \[plan: off\] plan 0\/5 · model fast › /)
      expect(output).toMatch(/working… \[plan: off\] plan 3\/5 · model fast › /)
      expect(output).toContain('handed off from: ')
    },
  )
})

describe('pnpm start --models with bad input', () => {
  it('refuses a blank or repeated id with the usage, and starts nothing', async () => {
    for (const [value, message] of [
      ['', '--models takes model ids separated by commas ("fast,careful"), not ""'],
      ['fast,', '--models takes model ids separated by commas ("fast,careful"), not "fast,"'],
      ['fast,careful,fast', '--models names "fast" twice'],
    ] as const) {
      const sessionDir = temp('handoff-bad')
      const run = await runScript('start', ['--offline', '--session-dir', sessionDir, `--models=${value}`], lines('/quit'))
      expect(run.code, value).toBe(2)
      expect(run.stdout.startsWith(`${message}\n\nusage: pnpm start [options]`), run.stdout).toBe(true)
      expect(run.stdout).toContain('  --models <ids>          models a review may hand the approved plan to')
      expect(readdirSync(sessionDir)).toEqual([])
    }
  })
})
