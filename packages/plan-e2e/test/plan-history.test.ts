// SPEC §15 end to end: the `planHistory` unit fed by real reviews — plan-tool's
// `plan/review` records and tool results — through the reference host loop,
// agreeing with a plain fold of the log; `diffPlans` over two revisions.
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { planHistory, planHistoryPlugin } from '@planmode/plan-projection'
import { diffPlans } from '@planmode/plan-projection/client'
import type { UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { eventsOf } from '@planmode/testkit'
import { createPlanHost } from './plan-host.js'

const PLAN1 = '# Add caching\n\n1. Add a cache.\n2. Wire it in.'
const PLAN2 = '# Add caching, revised\n\n1. Add an LRU cache.\n2. Wire it in.\n3. Add tests.'
const EDITED = '# Add caching, revised\n\n1. Add an LRU cache of 100 entries.\n2. Wire it in.\n3. Add tests.'
const PLAN3 = '## Not in plan mode any more'
const PLAN4 = '# Something else\n\nJust an idea.'
const exit = (plan: string) => ({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan } }] })
const answer = (fields: Omit<UserAnswer, 'id'>): readonly UserAnswer[] => [{ id: 'plan-review', ...fields }]

describe('planHistory through the real host loop', () => {
  it('keep planning with comments, an edited approval, a refused call and a stopped review: one revision each, as a plain fold says', async () => {
    const host = createPlanHost(undefined, [
      exit(PLAN1),
      exit(PLAN2),
      // Plan mode is off after the approval: the tool refuses this one (no review, no record).
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: '# Again' } }] },
      { text: 'implemented' },
      // Fails the heading check: refused before anyone is asked, and no revision (§15).
      exit(PLAN3),
      exit(PLAN4),
      { text: 'waiting' },
    ])
    host.root.plugin(planHistoryPlugin)
    host.reviews.push(
      answer({ selected: ['Keep planning'], custom: 'add tests', comments: [{ line: 3, text: 'which kind of cache?' }] }),
      answer({ selected: ['Approve'], edit: EDITED }),
      answer({ selected: ['Stop planning'] }),
    )
    const agent = await host.agent()
    const projections = host.root.require('sessionProjections')
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    await host.command(agent, '/plan')
    await agent.prompt('one more idea')

    const view = projections.snapshot(agent.session).values.planHistory!
    const calls = eventsOf(agent.session, 'assistant/message').filter((event) =>
      event.data.content.some(
        (block) => block.type === 'tool-call' && block.toolName === EXIT_PLAN_MODE && (block.input as { plan: string }).plan !== PLAN3,
      ),
    )
    expect(view.revisions.map(({ rev, title, status, seq }) => ({ rev, title, status, seq }))).toEqual([
      { rev: 1, title: 'Add caching', status: 'keep-planning', seq: calls[0]!.seq },
      { rev: 2, title: 'Add caching, revised', status: 'approved', seq: calls[1]!.seq },
      { rev: 3, title: 'Again', status: 'refused', seq: calls[2]!.seq },
      { rev: 4, title: 'Something else', status: 'stopped', seq: calls[3]!.seq },
    ])
    expect(view.revisions[0]).toMatchObject({ plan: PLAN1, feedback: 'add tests', comments: [{ line: 3, text: 'which kind of cache?' }] })
    expect(view.revisions[1]).toMatchObject({ plan: PLAN2, approvedPlan: EDITED })
    expect(view.revisions[3]!.approvedPlan).toBeUndefined()
    // A call whose plan fails the heading check makes no revision.
    expect(view.revisions.some((revision) => revision.plan === PLAN3)).toBe(false)

    // The live registry agrees with a cold, plain fold of the log.
    let state = planHistory.initial()
    for (const event of agent.session.events) state = planHistory.apply(state, event)
    expect(planHistory.view(state)).toEqual(view)

    // What a UI shows between revisions 1 and 2, and between the plan and what the user approved.
    const lines = (before: string, after: string) =>
      diffPlans(before, after)
        .filter((line) => line.kind !== 'same')
        .map((line) => `${line.kind === 'added' ? '+' : '-'} ${line.line}`)
    expect(lines(PLAN1, PLAN2)).toEqual([
      '- # Add caching',
      '+ # Add caching, revised',
      '- 1. Add a cache.',
      '+ 1. Add an LRU cache.',
      '+ 3. Add tests.',
    ])
    expect(lines(PLAN2, EDITED)).toEqual(['- 1. Add an LRU cache.', '+ 1. Add an LRU cache of 100 entries.'])
  })
})
