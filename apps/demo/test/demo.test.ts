import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { RECOMMENDED_CHILD_SECTION, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  SHOWCASE_CARELESS,
  SHOWCASE_COMMENT,
  SHOWCASE_EDIT_STEP,
  SHOWCASE_FEEDBACK,
  SHOWCASE_GUARD_REFUSAL,
  SHOWCASE_HELPER,
  SHOWCASE_PLAN_FIRST,
} from '../src/showcase.js'
import { wantsLiveScreen, WORKING_FRAMES, WORKING_LABEL } from '../src/terminal/live-screen.js'
import {
  childEnv,
  ensureBuilt,
  hasScriptPty,
  onlySessionFile,
  planTrace,
  readSession,
  REPO,
  runScript,
  spawnStart,
  spawnStartOnPty,
} from './support/built-demo.js'
import { lines, tempFolders } from './support/temp-folders.js'
import { startChatServer } from './support/chat-server.js'

// One file, so the built entries are (re)built once, before any child process runs.
beforeAll(() => ensureBuilt(), 300_000)

const temp = tempFolders()
const rootManifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  packageManager: string
  scripts: Record<string, string>
}
/** The resume command that works with only Node and npm. */
const npxPnpm = `npx -y ${rootManifest.packageManager}`

describe('the launcher (`pnpm demo`, `pnpm start`)', () => {
  it('builds quietly first: no build output, no telemetry notice, then the demo', async () => {
    expect(rootManifest.packageManager).toMatch(/^pnpm@\d+\.\d+\.\d+$/)
    expect(rootManifest.scripts.demo).toBe('node scripts/run-demo.mjs --build demo')
    expect(rootManifest.scripts.start).toBe('node scripts/run-demo.mjs --build start')
    const { code, stdout, stderr } = await runScript(
      '--build demo',
      ['--session-dir', temp('launcher')],
      '',
      childEnv({ TURBO_TELEMETRY_DISABLED: '', DO_NOT_TRACK: '' }),
    )
    expect(code).toBe(0)
    // At most the one line a slow build prints; nothing from turbo or tsup.
    expect(stderr).toMatch(/^(building planmode[^\n]*\n)?$/)
    expect(stdout.startsWith('\n── planmode demo: plan, review, revise, approve, implement, resume ──\n')).toBe(true)
    expect(stdout).not.toMatch(/turbo|telemetry|Tasks:|Build success|dist\//i)
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^✓ 39\/39 stages/)
  }, 180_000)

  it('shows the build output when the build fails, and starts nothing', async () => {
    // A real tsup build of a file with a syntax error stands in for the demo's build.
    const dir = temp('broken-build')
    writeFileSync(join(dir, 'broken.ts'), 'export const x = (\n')
    const require = createRequire(join(REPO, 'package.json'))
    const tsupManifest = require.resolve('tsup/package.json')
    const tsupBin = (JSON.parse(readFileSync(tsupManifest, 'utf8')) as { bin: Record<string, string> }).bin.tsup!
    const command = [
      process.execPath,
      join(dirname(tsupManifest), tsupBin),
      join(dir, 'broken.ts'),
      '--out-dir',
      join(dir, 'out'),
      '--format',
      'esm',
    ]
    const { code, stdout, stderr } = await runScript(
      '--build start',
      [],
      '/quit\n',
      childEnv({ PLANMODE_DEMO_BUILD_COMMAND: JSON.stringify(command) }),
    )
    expect(code).not.toBe(0)
    expect(stdout).toBe('')
    expect(stderr).toContain('broken.ts')
    expect(stderr).toMatch(/Build failed|ERROR/)
    expect(stderr).toMatch(/planmode: the build failed \(exit code \d+\); its output is above\./)
  })
})

/**
 * What a run left in its TMPDIR: every entry but the per-user folder of the
 * local answer channel (`planmode-<uid>`, kept like tmux's), which must be
 * empty again (each process removes its socket when it ends).
 */
function leftIn(tmp: string): string[] {
  const runtime = `planmode-${process.getuid?.() ?? 'user'}`
  const entries = readdirSync(tmp)
  if (entries.includes(runtime)) expect(readdirSync(join(tmp, runtime)), `${runtime}: the answer channel's sockets`).toEqual([])
  return entries.filter((entry) => entry !== runtime)
}

