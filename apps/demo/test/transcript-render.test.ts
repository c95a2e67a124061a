import type { SessionEvent, UserQuestion } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createStyle } from '../src/render/style.js'
import { TranscriptRenderer } from '../src/render/transcript.js'

const SECTION = 'PLAN MODE IS ON.\nExplore read-only, then call exit_plan_mode.\n'
const entry: UserQuestion = {
  id: 'plan-enter',
  header: 'Plan mode',
  question: 'Switch this session to plan mode?',
  detail: 'You asked to plan first: add a clear command.',
  options: [
    {
      label: 'Enter plan mode',
      description: 'From its next step the agent explores and plans without changing anything, then presents a plan for your review.',
    },
    { label: 'Not now', description: 'Stay in the default mode; the agent continues as it is.' },
  ],
  intent: { kind: 'plan-enter', approve: 'Enter plan mode' },
}

function render(options: { width?: number; placement?: 'system' | 'transcript' }, draw: (renderer: TranscriptRenderer) => void): string[] {
  let text = ''
  const renderer = new TranscriptRenderer({
    out: { write: (chunk: string) => (text += chunk) },
    style: createStyle(false),
    planSection: SECTION,
    ...options,
  })
  draw(renderer)
  return text.split('\n')
}

const event = <T extends SessionEvent['type']>(type: T, data: Extract<SessionEvent, { type: T }>['data']): SessionEvent =>
  ({ type, seq: 0, time: 0, data }) as SessionEvent

