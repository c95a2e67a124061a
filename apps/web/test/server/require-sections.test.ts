import { describe, expect, it } from 'vitest'
import { parseWebCli, WEB_USAGE } from '../../server/options.js'

describe('pnpm web --require-sections', () => {
  it('takes heading names separated by commas (trimmed, in order), [] when absent, and refuses blank or repeated names', () => {
    expect(parseWebCli([], '/tmp').requireSections).toEqual([])
    expect(parseWebCli(['--require-sections', 'Steps, Verification'], '/tmp').requireSections).toEqual(['Steps', 'Verification'])
    expect(() => parseWebCli(['--require-sections', 'Steps,,Verification'], '/tmp')).toThrow(/--require-sections takes heading names/)
    expect(() => parseWebCli(['--require-sections', 'Risks,RISKS'], '/tmp')).toThrow('--require-sections names "RISKS" twice')
    expect(WEB_USAGE).toMatch(/--require-sections <names>\n\s+headings every plan must have before it is reviewed/)
  })
})

describe('pnpm web --models', () => {
  it('takes model ids separated by commas (trimmed, in order), [] when absent, and refuses blank or repeated ids', () => {
    expect(parseWebCli([], '/tmp').models).toEqual([])
    expect(parseWebCli(['--models', 'fast, careful'], '/tmp').models).toEqual(['fast', 'careful'])
    expect(() => parseWebCli(['--models', ''], '/tmp')).toThrow(/--models takes model ids separated by commas/)
    expect(() => parseWebCli(['--models', 'fast,,careful'], '/tmp')).toThrow(/--models takes model ids separated by commas/)
    expect(() => parseWebCli(['--models', 'fast,fast'], '/tmp')).toThrow('--models names "fast" twice')
    // Ids are compared as written: the review offers them so.
    expect(parseWebCli(['--models', 'fast,FAST'], '/tmp').models).toEqual(['fast', 'FAST'])
    expect(WEB_USAGE).toMatch(/--models <ids>\s+models the plan review offers to carry the approved plan out with/)
  })
})
