import type { Context } from '@planmode/context'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { Session } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { eventsOf, requestSystem } from '@planmode/testkit'
import { LAYERS, SECTION, createPlanHost, type Layer } from './plan-host.js'

const PLAN = '# Plan\n\nDo it.'

/** Every registration a plan package can make, as seen through the host's public registries. */
function registrations(root: Context, session: Session) {
  return {
    planMode: root.get('planMode') !== undefined,
    sections: root.require('systemPrompt').assemble({}).sections.map((section) => section.name),
    commands: root.require('commands').list().map((command) => command.name),
    tools: root.require('tools').schemas().map((tool) => tool.name),
    projections: root.require('sessionProjections').keys(),
    values: Object.keys(root.require('sessionProjections').snapshot(session).values),
  }
}

const combos: (readonly Layer[])[] = [[], ['policy'], ['commands'], ['tool'], ['projection'], LAYERS]

describe('§8 composition matrix', () => {
  it.each(combos.map((layers) => [layers.length === 0 ? 'core alone' : `core + ${layers.join(' + ')}`, layers] as const))(
    '%s works and leaves no trace of the absent layers',
    async (_name, layers) => {
      const has = (layer: Layer) => layers.includes(layer)
      const host = createPlanHost(layers)
      const agent = await host.agent()
      expect(registrations(host.root, agent.session)).toEqual({
        planMode: true,
        sections: has('policy') ? ['plan:policy'] : [],
        commands: has('commands') ? ['plan'] : [],
        tools: [...(has('tool') ? [EXIT_PLAN_MODE] : []), 'read', 'write'],
        projections: has('projection') ? ['plan'] : [],
        values: has('projection') ? ['plan'] : [],
      })

      // enter plan mode through /plan when composed, else through the service
      if (has('commands')) expect(await host.command(agent, '/plan')).toMatchObject({ kind: 'success' })
      else {
        expect(await host.command(agent, '/plan')).toBeUndefined()
        expect(await host.root.require('planMode').set(agent, true)).toBe('committed')
      }
      expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
      if (has('projection')) {
        expect(host.root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: true, pending: false })
      }

      host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'done' })
      host.reviews.push([{ id: 'plan-review', selected: ['Approve'] }])
      await agent.prompt('go')
      expect(requestSystem(host.model.requests[0]!).includes(SECTION)).toBe(has('policy'))
      const result = eventsOf(agent.session, 'tool/result')[0]!.data
      if (has('tool')) {
        expect(result).toMatchObject({ isError: false, value: { approved: true } })
        expect(host.root.require('planMode').get(agent)).toEqual({ active: false })
        expect(requestSystem(host.model.requests[1]!)).not.toContain(SECTION)
      } else {
        expect(result.isError).toBe(true)
        expect(result.content[0]!.text).toContain('unknown tool')
        expect(host.asked).toEqual([])
        expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
      }
      expect(JSON.stringify(host.model.requests)).not.toContain('plan/mode')
    },
  )

  it.each(['core', ...LAYERS] as const)('disposing %s removes exactly its own registrations', async (which) => {
    const host = createPlanHost(LAYERS)
    const agent = await host.agent()
    const before = registrations(host.root, agent.session)
    host.fibers[which]!.dispose()
    const after = registrations(host.root, agent.session)
    const expected = { ...before }
    if (which === 'core') expected.planMode = false
    if (which === 'policy') expected.sections = []
    if (which === 'commands') expected.commands = []
    if (which === 'tool') expected.tools = ['read', 'write']
    if (which === 'projection') {
      expected.projections = []
      expected.values = []
    }
    expect(after).toEqual(expected)
  })

  it('disposing core also removes its pre-step listener: a waiting selection never flushes', async () => {
    const host = createPlanHost(LAYERS)
    const agent = await host.agent()
    host.model.push(async () => {
      await host.command(agent, '/plan')
      host.fibers.core.dispose()
      return { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }
    })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode')).toEqual([])
    expect(requestSystem(host.model.requests[1]!)).not.toContain(SECTION)
    // the other layers stay, and degrade without plan-core
    expect(await host.command(agent, '/plan')).toEqual({ kind: 'error', text: 'Plan mode is not available: @planmode/plan-core is not loaded.' })
  })
})