describe('temporary folders', () => {
  it('pnpm demo removes its workspace copy and session folder', async () => {
    const tmp = temp('tmpdir-demo')
    const { code, stdout } = await runScript('demo', [], '', childEnv({ TMPDIR: tmp }))
    expect(code).toBe(0)
    expect(stdout).toContain(
      'the workspace copies and the session logs were temporary and are removed now (--keep keeps them; --session-dir DIR keeps the logs)',
    )
    // The transcript excerpts in the READMEs are lines this run printed (`…` stands for any text).
    const printed = stdout.split(`${tmp}/`).join('/tmp/').split('\n')
    for (const [readme, marker] of [
      ['apps/demo/README.md', 'An excerpt (piped, so no colour):'],
      ['README.md', '## The demo'],
    ] as const) {
      const excerpt = readFileSync(join(REPO, readme), 'utf8').split(marker)[1]!.split('```text\n')[1]!.split('```')[0]!
      for (const line of excerpt.split('\n').filter((text) => text.trim() !== '' && text.trim() !== '…')) {
        const pattern = new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '.*')}$`)
        expect(
          printed.some((text) => pattern.test(text)),
          `${readme}: ${line}`,
        ).toBe(true)
      }
    }
    // The sample project's own tests (run by the showcase) clean up after themselves too.
    expect(leftIn(tmp)).toEqual([])
  })

  it('pnpm demo interrupted by Ctrl+C (SIGINT) removes them too', async () => {
    const tmp = temp('tmpdir-demo-int')
    const child = spawn(process.execPath, [join(REPO, 'scripts/run-demo.mjs'), 'demo'], {
      cwd: REPO,
      env: childEnv({ TMPDIR: tmp, PLANMODE_DEMO_DELAY_MS: '50' }),
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    let output = ''
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('── 1. Enter plan mode with a goal ──')) resolve()
      })
    })
    expect(readdirSync(tmp).length).toBeGreaterThan(0)
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(leftIn(tmp)).toEqual([])
  })

  it('pnpm demo whose reader goes away (`pnpm demo | head`) exits 0 and removes them too', async () => {
    const tmp = temp('tmpdir-demo-pipe')
    const child = spawn(process.execPath, [join(REPO, 'scripts/run-demo.mjs'), 'demo'], {
      cwd: REPO,
      env: childEnv({ TMPDIR: tmp, PLANMODE_DEMO_DELAY_MS: '20' }),
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    let output = ''
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('── 1. Enter plan mode with a goal ──')) resolve()
      })
    })
    child.stdout.destroy()
    expect(await exited).toBe(0)
    expect(stderr).toBe('')
    expect(leftIn(tmp)).toEqual([])
  })

  it('pnpm start keeps its workspace copy beside the session logs (resumed there), and leaves nothing in the temp dir', async () => {
    const tmp = temp('tmpdir-term')
    const child = spawnStart(['--session-dir', join(tmp, 'sessions')], childEnv({ TMPDIR: tmp }))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    // Once a line has been answered, the host is up and listening for signals.
    child.stdin.write('/help\n')
    await child.waitFor('Commands:')
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(child.output()).toContain('session saved:')
    expect(leftIn(tmp)).toEqual(['sessions'])
    // The copy lives beside the session logs, so a resume works in it again.
    const logged = /workspace: (\S+)/.exec(child.output())![1]!
    expect(dirname(logged)).toBe(join(tmp, 'sessions', 'workspaces'))
    expect(child.output()).toContain(`workspace kept: ${logged} (--resume works in it again)`)
    const resumed = await runScript(
      'start',
      ['--resume', onlySessionFile(join(tmp, 'sessions'))],
      lines('/quit'),
      childEnv({ TMPDIR: tmp }),
    )
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain(`workspace: ${logged} (from the session log)`)
    expect(resumed.stdout).not.toContain('workspace kept:')
    // Deleted by the user, it is replaced by a fresh copy, and the start lines say so.
    rmSync(logged, { recursive: true })
    const fresh = await runScript('start', ['--resume', onlySessionFile(join(tmp, 'sessions'))], lines('/quit'), childEnv({ TMPDIR: tmp }))
    expect(fresh.code).toBe(0)
    expect(fresh.stdout).toContain(`(the session's workspace ${logged} is gone; this is a fresh copy of the sample project)`)
    expect(leftIn(tmp)).toEqual(['sessions'])
    const copies = readdirSync(join(tmp, 'sessions', 'workspaces'))
    expect(copies).toHaveLength(1)

    const failed = await runScript('start', ['--resume', 's_none', '--session-dir', join(tmp, 'sessions')], '', childEnv({ TMPDIR: tmp }))
    expect(failed.code).toBe(1)
    expect(failed.stdout).toContain('cannot start:')
    expect(leftIn(tmp)).toEqual(['sessions'])
    // The copy made for a host that could not start is removed again.
    expect(readdirSync(join(tmp, 'sessions', 'workspaces'))).toEqual(copies)
  })
})

describe('pnpm demo (built, as a child process)', () => {
  it('shows the whole plan-mode arc, plain when piped, and exits 0', async () => {
    const sessionDir = temp('demo-test')
    const { code, stdout, stderr } = await runScript('demo', ['--session-dir', sessionDir])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    // Piped: no colour.
    expect(stdout).not.toMatch(/\u001b\[/)
    // The badge from the projection on every prompt line.
    expect(stdout).toContain('[plan: off] › /plan Add due dates to tasks')
    expect(stdout).toContain('[plan: on] › /plan off')
    expect(stdout).toContain('[plan: pending → on] plan 7/7 › What would you change next?')
    // Each prompt line: the badge, then the tracked plan's progress and the handoff model when there are any.
    expect(stdout.match(/^\[plan: (on|off|pending → on|pending → off)\] ((plan \d+\/\d+)( · model \S+)? |model \S+ )?› /gm)?.length).toBe(
      25,
    )
    // Exploration, the plan as markdown, the review and its choices.
    expect(stdout).toContain('→ list_files .')
    expect(stdout).toContain('→ read_file src/tasks.js')
    expect(stdout).toContain('     1  # Plan: due dates for tasks')
    expect(stdout).toContain('1. Approve')
    expect(stdout).toContain('2. Keep planning')
    expect(stdout).toContain('3. Stop planning')
    expect(stdout).toContain(`reviewer › Keep planning: “${SHOWCASE_FEEDBACK}”\n    line 3: ${SHOWCASE_COMMENT}\n`)
    expect(stdout).toContain('_Revision 2: revised after your review._')
    expect(stdout).toContain(`From your review: line 3: ${SHOWCASE_COMMENT}`)
    expect(stdout).toContain(
      `(the reviewer edits the plan: adds step “${SHOWCASE_EDIT_STEP}”)\n  reviewer › Approve\n    with an edited plan (`,
    )
    expect(stdout).toContain('✓ The user edited and approved the plan; plan mode is now off. Carry out this version from your next step: …')
    expect(stdout).toContain('assistant You edited the plan before approving it, so I am carrying out your version now (1 line you added).')
    // The history, a diff between the two revisions, the export.
    expect(stdout).toContain(
      '[plan: off] plan 7/7 › /plans\n  2 plan revisions:\n    #1  “Plan: due dates for tasks”  keep-planning\n    #2  “Plan: due dates for tasks”  approved (edited)\n',
    )
    expect(stdout).toContain(
      '[plan: off] plan 7/7 › /plans diff 1 2\n  --- #1 “Plan: due dates for tasks”\n  +++ #2 “Plan: due dates for tasks”\n',
    )
    expect(stdout).toContain(`  + 6. From your review: line 3: ${SHOWCASE_COMMENT}\n`)
    expect(stdout).toMatch(/^  - 2\. `src\/format\.js`/m)
    expect(stdout).toContain(`saved #2 “Plan: due dates for tasks” (the edited text the user approved) to ${sessionDir}/approved-plan.md`)
    const saved = readFileSync(join(sessionDir, 'approved-plan.md'), 'utf8')
    expect(saved).toMatch(/^# Plan: due dates for tasks\n/)
    expect(saved).toContain(`7. ${SHOWCASE_EDIT_STEP}\n\n## Verification`)
    expect(stdout).toContain('latest plan: #2  “Plan: due dates for tasks”  approved (edited)')
    expect(stdout).toContain('→ edit_file src/format.js')
    expect(stdout).toContain('↳ Entering plan mode from the next step. Send /plan off to leave.')
    expect(stdout).toContain('ⓘ notice (to the model) The user switched this session to plan mode.')
    expect(stdout).toContain('ⓘ notice (to the model) The user switched this session back to the default mode.')
    // The reopened session and the closing lines.
    expect(stdout).toContain('planMode.get → {"active":false,"pending":true}; plan projection → {"active":false,"pending":true}')
    // An idle /plan off and /plan say nothing at once; the leaving notice comes with the next step.
    expect(stdout).toContain(
      '[plan: on] › /plan off\n  ● plan/mode logged: off\n  ↳ Plan mode off.\n\n[plan: off] › /plan\n  ● plan/mode logged: on\n  ↳ Plan mode on. Send /plan off to leave.\n\n[plan: on] › Are you still in plan mode?\n  assistant ',
    )
    expect(stdout).toContain(
      `[plan: off] › ${SHOWCASE_PLAN_FIRST}\n  ⓘ notice (to the model) The user switched this session back to the default mode.\n`,
    )
    // The model asks to enter plan mode: the question, the reviewer's yes, no notice, then planning.
    expect(stdout).toContain('→ enter_plan_mode “You asked to plan first: Add a `tasks clear` command that …”')
    expect(stdout).toContain('  ┌ Plan mode\n')
    expect(stdout).toContain('  │   1. Enter plan mode — ')
    expect(stdout).toContain('  │   2. Not now — ')
    expect(stdout).toContain(
      '  you › Enter plan mode\n    ✓ The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.\n  ● plan/mode logged: on\n  · request header: plan section added to the system prompt\n',
    )
    expect(stdout).toContain('→ exit_plan_mode “Plan: Add a `tasks clear` command that removes finished tasks”')
    expect(stdout).toContain('  reviewer › Stop planning\n')
    // The second session: guidance in the transcript, the guard.
    expect(stdout).toContain('· request header: system prompt and tools fixed (plan guidance goes in the transcript)')
    expect(stdout).toContain(
      `[plan: on] › ${SHOWCASE_CARELESS}\n  ⓘ notice (to the model) The user switched this session to plan mode.\n  ⓘ guidance (to the model) the plan section as a transcript message (`,
    )
    expect(stdout).toContain(`    ✗ ${SHOWCASE_GUARD_REFUSAL}\n`)
    expect(stdout).toContain('assistant The plan guard refused write_file')
    // The helper agent: its work under the explore call, behind the gutter; the guard refuses its write; the report comes back.
    expect(stdout).toContain(`[plan: on] › ${SHOWCASE_HELPER}\n`)
    expect(stdout).toContain(
      '  → explore “How are tasks stored on disk? Write your notes to NOTES.md.”\n    ┆ helper agent, a child of this one (session ',
    )
    expect(stdout).toContain(
      '    ┆   asked → How are tasks stored on disk? Write your notes to NOTES.md.\n    ┆   ● plan/mode logged: on (inherited from the agent that started it)\n    ┆   ⓘ guidance (to the model) the child section as a transcript message (',
    )
    expect(stdout).toContain('    ┆   → read_file src/store.js\n')
    expect(stdout).toContain(`    ┆   → write_file NOTES.md\n    ┆     ✗ ${SHOWCASE_GUARD_REFUSAL}\n`)
    expect(stdout).toContain('    ┆   helper Findings on “How are tasks stored on disk?”:\n')
    expect(stdout).toContain('  assistant The helper reported back:\n            Findings on “How are tasks stored on disk?”:\n')
    const files = readdirSync(sessionDir).filter((name) => name.endsWith('.jsonl'))
    // Two sessions of stages 1-9, the helper's, the third session of stages 10-12 with the fresh one it handed a plan to, and stage 13's.
    expect(files).toHaveLength(6)
    const file = /^ {2}session file: (\S+)$/m.exec(stdout)![1]!
    const secondFile = /^ {2}second session file: (\S+)$/m.exec(stdout)![1]!
    const helperFile = /^ {2}helper session file: (\S+)$/m.exec(stdout)![1]!
    const thirdFile = /^ {2}third session file: (\S+)$/m.exec(stdout)![1]!
    const freshFile = /^ {2}fresh session file: (\S+)$/m.exec(stdout)![1]!
    const fourthFile = /^ {2}fourth session file: (\S+)$/m.exec(stdout)![1]!
    expect(files.map((name) => join(sessionDir, name)).sort()).toEqual(
      [file, secondFile, helperFile, thirdFile, freshFile, fourthFile].sort(),
    )
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^✓ 39\/39 stages: 2 plans \(1 revision\), a line comment, approved as edited, history diffed and saved, .*, notices only at a step, an entry the model asked for, guidance in the transcript, a write refused by the guard, a helper agent in inherited plan mode that reported back, a plan approved with another model, the plan file with its progress, a fresh session that carried a plan out with update_plan, a step marked done too early refused until the tests passed\.$/,
    )

    const events = readSession(file)
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
    expect(planTrace(events, RECOMMENDED_PLAN_SECTION)).toEqual([
      `/plan Add due dates to tasks, settable from the command line.`,
      'plan/mode:on',
      'header:initial:plan',
      'review:keep-planning',
      'review:approved',
      'plan/mode:off',
      'header:change:default',
      'turn/end:completed',
      // `/plan` typed during the chat turn: nothing is logged but the command until the next step.
      '/plan',
      'turn/end:completed',
      // The fresh host: the recovered selection is applied by the first pre-step, narrated, before the header.
      'plan/mode:on',
      'notice:The user switched this session to plan mode.',
      'header:change:plan',
      'turn/end:completed',
      // An idle /plan off and /plan: both logged, nothing told; the next step needs no notice (the model was told "on").
      '/plan off',
      'plan/mode:off',
      '/plan',
      'plan/mode:on',
      'turn/end:completed',
      // /plan off while idle: the notice comes with the next step; the model asks to enter, the reviewer agrees, no notice.
      '/plan off',
      'plan/mode:off',
      'notice:The user switched this session back to the default mode.',
      'header:change:default',
      'enter:entered',
      'plan/mode:on:model',
      'header:change:plan',
      'review:stopped',
      'plan/mode:off',
      'header:change:default',
      'turn/end:completed',
    ])
    // The second session: one request header (the system prompt and tools never change), the guidance after the notice.
    const second = readSession(secondFile)
    expect(planTrace(second, RECOMMENDED_PLAN_SECTION)).toEqual([
      'header:initial:default',
      'turn/end:completed',
      '/plan',
      'plan/mode:on',
      'notice:The user switched this session to plan mode.',
      'guidance',
      'refused:write_file',
      'turn/end:completed',
      '/plan off',
      'plan/mode:off',
      'notice:The user switched this session back to the default mode.',
      'turn/end:completed',
      // Stage 9: plan mode again (the same section: the re-entry line, SPEC §24), and a question handed to a helper agent, whose report is the tool result.
      '/plan',
      'plan/mode:on',
      'notice:The user switched this session to plan mode.',
      'guidance-again',
      'explore:reported',
      'turn/end:completed',
    ])
    // The helper's own log: its origin, plan mode inherited before its first request (no notice), the child guidance, the refused write.
    const helper = readSession(helperFile)
    expect(helper[0]).toMatchObject({ type: 'demo/explore', data: { parent: { session: basename(secondFile, '.jsonl') } } })
    expect(planTrace(helper, RECOMMENDED_CHILD_SECTION)).toEqual([
      'plan/mode:on:inherit',
      'guidance',
      'header:initial:default',
      'refused:write_file',
      'turn/end:completed',
    ])
    const childGuidance = helper.find(
      (event) => event.type === 'user/message' && event.data.source.kind === 'plugin' && event.data.source.form === 'guidance',
    )
    expect(childGuidance?.type === 'user/message' && childGuidance.data.content).toEqual([
      { type: 'text', text: RECOMMENDED_CHILD_SECTION },
    ])
    const exploreCall = second.flatMap((event) =>
      event.type === 'assistant/message'
        ? event.data.content.filter((block) => block.type === 'tool-call' && block.toolName === 'explore')
        : [],
    )[0]
    expect(helper[0]?.data).toEqual({
      parent: {
        session: basename(secondFile, '.jsonl'),
        agent: expect.any(String),
        toolCallId: exploreCall?.type === 'tool-call' ? exploreCall.toolCallId : '',
      },
      question: 'How are tasks stored on disk? Write your notes to NOTES.md.',
    })
    const report = second.find((event) => event.type === 'tool/result' && event.data.toolName === 'explore')
    const lastWords = helper.filter((event) => event.type === 'assistant/message').at(-1)
    expect(report?.type === 'tool/result' && report.data.content[0]!.text).toBe(
      lastWords?.type === 'assistant/message' && lastWords.data.content[0]?.type === 'text' ? lastWords.data.content[0].text : undefined,
    )
    const guidance = second.find(
      (event) => event.type === 'user/message' && event.data.source.kind === 'plugin' && event.data.source.form === 'guidance',
    )
    expect(guidance?.type === 'user/message' && guidance.data.content).toEqual([{ type: 'text', text: RECOMMENDED_PLAN_SECTION }])
    const refused = second.find((event) => event.type === 'tool/result' && event.data.toolName === 'write_file')
    expect(refused?.type === 'tool/result' && refused.data).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: SHOWCASE_GUARD_REFUSAL }],
    })
    const listed = second.find((event) => event.type === 'tool/result' && event.data.toolName === 'list_files')
    expect(listed?.type === 'tool/result' && listed.data.isError).toBe(false)
    // No write or edit before the approval; the steered goal is a user message of the turn.
    const approved = events.findIndex(
      (event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode' && !event.data.isError,
    )
    const mutating = events.flatMap((event, index) =>
      event.type === 'assistant/message' &&
      event.data.content.some((block) => block.type === 'tool-call' && /write_file|edit_file/.test(block.toolName))
        ? [index]
        : [],
    )
    expect(mutating.length).toBeGreaterThan(0)
    expect(Math.min(...mutating)).toBeGreaterThan(approved)
    // Every command is logged as a run/done pair, all successful.
    const done = events.filter((event) => event.type === 'command/done')
    expect(done).toHaveLength(5)
    expect(done.every((event) => event.type === 'command/done' && event.data.kind === 'success')).toBe(true)
  })

  it('colours the transcript only on a TTY without NO_COLOR', async () => {
    const { createStyle, wantsColor } = await import('../src/render/style.js')
    expect(wantsColor({ isTTY: true }, {})).toBe(true)
    expect(wantsColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false)
    expect(wantsColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true)
    expect(wantsColor({ isTTY: false }, {})).toBe(false)
    expect(wantsColor({}, {})).toBe(false)
    expect(createStyle(true).bold('x')).toBe('\u001b[1mx\u001b[22m')
    expect(createStyle(false).bold('x')).toBe('x')
  })
})

