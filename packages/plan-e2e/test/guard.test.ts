import { ENTER_PLAN_MODE, EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { planGuardPlugin, planGuardRefusal } from '@planmode/plan-guard'
import { describe, expect, it } from 'vitest'
import { eventsOf } from '@planmode/testkit'
import { createPlanHost } from './plan-host.js'

const PLAN = '# Add caching\n\n1. Read the store.\n2. Cache reads.'

describe('§14 plan-guard over every plan layer and the real exit tool', () => {
  it('refuses the write in plan mode, runs the read, lets the review through; after approval the same write runs', async () => {
    const host = createPlanHost()
    host.root.plugin(planGuardPlugin)
    const agent = await host.agent()
    await host.command(agent, '/plan')
    host.reviews.push([{ id: 'plan-review', selected: ['Approve'] }])
    host.model.push(
      {
        toolCalls: [
          { toolName: 'write', input: { path: 'src/cache.ts' } },
          { toolName: 'read', input: { path: 'src/store.ts' } },
        ],
      },
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] },
      { toolCalls: [{ toolName: 'write', input: { path: 'src/cache.ts' } }] },
      { text: 'done' },
    )
    await agent.prompt('add caching')
    const results = eventsOf(agent.session, 'tool/result').map(({ data }) => ({
      toolName: data.toolName,
      isError: data.isError,
      text: data.content[0]?.text,
    }))
    expect(results).toEqual([
      { toolName: 'write', isError: true, text: `Error: ${planGuardRefusal('write')}` },
      { toolName: 'read', isError: false, text: 'contents of src/store.ts' },
      { toolName: EXIT_PLAN_MODE, isError: false, text: expect.any(String) },
      { toolName: 'write', isError: false, text: 'wrote src/cache.ts' },
    ])
    // The refused call never ran; the one after the approval did.
    expect(host.written).toEqual(['src/cache.ts'])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    // The catalog is the same in every request, guard or not.
    const headers = eventsOf(agent.session, 'request/header')
    expect(new Set(headers.map((header) => JSON.stringify(header.data.tools))).size).toBe(1)
    expect(headers[0]!.data.tools.map((tool) => tool.name)).toEqual([ENTER_PLAN_MODE, EXIT_PLAN_MODE, 'read', 'write'])
  })

  it('enter_plan_mode is never refused, and the guard applies from the step the entry reaches', async () => {
    const host = createPlanHost()
    host.root.plugin(planGuardPlugin)
    const agent = await host.agent()
    host.reviews.push([{ id: 'plan-enter', selected: ['Enter plan mode'] }])
    host.model.push(
      {
        toolCalls: [
          { toolName: ENTER_PLAN_MODE, input: { reason: 'a risky change' } },
          { toolName: 'write', input: { path: 'a.ts' } },
        ],
      },
      { toolCalls: [{ toolName: 'write', input: { path: 'b.ts' } }] },
      { text: 'planning' },
    )
    await agent.prompt('change the store')
    const results = eventsOf(agent.session, 'tool/result').map(({ data }) => [data.toolName, data.isError])
    // In the entry's own batch the logged state is still the default mode: the write runs (§14 reads the logged state).
    expect(results).toEqual([
      [ENTER_PLAN_MODE, false],
      ['write', false],
      ['write', true],
    ])
    expect(host.written).toEqual(['a.ts'])
  })
})
