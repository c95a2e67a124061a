import { describe, expect, it } from 'vitest'
import { planToolPlugin, EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { eventsOf } from '@planmode/testkit'
import { createPlanHost, SECTION, type PlanHost } from './plan-host.js'

/** One request the scripted model received. */
type ModelRequest = PlanHost['model']['requests'][number]

const FIRST = '# Add caching\n\n## Steps\n1. Cache reads.'
const REVISED = '# Add caching\n\n## Steps\n1. Cache reads.\n\n## Rollback\nRevert the commit.\n\nOwner: the storage team.'

/** The plan host with plan-tool loaded again with `requiredSections`. */
function hostWithSections(requiredSections: string[]): PlanHost {
  const host = createPlanHost()
  host.fibers.tool!.dispose()
  host.root.plugin(planToolPlugin, { requiredSections })
  return host
}

/** The text of the tool results a request carries, in order. */
const toolTextsOf = (request: ModelRequest | undefined): string[] =>
  (request?.prompt ?? []).flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) =>
          part.type === 'tool-result' && (part.output.type === 'text' || part.output.type === 'error-text') ? [part.output.value] : [],
        )
      : [],
  )

describe('§20 a plan refused by a validator, revised, then approved, through the real loop', () => {
  it('the missing section and the listener’s problem send the plan back before review; the revision is reviewed and approved', async () => {
    const host = hostWithSections(['Steps', 'Rollback'])
    const seen: { toolCallId: string; problems: readonly string[] }[] = []
    host.root.on('plan/validate', async (payload, next) => {
      seen.push({ toolCallId: payload.toolCallId, problems: payload.problems })
      return next(/^Owner: /m.test(payload.plan) ? payload : { ...payload, problems: [...payload.problems, 'name an owner'] })
    })
    const agent = await host.agent()
    await host.command(agent, '/plan')
    host.reviews.push([{ id: 'plan-review', selected: ['Approve'] }])
    host.model.push(
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: FIRST }, toolCallId: 'first' }] },
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: REVISED }, toolCallId: 'revised' }] },
      { text: 'carrying it out' },
    )
    await agent.prompt('add caching')
    const notReady = 'Error: The plan is not ready for review:\n- missing section "Rollback"\n- name an owner'
    expect(
      eventsOf(agent.session, 'tool/result').map((event) => [event.data.toolCallId, event.data.isError, event.data.content[0]?.text]),
    ).toEqual([
      ['first', true, notReady],
      ['revised', false, expect.stringMatching(/^The user approved the plan/)],
    ])
    // The listener saw the required-section problem first, for each call, in order.
    expect(seen).toEqual([
      { toolCallId: 'first', problems: ['missing section "Rollback"'] },
      { toolCallId: 'revised', problems: [] },
    ])
    // Only the revision was reviewed and recorded; the refusal reached the model in the next request.
    expect(host.asked.map((request) => request.questions[0]?.detail)).toEqual([REVISED])
    expect(eventsOf(agent.session, 'plan/review').map((event) => [event.data.toolCallId, event.data.outcome])).toEqual([
      ['revised', 'approved'],
    ])
    expect(toolTextsOf(host.model.requests[1])).toEqual([notReady])
    // The refused call was in plan mode and left it there; the approval left it at the next step.
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    const systems = host.model.requests.map((request) => request.prompt.find((message) => message.role === 'system')?.content ?? '')
    expect(systems.map((system) => system.includes(SECTION))).toEqual([true, true, false])
    // The history shows the refused revision and the approved one.
    const history = host.root.require('sessionProjections').snapshot(agent.session).values.planHistory
    expect(history?.revisions.map((revision) => [revision.rev, revision.toolCallId, revision.status])).toEqual([
      [1, 'first', 'refused'],
      [2, 'revised', 'approved'],
    ])
    // The catalog never changed: the exit tool's description names the sections in every header.
    const headers = eventsOf(agent.session, 'request/header')
    expect(new Set(headers.map((header) => JSON.stringify(header.data.tools))).size).toBe(1)
    expect(headers[0]!.data.tools.find((tool) => tool.name === EXIT_PLAN_MODE)?.description).toMatch(
      / The plan must have these sections: Steps, Rollback\.$/,
    )
  })

  it('a listener that throws fails the call closed with its message, even after problems were added; nothing is asked', async () => {
    const host = hostWithSections(['Rollback'])
    host.root.on('plan/validate', async () => {
      throw new Error('the plan linter is down')
    })
    const agent = await host.agent()
    await host.command(agent, '/plan')
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: FIRST } }] }, { text: 'waiting' })
    await agent.prompt('add caching')
    expect(eventsOf(agent.session, 'tool/result').map((event) => event.data.content[0]?.text)).toEqual(['Error: the plan linter is down'])
    expect(host.asked).toEqual([])
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
  })
})