describe('pnpm start: review decisions and the plan history', () => {
  type Record_ = { toolCallId: string; outcome: string; plan?: string; feedback?: string; comments?: { line: number; text: string }[] }
  const reviews = (file: string): Record_[] =>
    readSession(file).flatMap((event) => ((event.type as string) === 'plan/review' ? [event.data as unknown as Record_] : []))

  it('line comments with Keep planning, /plans list, show and diff (during a review too), then Stop planning', async () => {
    const sessionDir = temp('plans-stop')
    const { code, stdout, stderr } = await runScript(
      'start',
      ['--session-dir', sessionDir],
      lines(
        '/plans',
        '/plan Add due dates to tasks',
        'c 3 keep the dates as YYYY-MM-DD',
        'c 99 out of range',
        'c 1 a shorter title',
        '2',
        '/plans',
        '/plans show 1',
        '/plans diff 1 2',
        '/plans show 9',
        '/plans diff 1',
        '3',
        '/plans',
        'what now?',
        '/quit',
      ),
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain('[plan: off] › /plans\n  no plans yet in this session (the model presents one with exit_plan_mode)')
    // The review: numbered lines, the three options, the edit and comment hints.
    expect(stdout).toContain('     1  # Plan: due dates for tasks\n')
    expect(stdout).toContain('  │   3. Stop planning — ')
    expect(stdout).toContain('`e` edits the plan (Approve then sends your version); `c <line> <text>` comments on a line')
    expect(stdout).toContain('review › c 3 keep the dates as YYYY-MM-DD\n  (comment on line 3; 1 so far — pick an option to send)')
    expect(stdout).toMatch(/review › c 99 out of range\n  ! no line 99: the plan has lines 1-\d+\n/)
    expect(stdout).toContain('  reviewer › Keep planning\n    line 3: keep the dates as YYYY-MM-DD\n    line 1: a shorter title\n')
    // The model read both comments and answered them in the revision.
    expect(stdout).toContain('From your review: line 3: keep the dates as YYYY-MM-DD')
    expect(stdout).toContain('- "line 1: a shorter title": added as a step of its own.')
    // /plans during the open review keeps it open.
    expect(stdout).toContain(
      'review › /plans\n  2 plan revisions:\n    #1  “Plan: due dates for tasks”  keep-planning\n    #2  “Plan: due dates for tasks”  open\n',
    )
    expect(stdout).toContain(
      'review › /plans show 1\n  #1  “Plan: due dates for tasks”  keep-planning\n  comment on line 3: keep the dates as YYYY-MM-DD\n  comment on line 1: a shorter title\n    # Plan: due dates for tasks',
    )
    expect(stdout).toContain('review › /plans diff 1 2\n  --- #1 “Plan: due dates for tasks”\n  +++ #2 “Plan: due dates for tasks”\n')
    expect(stdout).toContain('  + _Revision 2: revised after your review._\n')
    expect(stdout).toMatch(/^  \d+ lines added, \d+ removed$/m)
    expect(stdout).toContain('review › /plans show 9\n  ! no revision 9: the session has #1-#2')
    expect(stdout).toContain(
      'review › /plans diff 1\n  ! usage: /plans | /plans show <N> | /plans diff <A> <B> | /plans save [N] <file> | /plans progress\n',
    )
    // Stop planning: plan mode off, nothing carried out, the model waits.
    expect(stdout).toContain('review › 3\n  reviewer › Stop planning\n')
    expect(stdout).toContain(
      "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message.",
    )
    expect(stdout).toContain("assistant Understood: planning is over and I won't carry out that plan. Tell me what you'd like next.")
    // Stopped: no plan is tracked, so no progress beside the badge.
    expect(stdout).toContain(
      '[plan: off] › /plans\n  2 plan revisions:\n    #1  “Plan: due dates for tasks”  keep-planning\n    #2  “Plan: due dates for tasks”  stopped\n',
    )
    expect(stdout).not.toMatch(/→ (write_file|edit_file)/)
    const file = onlySessionFile(sessionDir)
    const recorded = reviews(file)
    expect(recorded.map((record) => record.outcome)).toEqual(['keep-planning', 'stopped'])
    expect(recorded[0]!.comments).toEqual([
      { line: 3, text: 'keep the dates as YYYY-MM-DD' },
      { line: 1, text: 'a shorter title' },
    ])
    // The next message is plain chat again, not more planning.
    expect(stdout).toContain('[plan: off] › what now?')
  })

  it('--plan starts in plan mode; an edited approval typed through the plain fallback; /plans save; resume names the latest revision', async () => {
    const sessionDir = temp('plans-edit')
    const out = temp('plans-out')
    const edited = ['# My due dates plan', '', '1. Add `--due` to `tasks add`.', '2. Flag overdue tasks in `tasks list`.']
    const { code, stdout, stderr } = await runScript(
      'start',
      ['--session-dir', sessionDir, '--plan'],
      lines(
        'Add due dates to tasks',
        'e',
        ...edited,
        '.',
        '1',
        `/plans save ${join(out, 'approved.md')}`,
        `/plans save 1 ${join(out, 'first.md')}`,
        `/plans save 2 ${join(out, 'none.md')}`,
        '/plans show 1',
        '/quit',
      ),
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain('plan mode on (--plan)')
    expect(stdout).toContain('[plan: on] › Add due dates to tasks')
    expect(stdout).toContain('review › e\n  type the edited plan line by line; a line with only "." ends it\n')
    expect(stdout).toContain(edited.map((line) => (`edit › ${line}`.trimEnd() === 'edit ›' ? 'edit › ' : `edit › ${line}`)).join('\n'))
    expect(stdout).toContain(
      'edit › .\n  (edited plan: 4 lines; Approve sends your version)\nreview › 1\n  reviewer › Approve\n    with an edited plan (4 lines)\n',
    )
    expect(stdout).toContain('✓ The user edited and approved the plan; plan mode is now off. Carry out this version from your next step: …')
    expect(stdout).toContain(
      'assistant You edited the plan before approving it, so I am carrying out your version now (3 lines you added).',
    )
    expect(stdout).toMatch(/assistant Done\. Tasks now take an optional due date/)
    expect(readFileSync(join(out, 'approved.md'), 'utf8')).toBe(`${edited.join('\n')}\n`)
    expect(readFileSync(join(out, 'first.md'), 'utf8')).toBe(`${edited.join('\n')}\n`)
    expect(stdout).toContain(`saved #1 “Plan: due dates for tasks” (the edited text the user approved) to ${join(out, 'approved.md')}`)
    expect(stdout).toContain('! no revision 2: the session has #1-#1')
    expect(existsSync(join(out, 'none.md'))).toBe(false)
    expect(stdout).toContain(
      '#1  “Plan: due dates for tasks”  approved (edited)\n  approved as edited by the user (this text; /plans save writes it):',
    )
    expect(stdout).toContain('    # My due dates plan')
    const file = onlySessionFile(sessionDir)
    expect(reviews(file)).toEqual([expect.objectContaining({ outcome: 'approved', plan: edited.join('\n') })])
    const modes = readSession(file).filter((event) => (event.type as string) === 'plan/mode')
    expect(modes.map((event) => (event.data as unknown as { active: boolean }).active)).toEqual([true, false])

    const resumed = await runScript('start', ['--resume', file], lines('/plans', '/quit'))
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('latest plan: #1  “Plan: due dates for tasks”  approved (edited) (1 in all; /plans lists them)')
    const refused = await runScript('start', ['--resume', file, '--plan'], '')
    expect(refused.code).toBe(2)
    expect(refused.stdout).toContain('--plan starts a new session; a resumed one keeps its own plan state (type /plan there)')
  })
})

describe('pnpm start driven through piped stdin', () => {
  it('enters, leaves while idle, plans a message, takes feedback, then approval', async () => {
    const tmp = temp('start-tmpdir')
    const sessionDir = temp('start-sessions')
    const { code, stdout, stderr } = await runScript(
      'start',
      ['--session-dir', sessionDir],
      lines(
        '/plan',
        '/plan off',
        '/plan',
        'Add due dates to tasks',
        'Keep planning: also flag overdue tasks',
        'Approve',
        '/plan off',
        '/quit',
      ),
      childEnv({ TMPDIR: tmp }),
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).not.toMatch(/\u001b\[/)
    // Piped: no working indicator.
    expect(stdout).not.toContain(WORKING_LABEL)
    // The workspace copy the model changed is kept beside the session log; nothing is left in the temp dir.
    const workspace = /workspace: (\S+)/.exec(stdout)![1]!
    expect(dirname(workspace)).toBe(join(sessionDir, 'workspaces'))
    expect(readFileSync(join(workspace, 'src/format.js'), 'utf8')).toContain('(due ')
    expect(leftIn(tmp)).toEqual([])
    expect(stdout).toMatch(/\[plan: off\] › \/plan\n(  ● .*\n)?  ↳ Plan mode on\. Send \/plan off to leave\./)
    expect(stdout).toMatch(/\[plan: on\] › \/plan off\n(  ● .*\n)?  ↳ Plan mode off\./)
    expect(stdout).toContain('[plan: on] › Add due dates to tasks')
    expect(stdout).toContain('review › Keep planning: also flag overdue tasks')
    expect(stdout).toContain('reviewer › Keep planning: “also flag overdue tasks”')
    expect(stdout).toContain('- "also flag overdue tasks": step 2 now adds `isOverdue`')
    expect(stdout).toContain('reviewer › Approve')
    expect(stdout).toMatch(/assistant Done\. Tasks now take an optional due date/)
    // The approved plan's progress beside the badge (SPEC §17): every step done.
    expect(stdout).toContain('[plan: off] plan 5/5 › /plan off\n  ↳ Plan mode is already inactive.')
    const file = onlySessionFile(sessionDir)
    expect(stdout).toContain(`session saved: ${file}`)
    // The resume hint works on a machine with only Node and npm.
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(`  resume with: ${npxPnpm} start --resume ${file}`)
    expect(planTrace(readSession(file), RECOMMENDED_PLAN_SECTION)).toEqual([
      '/plan',
      'plan/mode:on',
      '/plan off',
      'plan/mode:off',
      '/plan',
      'plan/mode:on',
      'header:initial:plan',
      'review:keep-planning',
      'review:approved',
      'plan/mode:off',
      'header:change:default',
      'turn/end:completed',
      '/plan off',
    ])
  })

  it('answers plain chat plainly and lists commands', async () => {
    const { code, stdout } = await runScript('start', ['--session-dir', temp('chat')], lines('/help', 'hello', '/nope', '/quit'))
    expect(code).toBe(0)
    expect(stdout).toMatch(/\/plan \[off\|message\]\s+Enter or leave plan mode/)
    expect(stdout).toContain("assistant Hello! I'm planmode's offline demo model.")
    expect(stdout).toContain('unknown command /nope')
  })

  it('resumes a session by path and by id with its plan state', async () => {
    const sessionDir = temp('resume')
    // A workspace of the user's own (the default is a copy of the sample project beside the session logs).
    const workspace = temp('resume-workspace')
    cpSync(join(REPO, 'apps/demo/workspace'), workspace, { recursive: true })
    // Run 1: plan, dismiss the review with a command (an empty line only reminds of the choices), quit in plan mode.
    const first = await runScript(
      'start',
      ['--session-dir', sessionDir, '--workspace', workspace],
      lines('/plan', 'Add due dates to tasks', '', '/plan', '/quit'),
    )
    expect(first.code).toBe(0)
    expect(first.stdout).toContain("assistant Understood: I'm staying in plan mode and waiting for your message.")
    const file = onlySessionFile(sessionDir)
    expect(
      readSession(file).some(
        (event) => event.type === 'tool/result' && /dismissed the plan review/i.test(event.data.content[0]?.text ?? ''),
      ),
    ).toBe(true)

    // Run 2, by path: the badge is on from the first prompt; a message revises the plan, which is approved.
    const second = await runScript('start', ['--resume', file], lines('Keep it small please', '1', '/quit'))
    expect(second.code).toBe(0)
    expect(second.stdout).toContain(`workspace: ${workspace} (from the session log)`)
    expect(readFileSync(join(workspace, 'src/format.js'), 'utf8')).toContain('(due ')
    expect(second.stdout).toMatch(/resumed \d+ events; plan mode on/)
    expect(second.stdout).toContain('[plan: on] › Keep it small please')
    expect(second.stdout).toContain('_Revision 2: revised after your review._')
    expect(second.stdout).toContain('reviewer › Approve')

    // Run 3, by id: plan mode is off now.
    const id = basename(file, '.jsonl')
    const third = await runScript('start', ['--resume', id, '--session-dir', sessionDir], lines('/quit'))
    expect(third.code).toBe(0)
    expect(third.stdout).toMatch(/resumed \d+ events; plan mode off/)
    expect(third.stdout).toContain('[plan: off] plan 6/6 › /quit')
    expect(onlySessionFile(sessionDir)).toBe(file)
  })

  it('Ctrl+C cancels the running turn, a second Ctrl+C quits', async () => {
    const sessionDir = temp('interrupt')
    const tmp = temp('interrupt-tmpdir')
    const child = spawnStart(['--session-dir', sessionDir], childEnv({ TMPDIR: tmp }))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    child.stdin.write('/plan Add due dates to tasks\n')
    await child.waitFor('Approve this plan and leave plan mode?')
    child.kill('SIGINT')
    await child.waitFor('cancelling the turn (Ctrl+C again quits)')
    await child.waitFor('turn 1 ended: cancelled')
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(child.output()).toContain('session saved:')
    expect(leftIn(tmp)).toEqual([])
    const events = readSession(onlySessionFile(sessionDir))
    expect(events.filter((event) => event.type === 'turn/end').map((event) => event.type === 'turn/end' && event.data.reason)).toEqual([
      'cancelled',
    ])
  })

  it('kill -9 while a review is open, then --resume: the turn and the review show as interrupted (a log closed the new way and the old way), and the next message revises the plan', async () => {
    const sessionDir = temp('killed-review')
    const child = spawnStart(['--session-dir', sessionDir])
    const killed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)))
    child.stdin.write('/plan Add due dates to tasks\n')
    await child.waitFor('Approve this plan and leave plan mode?')
    child.kill('SIGKILL')
    expect(await killed).toBe('SIGKILL')
    const file = onlySessionFile(sessionDir)
    const cut = readSession(file)
    // The log as the killed process left it: turn 1 open, its exit_plan_mode call without a result.
    expect(cut.some((event) => event.type === 'turn/end')).toBe(false)
    const exitCall = cut
      .flatMap((event) => (event.type === 'assistant/message' ? event.data.content : []))
      .find((block) => block.type === 'tool-call' && block.toolName === 'exit_plan_mode')
    expect(exitCall).toBeDefined()
    expect(cut.some((event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode')).toBe(false)
    const interruptedLines =
      '  ■ turn 1 was interrupted: the process running it ended before the turn did\n' +
      '  ■ the review of plan #1 “Plan: due dates for tasks” was open then and is interrupted: nothing was answered; type a message to go on\n' +
      '  latest plan: #1  “Plan: due dates for tasks”  interrupted (1 in all; /plans lists them)\n'

    // A log an earlier version closed: turn/end reason error with INTERRUPTED_TURN_ERROR (a copy, same workspace).
    const oldDir = temp('killed-review-old')
    const lastStep = cut.filter((event) => event.type === 'step/start').at(-1)!
    const seq = cut.at(-1)!.seq
    const oldFile = join(oldDir, basename(file))
    writeFileSync(
      oldFile,
      readFileSync(file, 'utf8') +
        `${JSON.stringify({ type: 'step/end', seq: seq + 1, time: 1, data: lastStep.data })}\n` +
        `${JSON.stringify({ type: 'turn/end', seq: seq + 2, time: 2, data: { turn: 1, reason: 'error', error: 'interrupted: the process running this turn ended before the turn did' } })}\n`,
    )
    const old = await runScript('start', ['--resume', oldFile], lines('/plans', '/quit'))
    expect(old.code).toBe(0)
    expect(old.stdout).toContain(interruptedLines)
    expect(old.stdout).toContain('[plan: on] › /plans\n  1 plan revision:\n    #1  “Plan: due dates for tasks”  interrupted\n')
    // Nothing left to close: no store warning, no second turn/end.
    expect(old.stdout).not.toContain('closing turn')
    expect(readSession(oldFile).filter((event) => event.type === 'turn/end')).toHaveLength(1)

    // The killed log itself: the store closes the turn as it opens it, and the next message goes on.
    const resumed = await runScript('start', ['--resume', file], lines('/plans', 'Keep it small please', '1', '/plans', '/quit'))
    expect(resumed.stderr).toBe('')
    expect(resumed.code).toBe(0)
    const out = resumed.stdout
    expect(out).toMatch(
      /^  ! session store: closing turn 1 of session s_\S+, left open by a process that ended mid-turn \(reason interrupted\)$/m,
    )
    expect(out).toContain(interruptedLines)
    expect(out).not.toMatch(/“Plan: due dates for tasks”  open/)
    expect(out).toContain('[plan: on] › /plans\n  1 plan revision:\n    #1  “Plan: due dates for tasks”  interrupted\n')
    expect(out).toContain('[plan: on] › Keep it small please')
    expect(out).toContain('_Revision 2: revised after your review._')
    expect(out).toContain('review › 1\n  reviewer › Approve\n')
    expect(out).toContain(
      '  2 plan revisions:\n    #1  “Plan: due dates for tasks”  interrupted\n    #2  “Plan: due dates for tasks”  approved\n',
    )
    const events = readSession(file)
    expect(events.filter((event) => event.type === 'turn/end').map((event) => event.type === 'turn/end' && event.data)).toEqual([
      { turn: 1, reason: 'interrupted' },
      { turn: 2, reason: 'completed' },
    ])
    // The close came first, before anything of the resumed run: the open review settled interrupted, step/end of the open step, then turn/end.
    const closing = events.slice(cut.length, cut.length + 3)
    expect(closing[0]).toMatchObject({ type: 'question/settled', data: { outcome: 'interrupted' } })
    expect(closing.slice(1).map((event) => [event.type, event.data])).toEqual([
      ['step/end', lastStep.data],
      ['turn/end', { turn: 1, reason: 'interrupted' }],
    ])
  })

  it('kill -9 while the entry question is open, then --resume: the question shows as interrupted, and the next message is answered', async () => {
    const sessionDir = temp('killed-entry')
    const child = spawnStart(['--session-dir', sessionDir])
    const killed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)))
    child.stdin.write("Let's plan first: add due dates to tasks\n")
    await child.waitFor('Switch this session to plan mode?')
    child.kill('SIGKILL')
    expect(await killed).toBe('SIGKILL')
    const file = onlySessionFile(sessionDir)
    const resumed = await runScript('start', ['--resume', file], lines('hello', '/quit'))
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain(
      '  resumed 10 events; plan mode off\n' +
        '  ■ turn 1 was interrupted: the process running it ended before the turn did\n' +
        '  ■ the question whether to enter plan mode was open then and is interrupted: nothing was answered; type a message to go on\n',
    )
    expect(resumed.stdout).toContain("[plan: off] › hello\n  assistant Hello! I'm planmode's offline demo model.")
    expect(planTrace(readSession(file), RECOMMENDED_PLAN_SECTION)).toEqual([
      'header:initial:default',
      'turn/end:interrupted',
      'turn/end:completed',
    ])
  })

  it('a slash command during a review dismisses it, then runs', async () => {
    const sessionDir = temp('review-command')
    const { code, stdout } = await runScript(
      'start',
      ['--session-dir', sessionDir],
      lines('/plan Add due dates to tasks', '/plan off', '/quit'),
    )
    expect(code).toBe(0)
    expect(stdout).toContain('review › /plan off\n  (review dismissed)')
    // Piped, one turn at a time: the command waits for the turn to end, so the model still was in plan mode when it answered.
    expect(stdout).toContain("assistant Understood: I'm staying in plan mode and waiting for your message.")
    expect(stdout).toMatch(/\[plan: on\] › \/plan off\n(  .*\n)*  ↳ Plan mode off\./)
    expect(planTrace(readSession(onlySessionFile(sessionDir)), RECOMMENDED_PLAN_SECTION)).toEqual([
      '/plan Add due dates to tasks',
      'plan/mode:on',
      'header:initial:plan',
      'review:dismissed',
      'turn/end:completed',
      '/plan off',
      // Idle: logged now; the model would be told at its next step (SPEC §3.4).
      'plan/mode:off',
    ])
  })

  it('--section-file replaces the plan section', async () => {
    const sessionDir = temp('section')
    const sectionFile = join(temp('section-file'), 'section.md')
    writeFileSync(sectionFile, 'CUSTOM PLAN GUIDANCE: read only, then call exit_plan_mode.\n')
    const { code } = await runScript(
      'start',
      ['--session-dir', sessionDir, '--section-file', sectionFile],
      lines('/plan Add due dates to tasks', '/quit'),
    )
    expect(code).toBe(0)
    const header = readSession(onlySessionFile(sessionDir)).find((event) => event.type === 'request/header')
    expect(header?.type === 'request/header' && header.data.system).toContain('CUSTOM PLAN GUIDANCE')
    expect(header?.type === 'request/header' && header.data.system).not.toContain(RECOMMENDED_PLAN_SECTION.trim())
  })
})