describe('the transcript of the entry question, guidance messages and headers', () => {
  it('shows the entry question with its reason, both options and the note hint; no edit or comment hints', () => {
    const lines = render({}, (renderer) => renderer.review([entry]))
    expect(lines).toContain('  ┌ Plan mode')
    expect(lines).toContain('    You asked to plan first: add a clear command.')
    expect(lines).toContain(
      '  │   1. Enter plan mode — From its next step the agent explores and plans without changing anything, then presents a plan for your review.',
    )
    expect(lines).toContain(
      '  └ answer with a number or a label (yes agrees, no declines); 2: <note> declines with a note for the agent; a /command dismisses',
    )
    expect(lines.join('\n')).not.toMatch(/edits the plan|comments on a line/)
  })

  it('wraps the question rows at a terminal width, continued under their text', () => {
    const lines = render({ width: 60 }, (renderer) => renderer.review([entry]))
    const rows = lines.filter((line) => line.startsWith('  │') || line.startsWith('  └') || line.startsWith('    '))
    expect(rows.every((line) => line.length <= 60)).toBe(true)
    const first = lines.findIndex((line) => line.startsWith('  │   1. Enter plan mode — '))
    expect(lines[first + 1]).toMatch(/^ {2}│ {6}\S/)
    expect(lines.some((line) => line.startsWith('  └ answer with a number'))).toBe(true)
  })

  it('names a guidance message in one line, and an entry call by the start of its reason', () => {
    const lines = render({ placement: 'transcript' }, (renderer) => {
      renderer.event(
        event('user/message', {
          content: [{ type: 'text', text: SECTION }],
          source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance' },
        }),
      )
      renderer.event(
        event('assistant/message', {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'c1',
              toolName: 'enter_plan_mode',
              input: { reason: 'You asked to plan first: add a clear command that removes finished tasks.' },
            },
          ],
        } as never),
      )
      renderer.event(event('request/header', { reason: 'initial', system: 'base', tools: [], model: 'm' } as never))
    })
    expect(lines).toContain('  ⓘ guidance (to the model) the plan section as a transcript message (2 lines)')
    expect(lines).toContain('  → enter_plan_mode “You asked to plan first: add a clear command that removes …”')
    expect(lines).toContain('  · request header: system prompt and tools fixed (plan guidance goes in the transcript)')
  })

  it('wraps the entry call line at a terminal width, at spaces, continued under the reason', () => {
    const reason = 'You asked to plan first: add a clear command that removes finished tasks.'
    const call = event('assistant/message', {
      content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'enter_plan_mode', input: { reason } }],
    } as never)
    const lines = render({ width: 40 }, (renderer) => renderer.event(call)).filter((line) => line !== '')
    expect(lines).toEqual([
      '  → enter_plan_mode “You asked to plan',
      '                    first: add a clear',
      '                    command that removes',
      '                    …”',
    ])
    expect(lines.every((line) => line.length <= 40)).toBe(true)
    // Wide enough, it is one line, as when piped.
    expect(render({ width: 120 }, (renderer) => renderer.event(call))).toContain(
      '  → enter_plan_mode “You asked to plan first: add a clear command that removes …”',
    )
    expect(
      render({ width: 40 }, (renderer) =>
        renderer.event(
          event('assistant/message', {
            content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'enter_plan_mode', input: {} }],
          } as never),
        ),
      ),
    ).toContain('  → enter_plan_mode')
  })

  it("names what a changed request header changed under 'transcript'", () => {
    const tool = { name: 'read_file', description: 'reads', inputSchema: {} }
    const header = (system: string, tools: unknown[], model = 'm') =>
      event('request/header', { reason: 'change', turn: 1, step: 1, system, tools, model } as never)
    const lines = render({ placement: 'transcript' }, (renderer) => {
      // A 'system' session resumed with --placement transcript: its last logged header carried the plan section.
      renderer.known(
        event('request/header', { reason: 'initial', turn: 1, step: 1, system: `base\n\n${SECTION}`, tools: [tool], model: 'm' } as never),
      )
      renderer.event(header('base', [tool]))
      renderer.event(header('base', []))
      renderer.event(header('base', [], 'other-model'))
      renderer.event(header('base, edited', [tool], 'm'))
      renderer.event(header('base, edited', [tool], 'm'))
    })
    expect(lines.filter((line) => line.includes('request header'))).toEqual([
      '  · request header: plan section removed from the system prompt',
      '  · request header: tools changed',
      '  · request header: model changed (other-model)',
      '  · request header: system prompt changed; tools changed; model changed (m)',
      '  · request header: changed',
    ])
    // Without a header to compare with, it says only that it changed.
    expect(render({ placement: 'transcript' }, (renderer) => renderer.event(header('base', [])))).toContain('  · request header: changed')
  })

  it("still says only that the plan section came or went under 'system'", () => {
    const header = (reason: 'initial' | 'change', system: string) =>
      event('request/header', { reason, turn: 1, step: 1, system, tools: [], model: 'm' } as never)
    const lines = render({}, (renderer) => {
      renderer.event(header('initial', `base\n\n${SECTION}`))
      renderer.event(header('change', 'base'))
      renderer.event(header('change', `base\n\n${SECTION}`))
    })
    expect(lines.filter((line) => line.includes('request header'))).toEqual([
      '  · request header: the system prompt includes the plan section',
      '  · request header: plan section removed from the system prompt',
      '  · request header: plan section added to the system prompt',
    ])
  })

  it('echoes an answer to the entry question as the user, a plan review as the reviewer', () => {
    const review: UserQuestion = { ...entry, id: 'plan-review', intent: { kind: 'plan-review', approve: 'Approve' } }
    const lines = render({}, (renderer) => {
      renderer.answer([{ id: 'plan-enter', selected: ['Enter plan mode'] }], [entry])
      renderer.answer([{ id: 'plan-enter', selected: ['Not now'], custom: 'later' }], [entry])
      renderer.answer([{ id: 'plan-review', selected: ['Approve'] }], [review])
    })
    expect(lines).toEqual(expect.arrayContaining(['  you › Enter plan mode', '  you › Not now: “later”', '  reviewer › Approve']))
  })

  it('wraps warnings (a refused answer) at a terminal width, at spaces, continued under their text', () => {
    const refusal =
      'Enter plan mode takes no note: the agent would read it as a decline. Type 1 to agree, 2 to decline, or 2: <note> to decline with a note.'
    const lines = render({ width: 40 }, (renderer) => renderer.warn(refusal)).filter((line) => line !== '')
    expect(lines.length).toBeGreaterThan(2)
    expect(lines.every((line) => line.length <= 40)).toBe(true)
    expect(lines[0]).toBe('  ! Enter plan mode takes no note: the')
    expect(lines.slice(1).every((line) => /^ {4}\S/.test(line))).toBe(true)
    expect(lines.map((line, at) => (at === 0 ? line.slice(4) : line.trim())).join(' ')).toBe(refusal)
    // `2: <note>` is kept together.
    expect(lines).toEqual([
      '  ! Enter plan mode takes no note: the',
      '    agent would read it as a decline.',
      '    Type 1 to agree, 2 to decline, or',
      '    2: <note> to decline with a note.',
    ])
    // Piped (no width): one line, as before.
    expect(render({}, (renderer) => renderer.warn(refusal))).toContain(`  ! ${refusal}`)
  })

  it('wraps notices, guidance lines and command replies at a terminal width, at spaces', () => {
    const notice = event('user/message', {
      content: [{ type: 'text', text: 'The user switched this session to plan mode.' }],
      source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice' },
    } as never)
    const guidance = event('user/message', {
      content: [{ type: 'text', text: SECTION }],
      source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance' },
    } as never)
    const draw = (renderer: TranscriptRenderer): void => {
      renderer.event(notice)
      renderer.event(guidance)
      renderer.commandResult({ kind: 'success', text: 'Entering plan mode from the next step. Send /plan off to leave.' }, '/plan')
    }
    expect(render({ width: 60 }, draw).filter((line) => line !== '')).toEqual([
      '  ⓘ notice (to the model) The user switched this session to',
      '    plan mode.',
      '  ⓘ guidance (to the model) the plan section as a transcript',
      '    message (2 lines)',
      '  ↳ Entering plan mode from the next step. Send /plan off to',
      '    leave.',
    ])
    expect(render({}, draw)).toEqual(
      expect.arrayContaining([
        '  ⓘ notice (to the model) The user switched this session to plan mode.',
        '  ↳ Entering plan mode from the next step. Send /plan off to leave.',
      ]),
    )
  })
})

describe('the end of a turn', () => {
  it('shows an interrupted turn as interrupted, in either form of the log; another end with its reason and error', () => {
    const lines = render({}, (renderer) => {
      renderer.event(event('turn/end', { turn: 1, reason: 'interrupted' }))
      renderer.event(
        event('turn/end', { turn: 2, reason: 'error', error: 'interrupted: the process running this turn ended before the turn did' }),
      )
      renderer.event(event('turn/end', { turn: 3, reason: 'error', error: 'the model failed' }))
      renderer.event(event('turn/end', { turn: 4, reason: 'completed' }))
    })
    expect(lines).toEqual([
      '  ■ turn 1 ended: interrupted (the process running it ended before the turn did)',
      '  ■ turn 2 ended: interrupted (the process running it ended before the turn did)',
      '  ■ turn 3 ended: error (the model failed)',
      '',
    ])
  })
})
