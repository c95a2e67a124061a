import { describe, expect, it } from 'vitest'
import { resumeCommand, shellWord } from '../src/terminal/resume-hint.js'

describe('the resume hint', () => {
  it('is the npx form, with the target as one shell word', () => {
    expect(resumeCommand('/tmp/s_1.jsonl', {}, 'pnpm@10.34.8')).toBe('npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl')
    expect(resumeCommand('/tmp/my sessions/s_1.jsonl', {}, 'pnpm@10.34.8')).toBe(
      "npx -y pnpm@10.34.8 start --resume '/tmp/my sessions/s_1.jsonl'",
    )
    expect(shellWord("it's")).toBe(`'it'\\''s'`)
  })

  it('carries --placement transcript and --guard when the session ran with them (host settings, not logged)', () => {
    const target = '/tmp/s_1.jsonl'
    expect(resumeCommand(target, { placement: 'transcript', guard: true }, 'pnpm@10.34.8')).toBe(
      'npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl --placement transcript --guard',
    )
    expect(resumeCommand(target, { placement: 'transcript', guard: false }, 'pnpm@10.34.8')).toBe(
      'npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl --placement transcript',
    )
    expect(resumeCommand(target, { placement: 'system', guard: true }, 'pnpm@10.34.8')).toBe(
      'npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl --guard',
    )
    // system is the default placement: not written.
    expect(resumeCommand(target, { placement: 'system' }, 'pnpm@10.34.8')).toBe('npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl')
  })

  it('carries --require-sections as one shell word when the session ran with it', () => {
    const target = '/tmp/s_1.jsonl'
    expect(resumeCommand(target, { requireSections: ['Steps', 'Verification'] }, 'pnpm@10.34.8')).toBe(
      'npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl --require-sections Steps,Verification',
    )
    expect(resumeCommand(target, { guard: true, requireSections: ['Open questions', 'Steps'] }, 'pnpm@10.34.8')).toBe(
      "npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl --guard --require-sections 'Open questions,Steps'",
    )
    expect(resumeCommand(target, { requireSections: [] }, 'pnpm@10.34.8')).toBe('npx -y pnpm@10.34.8 start --resume /tmp/s_1.jsonl')
  })
})
