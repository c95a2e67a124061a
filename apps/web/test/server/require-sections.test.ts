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