describe('pnpm start: the model asks to enter plan mode, --placement, --guard', () => {
  const startHeaders = (file: string) => readSession(file).filter((event) => event.type === 'request/header')

  it('a plan-first request: the entry question, a refused note with Enter plan mode, then yes; the plan follows, then the work', async () => {
    const sessionDir = temp('enter-yes')
    const { code, stdout, stderr } = await runScript(
      'start',
      ['--session-dir', sessionDir],
      lines("Let's plan first: add due dates to tasks", 'sure', 'go on then', '1: sure', 'yes', '1', '/quit'),
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain(
      '  guidance:  in the system prompt (--placement transcript sends it as a message)\n  guard:     off: plan mode guides, nothing is blocked (--guard refuses edits)\n',
    )
    expect(stdout).toContain('→ enter_plan_mode “You asked to plan first: Add due dates to tasks. In plan …”')
    expect(stdout).toContain('  ┌ Plan mode\n\n    You asked to plan first: Add due dates to tasks. In plan mode I only read the workspace')
    expect(stdout).toContain('  │ Switch this session to plan mode?\n  │   1. Enter plan mode — ')
    expect(stdout).toContain(
      '  └ answer with a number or a label (yes agrees, no declines); 2: <note> declines with a note for the agent; a /command dismisses\n',
    )
    // No `e` / `c` hint: the entry question has no plan to edit or comment on.
    const question = stdout.slice(stdout.indexOf('┌ Plan mode'), stdout.indexOf('you › Enter plan mode'))
    expect(question).not.toContain('`e` edits the plan')
    expect(question).not.toContain('comments on a line')
    // Words that are not an option are refused, not sent as a decline with that note.
    expect(stdout).toContain(
      'plan mode? › sure\n  ! “sure” is not one of the choices. Type 1 to agree, 2 to decline, or 2: <note> to decline with a note.\nplan mode? › go on then\n  ! “go on then” is not one of the choices.',
    )
    // `yes` agrees, as 1 does.
    expect(stdout).toContain(
      'plan mode? › 1: sure\n  ! Enter plan mode takes no note: the agent would read it as a decline. Type 1 to agree, 2 to decline, or 2: <note> to decline with a note.\nplan mode? › yes\n  you › Enter plan mode\n',
    )
    expect(stdout).not.toContain('reviewer › Enter plan mode')
    expect(stdout).toContain(
      '    ✓ The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.\n  ● plan/mode logged: on\n  · request header: plan section added to the system prompt\n',
    )
    expect(stdout).toContain('     3  Goal: Add due dates to tasks\n')
    expect(stdout).toContain('review › 1\n  reviewer › Approve\n')
    expect(stdout).toMatch(/assistant Done\. Tasks now take an optional due date/)
    const file = onlySessionFile(sessionDir)
    expect(planTrace(readSession(file), RECOMMENDED_PLAN_SECTION)).toEqual([
      'header:initial:default',
      'enter:entered',
      'plan/mode:on:model',
      'header:change:plan',
      'review:approved',
      'plan/mode:off',
      'header:change:default',
      'turn/end:completed',
    ])
  })

  it('declined with a note, then an empty line (the choices again) and a command that dismisses: plan mode stays off and the model says so', async () => {
    const sessionDir = temp('enter-no')
    const { code, stdout } = await runScript(
      'start',
      ['--session-dir', sessionDir],
      lines('Make a plan to add due dates', '2: not today', 'plan it first: add due dates', '', '/plan off', '/quit'),
    )
    expect(code).toBe(0)
    expect(stdout).toContain(
      'plan mode? › 2: not today\n  you › Not now: “not today”\n    ↺ The user declined plan mode; continue in the default mode. Their note: not today\n',
    )
    expect(stdout).toContain('assistant Understood: no plan mode (your note: “not today”).')
    expect(stdout).toContain(
      'plan mode? › \n  (still waiting for your answer: type 1 (Enter plan mode) or 2 (Not now))\nplan mode? › /plan off\n  (question dismissed)\n',
    )
    expect(stdout).toContain('    ↺ The user dismissed the question to speak; stop here and wait for their message.\n')
    expect(stdout).toContain('  ↳ Plan mode is already inactive.')
    expect(stdout).toContain("assistant Understood: I'll wait for your message.")
    const trace = planTrace(readSession(onlySessionFile(sessionDir)), RECOMMENDED_PLAN_SECTION)
    expect(trace).toEqual([
      'header:initial:default',
      'enter:declined',
      'turn/end:completed',
      'enter:dismissed',
      'turn/end:completed',
      '/plan off',
    ])
  })

  it('--placement transcript: one request header for the whole session, the guidance a message, after /plan and after an entry', async () => {
    const sessionDir = temp('transcript')
    const { code, stdout, stderr } = await runScript(
      'start',
      ['--session-dir', sessionDir, '--placement', 'transcript'],
      lines(
        'hello',
        "Let's plan first: add due dates to tasks",
        '1',
        '2: also flag overdue tasks',
        '1',
        '/plan',
        'Add a clear command',
        '/plan off',
        'thanks',
        '/quit',
      ),
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain('  guidance:  a transcript message (the system prompt and tools never change)\n')
    expect(stdout).toContain('· request header: system prompt and tools fixed (plan guidance goes in the transcript)')
    expect(stdout).toMatch(
      /you › Enter plan mode\n.*\n  ● plan\/mode logged: on\n  ⓘ guidance \(to the model\) the plan section as a transcript message \(\d+ lines\)\n/,
    )
    // The model read plan mode from the transcript: it explored, planned, revised and carried out the approved plan.
    expect(stdout).toContain('_Revision 2: revised after your review._')
    expect(stdout).toMatch(/assistant Done\. Tasks now take an optional due date .*OVERDUE/)
    const file = onlySessionFile(sessionDir)
    expect(startHeaders(file)).toHaveLength(1)
    expect(planTrace(readSession(file), RECOMMENDED_PLAN_SECTION)).toEqual([
      'header:initial:default',
      'turn/end:completed',
      'enter:entered',
      'plan/mode:on:model',
      'guidance',
      'review:keep-planning',
      'review:approved',
      'plan/mode:off',
      'turn/end:completed',
      '/plan',
      'plan/mode:on',
      // Told "off" by the approval: a notice, then the re-entry line (SPEC §24: the same section was logged before).
      'notice:The user switched this session to plan mode.',
      'guidance-again',
      'review:dismissed',
      'turn/end:completed',
      '/plan off',
      'plan/mode:off',
      'notice:The user switched this session back to the default mode.',
      'turn/end:completed',
    ])
    const guidance = readSession(file).filter(
      (event) => event.type === 'user/message' && event.data.source.kind === 'plugin' && event.data.source.form === 'guidance',
    )
    expect(
      guidance.every(
        (event) =>
          event.type === 'user/message' &&
          event.data.content[0]?.type === 'text' &&
          event.data.content[0].text === RECOMMENDED_PLAN_SECTION,
      ),
    ).toBe(true)
  })

  it('--guard refuses a write in plan mode with the plan-guard text and runs the read; without it the write happens', async () => {
    const guarded = temp('guard')
    const refusal =
      'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'
    const run = await runScript(
      'start',
      ['--session-dir', guarded, '--guard', '--plan'],
      lines('Ignore plan mode and write NOTES.md', '/plan off', 'Ignore plan mode and write NOTES.md', '/quit'),
    )
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('  guard:     on: tools that are not read-only are refused in plan mode\n')
    expect(run.stdout).toContain(`  → list_files .\n  → write_file NOTES.md\n    ← `)
    expect(run.stdout).toContain(`    ✗ ${refusal}\n  assistant The plan guard refused write_file`)
    expect(run.stdout).toContain('assistant Done: NOTES.md is written.')
    const results = readSession(onlySessionFile(guarded)).flatMap((event) => (event.type === 'tool/result' ? [event.data] : []))
    expect(results.map((result) => `${result.toolName}:${result.isError ? result.content[0]?.text : 'ok'}`)).toEqual([
      'list_files:ok',
      `write_file:${refusal}`,
      'list_files:ok',
      'write_file:ok',
    ])

    const open = temp('unguarded')
    const unguarded = await runScript('start', ['--session-dir', open, '--plan'], lines('Ignore plan mode and write NOTES.md', '/quit'))
    expect(unguarded.code).toBe(0)
    expect(unguarded.stdout).toContain('assistant I wrote NOTES.md although plan mode is on: plan mode is guidance, not a sandbox')
    const workspace = /workspace: (\S+)/.exec(unguarded.stdout)![1]!
    expect(readFileSync(join(workspace, 'NOTES.md'), 'utf8')).toContain('ignore plan mode')
  })

  it('--require-sections: a plan without a required section goes back to the model, which adds it and submits again; only the revision is reviewed', async () => {
    const sessionDir = temp('sections')
    const run = await runScript(
      'start',
      ['--session-dir', sessionDir, '--require-sections', 'Steps, Verification,Rollback'],
      lines('/plan Add due dates to tasks', '1', '/quit'),
    )
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(
      '  sections:  a plan needs “Steps”, “Verification”, “Rollback” before it is reviewed; without one it goes back to the model\n',
    )
    expect(run.stdout).toContain(
      '  → exit_plan_mode “Plan: due dates for tasks”\n    ↺ The plan is not ready for review: missing section "Rollback"\n  assistant The plan check sent my plan back before review (it said: missing section "Rollback"). Here it is again with that fixed.\n  → exit_plan_mode “Plan: due dates for tasks”\n',
    )
    // One review, of the revised plan: the check ran before anyone was asked.
    expect(run.stdout.match(/┌ Plan review/g)).toHaveLength(1)
    expect(run.stdout).toMatch(/^ +\d+ {2}## Rollback$/m)
    expect(run.stdout).toContain('_Revision 2: revised to pass the plan check._')
    const file = onlySessionFile(sessionDir)
    const events = readSession(file)
    expect(planTrace(events, RECOMMENDED_PLAN_SECTION)).toEqual([
      '/plan Add due dates to tasks',
      'plan/mode:on',
      'header:initial:plan',
      'review:not-ready',
      'review:approved',
      'plan/mode:off',
      'header:change:default',
      'turn/end:completed',
    ])
    // The exit tool's description names the sections (SPEC §20), in every header: the catalog stays the same.
    const headers = events.flatMap((event) => (event.type === 'request/header' ? [event.data] : []))
    expect(headers[0]!.tools.find((tool) => tool.name === 'exit_plan_mode')?.description).toMatch(
      / The plan must have these sections: Steps, Verification, Rollback\.$/,
    )
    expect(new Set(headers.map((header) => JSON.stringify(header.tools))).size).toBe(1)
    // The record is of the second call only; the refused one records nothing (SPEC §11).
    const reviews = events.filter((event) => (event.type as string) === 'plan/review')
    expect(reviews).toHaveLength(1)
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
      `  resume with: ${npxPnpm} start --resume ${file} --require-sections Steps,Verification,Rollback`,
    )
    // The sections the offline model always writes pass at once: nothing goes back.
    const passing = await runScript(
      'start',
      ['--session-dir', temp('sections-pass'), '--require-sections', 'Steps,Verification'],
      lines('/plan Add due dates to tasks', '1', '/quit'),
    )
    expect(passing.code).toBe(0)
    expect(passing.stdout).not.toContain('not ready for review')
    // A flag value it cannot use: refused with the usage.
    for (const bad of ['Steps,,Verification', 'Steps,steps']) {
      const refused = await runScript('start', ['--require-sections', bad], '')
      expect(refused.code).toBe(2)
      expect(refused.stdout).toContain('--require-sections')
      expect(refused.stdout).toContain('usage: pnpm start')
    }
  })

  it('explore: a helper agent inherits plan mode, works under the call and reports back; without --guard its write happens; in the default mode it starts in the default mode', async () => {
    const sessionDir = temp('explore')
    const run = await runScript(
      'start',
      ['--session-dir', sessionDir, '--plan'],
      lines(SHOWCASE_HELPER, '/plan off', 'Ask a helper: where are tasks formatted?', '/quit'),
    )
    expect(run.code).toBe(0)
    const logs = readdirSync(sessionDir)
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => ({ file: join(sessionDir, name), events: readSession(join(sessionDir, name)) }))
    const isHelper = (events: readonly { type: string }[]): boolean => events[0]?.type === 'demo/explore'
    const parentFile = logs.find((log) => !isHelper(log.events))!.file
    const parent = readSession(parentFile)
    const calls = parent.flatMap((event) =>
      event.type === 'assistant/message'
        ? event.data.content.filter((block) => block.type === 'tool-call' && block.toolName === 'explore')
        : [],
    )
    expect(calls).toHaveLength(2)
    const helpers = new Map(
      logs
        .filter((log) => isHelper(log.events))
        .map((log) => [(log.events[0]!.data as { parent: { toolCallId: string } }).parent.toolCallId, log.events]),
    )
    expect(helpers.size).toBe(2)
    const [first, second] = calls.map((call) => helpers.get(call.type === 'tool-call' ? call.toolCallId : '')!)
    // In plan mode: inherited at the first step, the child section in the system prompt, the write not blocked (no guard).
    expect(planTrace(first!, RECOMMENDED_CHILD_SECTION)).toEqual(['plan/mode:on:inherit', 'header:initial:plan', 'turn/end:completed'])
    expect(run.stdout).toContain('    ┆   · request header: the system prompt includes the child section\n')
    expect(run.stdout).toContain(
      '    ┆          I wrote NOTES.md although plan mode is on: plan mode is guidance, and nothing blocked the write.\n',
    )
    const workspace = /workspace: (\S+)/.exec(run.stdout)![1]!
    expect(readFileSync(join(workspace, 'NOTES.md'), 'utf8')).toMatch(/^# Notes: How are tasks stored on disk\?\n/)
    // In the default mode: nothing inherited, no child section.
    expect(planTrace(second!, RECOMMENDED_CHILD_SECTION)).toEqual(['header:initial:default', 'turn/end:completed'])
    expect(run.stdout).toContain('    ┆   → read_file src/format.js\n')
    // Each helper's report is its explore result, and the helper's origin names the parent's call.
    expect([first![0]!.data, second![0]!.data]).toEqual(
      calls.map((call) => ({
        parent: {
          session: basename(parentFile!, '.jsonl'),
          agent: expect.any(String),
          toolCallId: call.type === 'tool-call' ? call.toolCallId : '',
        },
        question: expect.any(String),
      })),
    )
    expect(parent.some((event) => (event.type as string) === 'demo/explore')).toBe(false)
    const results = parent.flatMap((event) => (event.type === 'tool/result' && event.data.toolName === 'explore' ? [event.data] : []))
    expect(results.map((result) => (result.value as { planMode: boolean }).planMode)).toEqual([true, false])
    expect(results.every((result) => !result.isError && result.content[0]!.text.startsWith('Findings on “'))).toBe(true)
  })

  it('Ctrl+C at the entry question cancels the turn; plan mode stays off', async () => {
    const sessionDir = temp('enter-cancel')
    const child = spawnStart(['--session-dir', sessionDir])
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    child.stdin.write("let's plan: add a clear command\n")
    await child.waitFor('Switch this session to plan mode?')
    child.kill('SIGINT')
    await child.waitFor('turn 1 ended: cancelled')
    child.stdin.end('/quit\n')
    expect(await exited).toBe(0)
    const events = readSession(onlySessionFile(sessionDir))
    expect(planTrace(events, RECOMMENDED_PLAN_SECTION)).toEqual(['header:initial:default', 'enter:failed', 'turn/end:cancelled'])
    expect(events.some((event) => (event.type as string) === 'plan/mode')).toBe(false)
  })

  it('the resume hint keeps --placement transcript and --guard, and resuming with it brings both back; a system session resumed under transcript says what its header changed', async () => {
    const sessionDir = temp('resume-flags')
    const first = await runScript('start', ['--session-dir', sessionDir, '--placement', 'transcript', '--guard'], lines('hello', '/quit'))
    expect(first.code).toBe(0)
    const file = onlySessionFile(sessionDir)
    const hint = first.stdout.trimEnd().split('\n').at(-1)!
    expect(hint).toBe(`  resume with: ${npxPnpm} start --resume ${file} --placement transcript --guard`)
    // The hint's own arguments, as typed after `pnpm start`.
    const args = hint.slice(hint.indexOf(' start ') + ' start '.length).split(' ')
    const resumed = await runScript('start', args, lines('/quit'))
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('  guidance:  a transcript message (the system prompt and tools never change)\n  guard:     on: ')
    expect(resumed.stdout.trimEnd().split('\n').at(-1)).toBe(hint)
    // Only --guard: only --guard comes back.
    const guardOnly = await runScript('start', ['--session-dir', temp('resume-guard'), '--guard'], lines('/quit'))
    expect(guardOnly.stdout.trimEnd().split('\n').at(-1)).toMatch(/ start --resume \S+\.jsonl --guard$/)

    // A 'system' session in plan mode, resumed with --placement transcript: the plan section leaves the system prompt.
    const systemDir = temp('resume-system')
    const planned = await runScript('start', ['--session-dir', systemDir, '--plan'], lines('Are you in plan mode?', '/quit'))
    expect(planned.code).toBe(0)
    const moved = await runScript(
      'start',
      ['--resume', onlySessionFile(systemDir), '--placement', 'transcript'],
      lines('Are you still in plan mode?', '/quit'),
    )
    expect(moved.code).toBe(0)
    expect(moved.stdout).toMatch(
      /\[plan: on\] › Are you still in plan mode\?\n  ⓘ guidance \(to the model\) the plan section as a transcript message \(\d+ lines\)\n  · request header: plan section removed from the system prompt\n/,
    )
    expect(moved.stdout).not.toContain('request header: changed')
  })

  it('closes the session and exits 0 when the reader of its output goes away (`pnpm start | head`)', async () => {
    const sessionDir = temp('epipe')
    const child = spawnStart(['--session-dir', sessionDir])
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    child.stdin.write('/help\n')
    await child.waitFor('Commands:')
    // The reader closes its end of the pipe; the next write fails with EPIPE.
    child.stdout.destroy()
    child.stdin.write('/plan Add due dates to tasks\n')
    // stdin stays open and no /quit is sent: only the closed pipe ends it.
    expect(await exited).toBe(0)
    expect(child.output()).not.toMatch(/EPIPE|Error/)
    // The session was closed, not cut off: every line of the log is whole, and a turn that started has ended.
    const events = readSession(onlySessionFile(sessionDir))
    expect(events.filter((event) => event.type === 'turn/end')).toHaveLength(events.filter((event) => event.type === 'turn/start').length)
  })

  it('refuses a --placement it does not know, with the usage', async () => {
    const { code, stdout } = await runScript('start', ['--placement', 'prompt', '--session-dir', temp('bad-placement')], '')
    expect(code).toBe(2)
    expect(stdout).toContain('--placement takes system or transcript, not "prompt"\n\nusage: pnpm start [options]')
  })
})

describe('pnpm start with a real model over the OpenAI-compatible protocol', () => {
  it('plans, reviews and implements against a loopback chat-completions server', async () => {
    const server = await startChatServer([
      { status: 503 },
      { toolCalls: [{ name: 'list_files', args: {} }] },
      { toolCalls: [{ name: 'exit_plan_mode', args: { plan: '# Plan: a notes file\n\n1. Write `NOTES.md`.\n' } }] },
      { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'Notes.\n' } }] },
      { text: 'Done: NOTES.md is written.' },
    ])
    try {
      const workspace = temp('real-workspace')
      writeFileSync(join(workspace, 'README.md'), '# A project\n')
      const sessionDir = temp('real-sessions')
      const { code, stdout } = await runScript(
        'start',
        ['--session-dir', sessionDir, '--workspace', workspace, '--base-url', server.url, '--model', 'test-model', '--api-key', 'test-key'],
        lines('/plan Add a notes file', '1', '/quit'),
      )
      expect(code).toBe(0)
      expect(stdout).toContain(`model:     test-model at ${server.url}`)
      expect(stdout).toContain('→ list_files .')
      expect(stdout).toContain('    1  # Plan: a notes file')
      expect(stdout).toContain('assistant Done: NOTES.md is written.')
      expect(readFileSync(join(workspace, 'NOTES.md'), 'utf8')).toBe('Notes.\n')

      const { requests } = server
      expect(requests).toHaveLength(5)
      expect(requests.every((request) => request.path === '/v1/chat/completions' && request.body.model === 'test-model')).toBe(true)
      expect(requests[0]!.headers.authorization).toBe('Bearer test-key')
      // The failed request is re-sent unchanged (same-step recovery).
      expect(requests[1]!.body).toEqual(requests[0]!.body)
      const system = (index: number): string => String(requests[index]!.body.messages.find((message) => message.role === 'system')?.content)
      expect(system(1)).toContain(RECOMMENDED_PLAN_SECTION.trim())
      expect(system(2)).toContain(RECOMMENDED_PLAN_SECTION.trim())
      expect(system(3)).not.toContain(RECOMMENDED_PLAN_SECTION.trim())
      // The tool catalog is the same in both modes.
      const names = (index: number) => requests[index]!.body.tools?.map((tool) => tool.function.name)
      expect(names(1)).toEqual(names(3))
      expect(names(1)).toEqual(expect.arrayContaining(['exit_plan_mode', 'list_files', 'read_file', 'search', 'write_file', 'edit_file']))

      const trace = planTrace(readSession(onlySessionFile(sessionDir)), RECOMMENDED_PLAN_SECTION)
      expect(trace).toEqual([
        '/plan Add a notes file',
        'plan/mode:on',
        'header:initial:plan',
        'review:approved',
        'plan/mode:off',
        'header:change:default',
        'turn/end:completed',
      ])
    } finally {
      await server.close()
    }
  })

  it('refuses --base-url without a model id', async () => {
    const { stdout, code } = await runScript(
      'start',
      ['--base-url', 'http://127.0.0.1:9/v1', '--session-dir', temp('nomodel')],
      lines('/quit'),
    )
    expect(code).not.toBe(0)
    expect(stdout).toMatch(/--base-url needs --model/)
  })
})

