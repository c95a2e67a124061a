import type { UserMessage } from '@planmode/seams'
import { PLAN_GUIDANCE_AGAIN } from '@planmode/plan-policy'
import type { CaseSpec } from './case-spec.js'
import { KIT_SECTION, type Harness } from '../harness.js'
import { logSummary, messageText, ofType, userTextsOf } from '../log-readers.js'

/** One idle `/plan` line (or none), then a one-step turn answered with `reply`. */
async function turn(
  h: Harness,
  agent: Parameters<Harness['prompt']>[0],
  line: string | undefined,
  text: string,
): Promise<readonly string[]> {
  if (line !== undefined) await h.command(agent, line)
  h.script({ text: `ok: ${text}` })
  await h.prompt(agent, text)
  return userTextsOf(h.model.requests.at(-1)!)
}

const compaction: CaseSpec = {
  duty: 'compaction',
  title:
    'a re-entry to plan mode reads the guidance-again line, and after a compaction the model still reads the full guidance it refers to',
  async body(h: Harness) {
    await h.start('transcript')
    const agent = await h.agent()
    await turn(h, agent, undefined, 'hi')
    // Leaving is told by a notice, due only once a header told the model the mode; until then the model holds the guidance.
    h.checkHeaderLogged(agent)
    await turn(h, agent, '/plan', 'plan the cache')
    await turn(h, agent, '/plan off', 'build it')
    const reentry = await turn(h, agent, '/plan', 'plan the next part')
    const events = agent.session.events
    const lines = ofType(events, 'user/message').filter((event) => messageText(event.data) === PLAN_GUIDANCE_AGAIN)
    const source = lines[0]?.data.source as UserMessage['source'] & { readonly form?: string }
    h.checkDuty(
      'pre-step-order',
      lines.length === 1 && source.kind === 'plugin' && source.form === 'guidance-again',
      `coming back to plan mode with the same section must log one guidance-again message (the pre-step decision's message) instead of the section. Log: ${logSummary(events)}`,
    )
    h.checkDuty(
      'transcript-from-log',
      reentry.includes(PLAN_GUIDANCE_AGAIN) && reentry.includes(KIT_SECTION),
      `the request of a re-entry must carry the guidance-again line and, from earlier in the conversation, the full guidance it refers to; its user texts were ${JSON.stringify(reentry)}`,
    )
    const compact = h.host.compact?.bind(h.host)
    if (compact === undefined) return // a host that never compacts has nothing more to keep
    await h.within('compact(agent)', () => compact(agent))
    const held = await turn(h, agent, undefined, 'go on')
    h.check(
      held.includes(KIT_SECTION),
      `after compact(), a request in plan mode must still carry the full plan guidance: keep the latest full guidance message, or log the section again while plan mode is on (plan-policy's checkCompactedGuidance); its user texts were ${JSON.stringify(held)}`,
    )
    await turn(h, agent, '/plan off', 'build the next part')
    const again = await turn(h, agent, '/plan', 'plan the last part')
    h.check(
      again.includes(PLAN_GUIDANCE_AGAIN) && again.includes(KIT_SECTION),
      `after compact(), the request of a re-entry must carry the guidance-again line and the full guidance it refers to; its user texts were ${JSON.stringify(again)}`,
    )
  },
}

/** The case of the guidance duties (SPEC §24). */
export const COMPACTION_CASES: readonly CaseSpec[] = [compaction]
