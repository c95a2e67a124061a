import { planCorePlugin } from '@planmode/plan-core'
import { ENTER_PLAN_MODE, ENTER_PLAN_MODE_MESSAGES, planToolPlugin } from '@planmode/plan-tool'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHost } from '@planmode/testkit'

/** SPEC §12.6–7 written as plainly as possible: the model the tool must agree with. */
function expected(answers: unknown): { consent: true } | { consent: false; text: string } {
  const objects = Array.isArray(answers) ? answers.filter((a) => typeof a === 'object' && a !== null) : []
  const blank = (custom: unknown) => custom === undefined || (typeof custom === 'string' && custom.trim() === '')
  if (Array.isArray(answers) && answers.length === 1 && objects.length === 1) {
    const [answer] = objects as { id?: unknown; selected?: unknown; custom?: unknown }[]
    const selected = answer!.selected
    if (
      answer!.id === 'plan-enter' &&
      Array.isArray(selected) &&
      selected.length === 1 &&
      selected[0] === 'Enter plan mode' &&
      blank(answer!.custom)
    ) {
      return { consent: true }
    }
  }
  const texts = (objects as { id?: unknown; custom?: unknown }[]).filter((a) => typeof a.custom === 'string' && a.custom.trim() !== '')
  const enter = (objects as { id?: unknown }[]).find((a) => a.id === 'plan-enter') as { custom?: unknown } | undefined
  // The note comes from the first plan-enter answer when it has text, else from the first answer with text.
  const own = typeof enter?.custom === 'string' && enter.custom.trim() !== '' ? enter.custom : undefined
  const chosen = own ?? (texts[0]?.custom as string | undefined)
  return {
    consent: false,
    text: chosen === undefined ? ENTER_PLAN_MODE_MESSAGES.declined : `${ENTER_PLAN_MODE_MESSAGES.declined} Their note: ${chosen}`,
  }
}

const answer = fc.record(
  {
    id: fc.constantFrom('plan-enter', 'plan-review', 'other'),
    selected: fc.oneof(
      fc.array(fc.constantFrom('Enter plan mode', 'Not now', 'enter plan mode', ''), { maxLength: 3 }),
      fc.constant('Enter plan mode' as unknown),
    ),
    custom: fc.oneof(fc.constant(undefined), fc.constantFrom('', '  ', 'later', 'only the schema'), fc.integer() as fc.Arbitrary<unknown>),
  },
  { requiredKeys: ['id', 'selected'] },
)
/** A consent, or one that is a small step away from it (blank or real text, another label). */
const nearConsent = fc.record({
  id: fc.constant('plan-enter'),
  selected: fc.constantFrom(['Enter plan mode'], ['Not now'], ['Enter plan mode', 'Not now']),
  custom: fc.constantFrom<unknown>(undefined, '', ' \n', 'later'),
}) as fc.Arbitrary<unknown>
const entry = fc.oneof(
  { weight: 6, arbitrary: answer as fc.Arbitrary<unknown> },
  { weight: 3, arbitrary: nearConsent },
  { weight: 1, arbitrary: fc.constant(null) },
)
const answers = fc.oneof(
  { weight: 3, arbitrary: entry.map((one) => [one]) },
  { weight: 3, arbitrary: fc.array(entry, { maxLength: 3 }) },
  { weight: 1, arbitrary: answer as fc.Arbitrary<unknown> },
)

describe('enter_plan_mode decision (property)', () => {
  it('consents exactly when the SPEC §12.6 rule holds, and otherwise declines with the §12.7 text', async () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    host.root.plugin(planToolPlugin)
    let next: unknown = []
    host.root.require('userQuestions').registerProvider({ ask: async () => next as never })
    const tools = host.root.require('tools')
    const planMode = host.root.require('planMode')
    const seen = { consent: 0, decline: 0, note: 0 }
    await fc.assert(
      fc.asyncProperty(answers, async (reply) => {
        next = reply
        const agent = await host.agent()
        const result = await tools.execute(ENTER_PLAN_MODE, {}, { agent, signal: new AbortController().signal, toolCallId: 'p' })
        const want = expected(reply)
        seen[want.consent ? 'consent' : want.text === ENTER_PLAN_MODE_MESSAGES.declined ? 'decline' : 'note'] += 1
        if (want.consent) {
          expect(result).toEqual({
            isError: false,
            value: { entered: true },
            content: [{ type: 'text', text: ENTER_PLAN_MODE_MESSAGES.entered }],
          })
          expect(planMode.get(agent)).toEqual({ active: false, pending: true })
        } else {
          expect(result).toEqual({ isError: true, content: [{ type: 'text', text: `Error: ${want.text}` }] })
          expect(planMode.get(agent)).toEqual({ active: false })
        }
      }),
      { numRuns: 300 },
    )
    // The arbitraries reach every outcome.
    expect(seen.consent).toBeGreaterThan(0)
    expect(seen.decline).toBeGreaterThan(0)
    expect(seen.note).toBeGreaterThan(0)
  })
})
