import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { beforeAll, describe, expect, it } from 'vitest'
import { SHOWCASE_FEEDBACK } from '../src/showcase.js'
import { ensureBuilt, onlySessionFile, planTrace, readSession, runScript } from './support/built-demo.js'

beforeAll(() => ensureBuilt(), 300_000)

describe('pnpm demo (built, as a child process)', () => {
  it('shows the whole plan-mode arc, plain when piped, and exits 0', async () => {
    const sessionDir = mkdtempSync(join(tmpdir(), 'planmode-demo-test-'))
    const { code, stdout, stderr } = await runScript('demo', ['--session-dir', sessionDir])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    // Piped: no colour.
    expect(stdout).not.toMatch(/\u001b\[/)
    // The badge from the projection on every prompt line.
    expect(stdout).toContain('[plan: off] › /plan Add due dates to tasks')
    expect(stdout).toContain('[plan: on] › /plan off')
    expect(stdout.match(/^\[plan: (on|off|pending → on|pending → off)\] › /gm)?.length).toBe(3)
    // Exploration, the plan as markdown, the review and its choices.
    expect(stdout).toContain('→ list_files .')
    expect(stdout).toContain('→ read_file src/tasks.js')
    expect(stdout).toContain('    # Plan: due dates for tasks')
    expect(stdout).toContain('1. Approve')
    expect(stdout).toContain('2. Keep planning')
    expect(stdout).toContain(`reviewer › Keep planning: “${SHOWCASE_FEEDBACK}”`)
    expect(stdout).toContain('_Revision 2: revised after your review._')
    expect(stdout).toContain('reviewer › Approve')
    expect(stdout).toContain('→ edit_file src/format.js')
    expect(stdout).toContain('ⓘ notice (to the model) The user switched this session to plan mode.')
    // The reopened session and the closing lines.
    expect(stdout).toMatch(/planMode\.get → \{"active":true\}; projection badge → on/)
    const file = onlySessionFile(sessionDir)
    expect(stdout).toContain(`session file: ${file}`)
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^✓ 13\/13 stages: 2 plans \(1 revision\), approved/)

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
      '/plan',
      'plan/mode:on',
      'notice:The user switched this session to plan mode.',
      '/plan off',
      'plan/mode:off',
    ])
    // No write or edit before the approval; the steered goal is a user message of the turn.
    const approved = events.findIndex((event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode' && !event.data.isError)
    const mutating = events.flatMap((event, index) =>
      event.type === 'assistant/message' && event.data.content.some((block) => block.type === 'tool-call' && /write_file|edit_file/.test(block.toolName)) ? [index] : [],
    )
    expect(mutating.length).toBeGreaterThan(0)
    expect(Math.min(...mutating)).toBeGreaterThan(approved)
    // Every command is logged as a run/done pair, all successful.
    const done = events.filter((event) => event.type === 'command/done')
    expect(done).toHaveLength(3)
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
