import { RECOMMENDED_PLAN_SECTION, resolveConfig } from '@planmode/plan-policy'
import { describe, expect, it } from 'vitest'

describe('resolveConfig (§4)', () => {
  it('returns a new object with the section exactly as given', () => {
    const config = { section: '  Plan first.\n' }
    const resolved = resolveConfig(config)
    expect(resolved).toEqual({ section: '  Plan first.\n' })
    expect(resolved).not.toBe(config)
  })

  it.each([[undefined], [null], [{}], [{ section: 3 }], [{ section: null }], ['text']])(
    'refuses a non-string section (%j)',
    (config) => {
      expect(() => resolveConfig(config)).toThrow('needs a string `section`')
    },
  )

  it.each([[''], ['   '], ['\n\t ']])('refuses a blank section (%j)', (section) => {
    expect(() => resolveConfig({ section })).toThrow('needs a non-empty `section`')
  })

  it('names every unknown key, joined with ", "', () => {
    expect(() => resolveConfig({ section: 'x', tools: [], mode: 'plan' })).toThrow('unknown key(s) tools, mode')
    expect(() => resolveConfig({ section: 'x', sandbox: true })).toThrow(/unknown key\(s\) sandbox$/)
  })
})

describe('RECOMMENDED_PLAN_SECTION (§4)', () => {
  const text = RECOMMENDED_PLAN_SECTION
  it('is a valid section', () => {
    expect(resolveConfig({ section: text }).section).toBe(text)
  })

  it.each([
    ['explore with non-mutating reads and checks', /non-mutating|change nothing/i],
    ['do not edit, write, reformat, commit or carry out the plan', /do not carry out the plan/i],
    ['editing', /edit/i],
    ['writing', /write files/i],
    ['reformatting', /formatters/i],
    ['committing', /commit/i],
    ['imperative requests mean plan it', /imperative requests/i],
    ['conversational agreement approves nothing', /agreement approves nothing/i],
    ['fold agreement into the plan', /fold that decision into the plan/i],
    ['mutating tools stay listed only for request stability', /stay listed only so that requests keep the same shape/i],
    ['these rules override tool descriptions', /take precedence over anything their descriptions/i],
    ['no todo tools', /todo/i],
    ['ask only what inspection cannot answer', /only what inspecting the workspace cannot answer/i],
    ['decision-complete', /decision-complete/i],
    ['submit with exit_plan_mode', /exit_plan_mode/],
    ['only and final tool call', /only and the final tool call/i],
    ['# title', /"# " title/],
    ['revise and resubmit on rejection', /rejects the plan, revise/i],
    ['review unavailable: ask to switch manually', /review cannot be shown, stay in plan mode and ask the user to leave it themselves/i],
  ])('covers: %s', (_point, pattern) => {
    expect(text).toMatch(pattern)
  })
})
