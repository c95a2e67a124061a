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
    { label: 'Enter plan mode', description: 'From its next step the agent explores and plans without changing anything, then presents a plan for your review.' },
    { label: 'Not now', description: 'Stay in the default mode; the agent continues as it is.' },
  ],
  intent: { kind: 'plan-enter', approve: 'Enter plan mode' },
}

function render(options: { width?: number; placement?: 'system' | 'transcript' }, draw: (renderer: TranscriptRenderer) => void): string[] {
  let text = ''
  const renderer = new TranscriptRenderer({ out: { write: (chunk: string) => (text += chunk) }, style: createStyle(false), planSection: SECTION, ...options })
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
    expect(lines).toContain('  │   1. Enter plan mode — From its next step the agent explores and plans without changing anything, then presents a plan for your review.')
    expect(lines).toContain('  └ answer with a number or a label; 2: <note> or other text declines with a note for the agent; an empty line or a /command dismisses')
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
      renderer.event(event('user/message', { content: [{ type: 'text', text: SECTION }], source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance' } }))
      renderer.event(event('assistant/message', { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'enter_plan_mode', input: { reason: 'You asked to plan first: add a clear command that removes finished tasks.' } }] } as never))
      renderer.event(event('request/header', { reason: 'initial', system: 'base', tools: [], model: 'm' } as never))
    })
    expect(lines).toContain('  ⓘ guidance (to the model) the plan section as a transcript message (2 lines)')
    expect(lines).toContain('  → enter_plan_mode “You asked to plan first: add a clear command that removes …”')
    expect(lines).toContain('  · request header: system prompt and tools fixed (plan guidance goes in the transcript)')
  })
})
