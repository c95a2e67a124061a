import { Context, MissingServiceError } from '@planmode/context'
import { systemPromptPlugin, toolsPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_POLICY_ORDER, PLAN_POLICY_SECTION, RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf, requestSystem } from '@planmode/testkit'

const SECTION = '  Plan first; change nothing.\n\n'

function setup(section = SECTION) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  const fiber = host.root.plugin(planPolicyPlugin, { section })
  host.root.require('tools').register({
    name: 'write',
    description: 'Writes a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: () => 'written',
  })
  return { ...host, fiber, planMode: host.root.require('planMode'), systemPrompt: host.root.require('systemPrompt') }
}

const rendered = (assembled: { sections: readonly { name: string; order: number; text: string }[] }) =>
  assembled.sections.find((section) => section.name === PLAN_POLICY_SECTION)

describe('§4 the plan:policy section', () => {
  it('is registered as plan:policy at order 50', async () => {
    const { systemPrompt, agent } = setup()
    const section = rendered(systemPrompt.assemble({ agent: await agent() }))
    expect(PLAN_POLICY_SECTION).toBe('plan:policy')
    expect(PLAN_POLICY_ORDER).toBe(50)
    expect(section).toEqual({ name: 'plan:policy', order: 50, text: '' })
  })

  it('renders "" for an assembly without an agent, even while some agent is in plan mode', async () => {
    const { systemPrompt, planMode, agent } = setup()
    await planMode.set(await agent(), true)
    expect(rendered(systemPrompt.assemble({}))!.text).toBe('')
  })

  it('renders the configured text exactly (not trimmed, not wrapped) while active, "" while inactive', async () => {
    const { systemPrompt, planMode, agent } = setup()
    const a = await agent()
    const b = await agent()
    await planMode.set(a, true)
    expect(rendered(systemPrompt.assemble({ agent: a }))!.text).toBe(SECTION)
    expect(rendered(systemPrompt.assemble({ agent: b }))!.text).toBe('')
    expect(systemPrompt.assemble({ agent: a }).system).toContain(SECTION)
  })

  it('follows pending ?? active: a waiting entry shows, a waiting exit hides', async () => {
    const host = setup()
    const agent = await host.agent()
    const seen: string[] = []
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      seen.push(rendered(host.systemPrompt.assemble({ agent }))!.text)
      return { toolCalls: [{ toolName: 'write', input: { path: 'x' } }] }
    })
    host.model.push(async () => {
      await host.planMode.set(agent, false)
      seen.push(rendered(host.systemPrompt.assemble({ agent }))!.text)
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(seen).toEqual([SECTION, ''])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(requestSystem(host.model.requests[0]!)).not.toContain(SECTION.trim())
    expect(requestSystem(host.model.requests[1]!)).toContain(SECTION)
  })

  it('keeps the tool catalog byte-identical in both states', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push({ text: 'a' }, { text: 'b' })
    await agent.prompt('one')
    await host.planMode.set(agent, true)
    await agent.prompt('two')
    const headers = eventsOf(agent.session, 'request/header')
    expect(headers.map((header) => header.data.reason)).toEqual(['initial', 'change'])
    expect(JSON.stringify(headers[1]!.data.tools)).toBe(JSON.stringify(headers[0]!.data.tools))
    expect(headers[1]!.data.system).toContain(SECTION)
    expect(JSON.stringify(host.model.requests[1]!.tools)).toBe(JSON.stringify(host.model.requests[0]!.tools))
  })

  it('works with the recommended section', async () => {
    const host = setup(RECOMMENDED_PLAN_SECTION)
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(host.systemPrompt.assemble({ agent }).system).toContain(RECOMMENDED_PLAN_SECTION.trim())
  })
})

describe('§4 config and composition', () => {
  it('validates the config at load', () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    expect(() => host.root.plugin(planPolicyPlugin, { section: ' ' })).toThrow('needs a non-empty `section`')
    expect(() => host.root.plugin(planPolicyPlugin, { section: 'x', tools: ['read'] } as never)).toThrow('unknown key(s) tools')
    expect(() => host.root.plugin(planPolicyPlugin, undefined as never)).toThrow('needs a string `section`')
    expect(host.root.require('systemPrompt').assemble({}).sections).toEqual([])
  })

  it('requires planMode, loudly', () => {
    const root = new Context()
    expect(() => root.plugin(planPolicyPlugin, { section: 'x' })).toThrow(MissingServiceError)
    expect(() => root.plugin(planPolicyPlugin, { section: 'x' })).toThrow('planMode')
  })

  it('registers only while a systemPrompt registry is composed, and disposal removes exactly its section', async () => {
    const root = new Context()
    root.plugin(planCorePlugin)
    root.plugin(toolsPlugin)
    const policy = root.plugin(planPolicyPlugin, { section: 'x' })
    const prompt = root.plugin(systemPromptPlugin)
    root.require('systemPrompt').section({ name: 'other', order: 10, text: 'base' })
    expect(
      root
        .require('systemPrompt')
        .assemble({})
        .sections.map((section) => section.name),
    ).toEqual(['other', 'plan:policy'])
    policy.dispose()
    expect(
      root
        .require('systemPrompt')
        .assemble({})
        .sections.map((section) => section.name),
    ).toEqual(['other'])
    root.plugin(planPolicyPlugin, { section: 'x' })
    prompt.dispose()
    expect(root.get('systemPrompt')).toBeUndefined()
    root.plugin(systemPromptPlugin)
    expect(
      root
        .require('systemPrompt')
        .assemble({})
        .sections.map((section) => section.name),
    ).toEqual(['plan:policy'])
  })

  it('is removed once plan-core is gone, and comes back with it (§3.6, §8)', async () => {
    const host = createHost()
    const core = host.root.plugin(planCorePlugin)
    const policy = host.root.plugin(planPolicyPlugin, { section: 'x' })
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    core.dispose()
    expect(rendered(host.root.require('systemPrompt').assemble({ agent }))).toBeUndefined()
    expect([policy.applied, policy.disposed]).toEqual([false, false])
    host.root.plugin(planCorePlugin)
    expect(rendered(host.root.require('systemPrompt').assemble({ agent }))!.text).toBe('x')
  })
})