describe('pnpm start on a terminal', () => {
  it('decides on the live screen from both streams and TERM', () => {
    expect(wantsLiveScreen({ isTTY: true }, { isTTY: true }, {})).toBe(true)
    expect(wantsLiveScreen({ isTTY: true }, { isTTY: true }, { TERM: 'xterm-256color' })).toBe(true)
    expect(wantsLiveScreen({ isTTY: true }, { isTTY: true }, { TERM: 'dumb' })).toBe(false)
    expect(wantsLiveScreen({ isTTY: true }, { isTTY: false }, {})).toBe(false)
    expect(wantsLiveScreen({ isTTY: false }, { isTTY: true }, {})).toBe(false)
    expect(wantsLiveScreen({}, {}, {})).toBe(false)
  })

  it.skipIf(!hasScriptPty())(
    '`e` opens the plan in $EDITOR on a terminal, reads it back, deletes it, and Approve sends the edit',
    async () => {
      const tmp = temp('tty-editor')
      mkdirSync(join(tmp, 'sessions'))
      // The "editor": records the file it was given and what it held, then rewrites it.
      const editor = join(tmp, 'editor.mjs')
      writeFileSync(
        editor,
        [
          "import { readFileSync, writeFileSync } from 'node:fs'",
          'const file = process.argv[2]',
          `writeFileSync(${JSON.stringify(join(tmp, 'seen.json'))}, JSON.stringify({ file, text: readFileSync(file, 'utf8') }))`,
          "writeFileSync(file, '# Edited in the editor\\n\\n1. Only the --due flag.\\n')",
        ].join('\n'),
      )
      const child = spawnStartOnPty(
        ['--session-dir', join(tmp, 'sessions'), '--plan'],
        childEnv({ TMPDIR: tmp, NO_COLOR: '1', TERM: 'xterm-256color', EDITOR: `${process.execPath} ${editor}` }),
      )
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      await child.waitFor('[plan: on] › ')
      child.stdin.write('Add due dates to tasks\r')
      await child.waitFor('review › ')
      child.stdin.write('e\r')
      await child.waitFor('(edited plan: 3 lines; Approve sends your version)')
      child.stdin.write('1\r')
      await child.waitFor(/assistant Done\./)
      child.stdin.write('/quit\r')
      expect(await exited).toBe(0)
      const seen = JSON.parse(readFileSync(join(tmp, 'seen.json'), 'utf8')) as { file: string; text: string }
      expect(seen.text).toMatch(/^# Plan: due dates for tasks\n/)
      expect(existsSync(seen.file)).toBe(false)
      const output = child.output()
      expect(output).toContain('carrying out your version now')
      const file = onlySessionFile(join(tmp, 'sessions'))
      const record = readSession(file).find((event) => (event.type as string) === 'plan/review')
      expect(record?.data).toMatchObject({ outcome: 'approved', plan: '# Edited in the editor\n\n1. Only the --due flag.' })
    },
  )

  it.skipIf(!hasScriptPty())(
    'shows a working indicator and keeps typed keys on the prompt while the reply streams',
    async () => {
      const tmp = temp('tty-tmpdir')
      mkdirSync(join(tmp, 'sessions'))
      const child = spawnStartOnPty(
        ['--session-dir', join(tmp, 'sessions')],
        childEnv({ TMPDIR: tmp, NO_COLOR: '1', TERM: 'xterm-256color', PLANMODE_DEMO_DELAY_MS: '40' }),
      )
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      await child.waitFor('[plan: off] › ')
      child.stdin.write('hello\r')
      await child.waitFor('assistant Hello!')
      // Typed while the reply streams.
      child.stdin.write('abc')
      await child.waitFor('review.')
      child.stdin.write('\r')
      await child.waitFor(/\[plan: off\] › abc\r?\n/)
      child.stdin.write('/quit\r')
      expect(await exited).toBe(0)
      const output = child.output()
      const frames = WORKING_FRAMES.join('')
      // The indicator is drawn on the prompt line before any text streams (the request is in flight).
      const indicator = new RegExp(`[${frames}] ${WORKING_LABEL} \\[plan: off\\] › `)
      expect(output).toMatch(indicator)
      expect(output.search(indicator)).toBeLessThan(output.indexOf('assistant Hello!'))
      // The typed keys only ever appear on the prompt line, never inside the streamed reply.
      // (readline echoes a key at the cursor: leave out cursor moves and visibility switches.)
      const pieces = output.replace(/\u001b\[(\d+G|\?25[hl])/g, '').split('abc')
      expect(pieces.length).toBeGreaterThan(1)
      expect(pieces.slice(0, -1).every((before) => before.endsWith('› '))).toBe(true)
      expect(output).toContain(`resume with: ${npxPnpm} start --resume ${join(tmp, 'sessions')}`)
      expect(leftIn(tmp)).toEqual(['sessions'])
    },
    60_000,
  )
})

describe('pnpm start --plan-dir (plan-file)', () => {
  /** Waits until `file` exists; the test's timeout bounds it. */
  const appears = async (file: string): Promise<string> => {
    while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 10))
    return readFileSync(file, 'utf8')
  }

  it('the plan file appears once a plan is submitted (open while it is reviewed), and says approved after the approval, with its progress', async () => {
    const sessionDir = temp('plan-dir-sessions')
    const planDir = join(temp('plan-dir'), 'plans')
    const child = spawnStart(['--session-dir', sessionDir, '--plan-dir', planDir, '--plan'])
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    child.stdin.write('Add due dates to tasks\n')
    await child.waitFor('`e` edits the plan')
    const id = basename(onlySessionFile(sessionDir), '.jsonl')
    const file = join(planDir, `${id}.md`)
    expect(child.output()).toContain(`  plan file: ${file}\n`)
    const open = await appears(file)
    expect(open).toMatch(
      new RegExp(
        `^---\\nsession: "${id}"\\nrev: 1\\nstatus: "open"\\ntitle: "Plan: due dates for tasks"\\n---\\n# Plan: due dates for tasks\\n`,
      ),
    )
    child.stdin.write('1\n')
    await child.waitFor('reviewer › Approve')
    child.stdin.end('/quit\n')
    expect(await exited).toBe(0)
    const approved = readFileSync(file, 'utf8')
    // Carried out and tracked to the end: the front matter gains the progress (SPEC §19).
    expect(approved).toBe(
      open
        .replace('status: "open"', 'status: "approved"')
        .replace('title: "Plan: due dates for tasks"\n', 'title: "Plan: due dates for tasks"\nprogress: "5/5"\n'),
    )
    expect(readdirSync(planDir)).toEqual([`${id}.md`])
  })
})
