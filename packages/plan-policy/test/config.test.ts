import { readFileSync } from 'node:fs'
import { RECOMMENDED_PLAN_SECTION, resolveConfig } from '@planmode/plan-policy'
import { describe, expect, it } from 'vitest'

describe('resolveConfig (§4)', () => {
  it('returns a new object with the section exactly as given', () => {
    const config = { section: '  Plan first.\n' }
    const resolved = resolveConfig(config)
    expect(resolved).toEqual({ section: '  Plan first.\n' })
    expect(resolved).not.toBe(config)
  })

  it.each([[undefined], [null], [{}], [{ section: 3 }], [{ section: null }], ['text']])('refuses a non-string section (%j)', (config) => {
    expect(() => resolveConfig(config)).toThrow('needs a string `section`')
  })

  it.each([[''], ['   '], ['\n\t ']])('refuses a blank section (%j)', (section) => {
    expect(() => resolveConfig({ section })).toThrow('needs a non-empty `section`')
  })

  it('names every problem at once', () => {
    expect(() => resolveConfig({ sectoin: 'x' })).toThrow('needs a string `section`')
    expect(() => resolveConfig({ sectoin: 'x' })).toThrow('unknown key(s) sectoin')
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
    ['explore with non-mutating reads and checks', /leave everything as it was: reading and searching/i],
    ['checks that change nothing', /tests, linters or type checks that modify nothing/i],
    ['do not carry out the plan', /Make no changes.*no other step of the plan itself/],
    ['no edits or writes', /No edits, no new or deleted files/],
    ['no reformatting', /no reformatting/],
    ['no commits', /no commits/],
    ['imperative requests mean plan it', /phrased as commands .* as requests to plan that work/],
    ['conversational agreement approves nothing', /Agreement in conversation is not approval/],
    ['fold agreement into the plan', /input for the plan: work it in and keep planning/],
    ['mutating tools stay listed only for request stability', /remain in your tool list only so that every request keeps the same shape/],
    ['these rules override tool descriptions', /outrank anything those tools' descriptions suggest/],
    ['no todo tools', /Do not keep a todo list or task tracker/],
    ['ask only what inspection cannot answer', /Ask the user only about what you cannot find out by looking/],
    ['decision-complete', /decision-complete/],
    [
      'submit with exit_plan_mode, starting with a # title',
      /calling exit_plan_mode with the whole plan as markdown whose first line is a "# " title/,
    ],
    ['only and final tool call', /the only tool call of its response, and the last thing you do in it/],
    ['revise and resubmit on rejection', /sends the plan back, revise it with their feedback and submit it again/],
    [
      'review unavailable: stay and ask to switch manually',
      /review cannot be opened, remain in plan mode and ask the user to leave it themselves/,
    ],
  ])('covers: %s', (_point, pattern) => {
    expect(text).toMatch(pattern)
  })

  it('has the size the README states in its model-experience section', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const words = text.split(/\s+/).filter(Boolean).length
    expect(readme).toContain(`\`RECOMMENDED_PLAN_SECTION\` is ${text.length.toLocaleString('en-US')} characters (${words}\n  words`)
  })
})
