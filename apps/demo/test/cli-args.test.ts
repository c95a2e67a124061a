import { describe, expect, it } from 'vitest'
import { parseCli, parsePlacement, parseRequiredSections, START_USAGE } from '../src/terminal/cli-args.js'

describe('pnpm start flags', () => {
  it('--placement takes system or transcript (system when absent)', () => {
    expect(parseCli([]).placement).toBe('system')
    expect(parseCli(['--placement', 'system']).placement).toBe('system')
    expect(parseCli(['--placement', 'transcript']).placement).toBe('transcript')
    expect(parseCli(['--', '--placement=transcript']).placement).toBe('transcript')
    expect(() => parseCli(['--placement', 'prompt'])).toThrow('--placement takes system or transcript, not "prompt"')
    expect(() => parseCli(['--placement', 'Transcript'])).toThrow('--placement takes system or transcript, not "Transcript"')
    expect(() => parsePlacement('')).toThrow('--placement takes system or transcript, not ""')
    // A flag without its value is refused by the parser, naming the flag.
    expect(() => parseCli(['--placement'])).toThrow(/--placement/)
  })

  it('--guard is a switch, off by default', () => {
    expect(parseCli([]).guard).toBe(false)
    expect(parseCli(['--guard']).guard).toBe(true)
    expect(() => parseCli(['--guard=yes'])).toThrow(/--guard/)
  })

  it('--plan-dir takes a folder, absent by default', () => {
    expect(parseCli([]).planDir).toBeUndefined()
    expect(parseCli(['--plan-dir', 'plans']).planDir).toBe('plans')
    expect(parseCli(['--plan-dir=/tmp/plans']).planDir).toBe('/tmp/plans')
    expect(() => parseCli(['--plan-dir'])).toThrow(/--plan-dir/)
    expect(START_USAGE).toMatch(/--plan-dir <dir>\s+keep each session's latest plan in <dir>\/<session id>\.md \(plan-file\)/)
  })

  it('--require-sections takes heading names separated by commas, trimmed, in order', () => {
    expect(parseCli([]).requireSections).toEqual([])
    expect(parseCli(['--require-sections', 'Steps,Verification']).requireSections).toEqual(['Steps', 'Verification'])
    expect(parseCli(['--require-sections=  Steps , Open questions ']).requireSections).toEqual(['Steps', 'Open questions'])
    expect(() => parseRequiredSections('')).toThrow(
      '--require-sections takes heading names separated by commas ("Steps,Verification"), not ""',
    )
    expect(() => parseRequiredSections('Steps,')).toThrow(/not "Steps,"/)
    expect(() => parseRequiredSections('Steps, steps')).toThrow(
      '--require-sections names "steps" twice (headings are compared case-insensitive)',
    )
    expect(() => parseCli(['--require-sections'])).toThrow(/--require-sections/)
    expect(START_USAGE).toMatch(/--require-sections <names>\n\s+headings every plan must have before it is reviewed/)
  })

  it('--help documents both', () => {
    expect(START_USAGE).toMatch(/--placement <where>\s+where the guidance goes: system \(the system prompt, default\) or\n\s+transcript/)
    expect(START_USAGE).toMatch(/--guard\s+refuse tools that are not read-only while plan mode is on \(plan-guard\)/)
  })
})
