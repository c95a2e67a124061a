import { Context, type Fiber } from '@planmode/context'
import {
  agentsPlugin,
  commandsPlugin,
  createScriptedModel,
  sessionInvariantsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
  type HostSessionInvariants,
} from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_MODE_INVARIANT_OWNER, planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { ENTER_PLAN_MODE, EXIT_PLAN_MODE, planToolPlugin } from '@planmode/plan-tool'
import type { Session } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { eventsOf, recordingLogger, requestSystem } from '@planmode/testkit'
import { LAYERS, SECTION, createPlanHost, type Layer } from './plan-host.js'

const PLAN = '# Plan\n\nDo it.'

/** Every registration a plan package can make, as seen through the host's public registries. */
function registrations(root: Context, session: Session) {
  return {
    planMode: root.get('planMode') !== undefined,
    sections: root
      .require('systemPrompt')
      .assemble({})
      .sections.map((section) => section.name),
    commands: root
      .require('commands')
      .list()
      .map((command) => command.name),
    tools: root
      .require('tools')
      .schemas()
      .map((tool) => tool.name),
    projections: root.require('sessionProjections').keys(),
    values: Object.keys(root.require('sessionProjections').snapshot(session).values),
  }
}

/** The projection keys the composed layers register, in load order. */
const projectionKeys = (has: (layer: Layer) => boolean): string[] => [
  ...(has('projection') ? ['plan'] : []),
  ...(has('history') ? ['planHistory'] : []),
]

const combos: (readonly Layer[])[] = [[], ['policy'], ['commands'], ['tool'], ['projection'], ['history'], LAYERS]

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
        tools: [...(has('tool') ? [ENTER_PLAN_MODE, EXIT_PLAN_MODE] : []), 'read', 'write'],
        projections: projectionKeys(has),
        values: projectionKeys(has),
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
    // every layer requires planMode: disposing plan-core undoes them all (§3.6, §8)
    if (which === 'core')
      Object.assign(expected, { planMode: false, sections: [], commands: [], tools: ['read', 'write'], projections: [], values: [] })
    if (which === 'policy') expected.sections = []
    if (which === 'commands') expected.commands = []
    if (which === 'tool') expected.tools = ['read', 'write']
    if (which === 'projection') {
      expected.projections = expected.projections.filter((key) => key !== 'plan')
      expected.values = expected.values.filter((key) => key !== 'plan')
    }
    if (which === 'history') {
      expected.projections = expected.projections.filter((key) => key !== 'planHistory')
      expected.values = expected.values.filter((key) => key !== 'planHistory')
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
    // the layers went with plan-core: /plan is no longer a command
    expect(await host.command(agent, '/plan')).toBeUndefined()
    expect(host.fibers.commands).toMatchObject({ applied: false, disposed: false })
  })
})

/**
 * How the plan layers are composed around plan-core:
 * - `flat`: every plugin on the root, as the READMEs show;
 * - `bundle`: plan-core and the layers nested as siblings in one bundle plugin;
 * - `under-core`: the layers nested in plan-core's own context (they are disposed with it).
 */
type Composition = 'flat' | 'bundle' | 'under-core'

function layerPlugin(ctx: Context, layer: Layer): Fiber {
  if (layer === 'policy') return ctx.plugin(planPolicyPlugin, { section: SECTION })
  if (layer === 'commands') return ctx.plugin(planCommandsPlugin)
  if (layer === 'tool') return ctx.plugin(planToolPlugin)
  if (layer === 'history') return ctx.plugin(planHistoryPlugin)
  return ctx.plugin(planProjectionPlugin)
}

/** The reference host with the chosen layers composed one way, and a review provider and tools as in `createPlanHost`. */
function composedHost(composition: Composition, layers: readonly Layer[]) {
  const host = createPlanHost([])
  const { root } = host
  // createPlanHost composed plan-core (and no layer) flat: replace it by the chosen composition
  host.fibers.core.dispose()
  const fibers: Fiber[] = []
  let core: Fiber | undefined
  let where: Context = root
  const loadCore = () => {
    if (composition === 'flat') core = root.plugin(planCorePlugin)
    if (composition === 'bundle') core = where.plugin(planCorePlugin)
    if (composition === 'under-core') {
      core = root.plugin(planCorePlugin)
      fibers.length = 0
      for (const layer of layers) fibers.push(layerPlugin(core.ctx, layer))
    }
  }
  if (composition === 'bundle') {
    root.plugin({
      name: 'test/plan-bundle',
      apply(ctx) {
        where = ctx
        loadCore()
        for (const layer of layers) fibers.push(layerPlugin(ctx, layer))
      },
    })
  } else {
    loadCore()
    if (composition === 'flat') for (const layer of layers) fibers.push(layerPlugin(root, layer))
  }
  return { host, fibers, loadCore, disposeCore: () => core!.dispose() }
}

const layerSets: (readonly Layer[])[] = [['policy'], ['commands'], ['tool'], ['projection'], ['history'], LAYERS]
const compositions: readonly Composition[] = ['flat', 'bundle', 'under-core']
const followCases = compositions.flatMap((composition) => layerSets.map((layers) => [composition, layers.join(' + '), layers] as const))

describe('§3.6/§8 the layers follow plan-core, however they are composed', () => {
  it.each(followCases)(
    '%s, %s: disposing plan-core removes the layers; plan-core again brings them back, working',
    async (composition, _name, layers) => {
      const has = (layer: Layer) => layers.includes(layer)
      const { host, fibers, loadCore, disposeCore } = composedHost(composition, layers)
      const { root } = host
      const agent = await host.agent()
      const present = {
        planMode: true,
        sections: has('policy') ? ['plan:policy'] : [],
        commands: has('commands') ? ['plan'] : [],
        tools: [...(has('tool') ? [ENTER_PLAN_MODE, EXIT_PLAN_MODE] : []), 'read', 'write'],
        projections: projectionKeys(has),
        values: projectionKeys(has),
      }
      expect(registrations(root, agent.session)).toEqual(present)

      disposeCore()
      expect(registrations(root, agent.session)).toEqual({
        planMode: false,
        sections: [],
        commands: [],
        tools: ['read', 'write'],
        projections: [],
        values: [],
      })
      // flat and bundled layers wait for planMode; layers nested in plan-core's context are disposed with it
      for (const fiber of fibers) {
        expect({ applied: fiber.applied, disposed: fiber.disposed }).toEqual({ applied: false, disposed: composition === 'under-core' })
      }
      expect(await host.command(agent, '/plan')).toBeUndefined()
      host.model.push({ text: 'nothing to plan' })
      await agent.prompt('hello')
      const idleRequest = host.model.requests.at(-1)!
      expect(requestSystem(idleRequest)).not.toContain(SECTION)
      expect((idleRequest.tools ?? []).map((tool) => tool.name)).toEqual(['read', 'write'])

      loadCore()
      expect(registrations(root, agent.session)).toEqual(present)
      for (const fiber of composition === 'under-core' ? [] : fibers) expect(fiber).toMatchObject({ applied: true, disposed: false })

      // and it all works again: enter, guidance, projection, review and exit
      if (has('commands'))
        expect(await host.command(agent, '/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
      else expect(await root.require('planMode').set(agent, true)).toBe('committed')
      if (has('projection')) {
        expect(root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: true, pending: false })
      }
      const first = host.model.requests.length
      host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'done' })
      host.reviews.push([{ id: 'plan-review', selected: ['Approve'] }])
      await agent.prompt('go')
      expect(requestSystem(host.model.requests[first]!).includes(SECTION)).toBe(has('policy'))
      const result = eventsOf(agent.session, 'tool/result').at(-1)!.data
      if (has('tool')) {
        expect(result).toMatchObject({ isError: false, value: { approved: true } })
        expect(root.require('planMode').get(agent)).toEqual({ active: false })
        if (has('projection')) {
          expect(root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: false, pending: false })
        }
      } else {
        expect(result.isError).toBe(true)
        expect(root.require('planMode').get(agent)).toEqual({ active: true })
      }
      expect(host.logger.lines.filter((line) => line.level === 'error')).toEqual([])
    },
  )

  it('a layer loaded without plan-core throws an error naming planMode', () => {
    const host = createPlanHost([])
    host.fibers.core.dispose()
    for (const plugin of [planCommandsPlugin, planToolPlugin, planProjectionPlugin, planHistoryPlugin] as const) {
      expect(() => host.root.plugin(plugin)).toThrow(`plugin "${plugin.name}" requires service "planMode", which is not provided`)
    }
    expect(() => host.root.plugin(planPolicyPlugin, { section: SECTION })).toThrow(
      'plugin "@planmode/plan-policy" requires service "planMode", which is not provided',
    )
    expect(registrations(host.root, { events: [] } as never)).toMatchObject({
      sections: [],
      commands: [],
      tools: ['read', 'write'],
      projections: [],
    })
  })
})

describe("§2 plan-core's invariant follows sessionInvariants", () => {
  /** The reference host assembled from its parts, so that its invariant registry can leave and come back. */
  function partsHost() {
    const logger = recordingLogger()
    const root = new Context({ logger })
    const parts = [
      sessionInvariantsPlugin,
      sessionStorePlugin,
      toolsPlugin,
      systemPromptPlugin,
      commandsPlugin,
      userQuestionsPlugin,
      sessionProjectionsPlugin,
    ]
    const fibers = parts.map((part) => root.plugin(part as never))
    root.plugin(agentsPlugin, { model: createScriptedModel([]), retryDelayMs: 0 })
    return { root, logger, invariants: fibers[0]! }
  }

  it.each(['flat', 'bundle'] as const)(
    '%s: gone with the registry, registered again (and enforcing) when it returns',
    async (composition) => {
      const { root, invariants } = partsHost()
      if (composition === 'flat') root.plugin(planModeInvariantPlugin)
      else root.plugin({ name: 'test/bundle', apply: (ctx) => void ctx.plugin(planModeInvariantPlugin) })
      const session = await root.require('sessions').create()
      const owners = () => (root.require('sessionInvariants') as HostSessionInvariants).owners()
      expect(owners()).toEqual([PLAN_MODE_INVARIANT_OWNER])
      await expect(session.append('plan/mode', { active: 'yes' } as never)).rejects.toThrow('expected a boolean')

      invariants.dispose()
      expect(root.get('sessionInvariants')).toBeUndefined()
      await session.append('plan/mode', { active: true }) // nothing checks appends now

      root.plugin(sessionInvariantsPlugin)
      expect(owners()).toEqual([PLAN_MODE_INVARIANT_OWNER])
      await expect(session.append('plan/mode', { active: 'yes' } as never)).rejects.toThrow('expected a boolean')
      await session.append('plan/mode', { active: false })
      expect(eventsOf(session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    },
  )

  it('a session broken while the registry was away: re-registering fails, is logged, and the check stays away', async () => {
    const { root, logger, invariants } = partsHost()
    const fiber = root.plugin(planModeInvariantPlugin)
    const session = await root.require('sessions').create()
    invariants.dispose()
    await session.append('plan/mode', { active: 'yes' } as never) // nothing checks appends now
    root.plugin(sessionInvariantsPlugin)
    expect((root.require('sessionInvariants') as HostSessionInvariants).owners()).toEqual([])
    expect([fiber.applied, fiber.disposed]).toEqual([false, false])
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      'plugin "@planmode/plan-core/invariant": apply threw when its required services returned; it stays unloaded until they return again',
    ])
  })

  it('nested in the registry plugin: disposed with it for good', () => {
    const { root, invariants } = partsHost()
    const nested = invariants.ctx.plugin(planModeInvariantPlugin)
    invariants.dispose()
    expect(nested.disposed).toBe(true)
    root.plugin(sessionInvariantsPlugin)
    expect((root.require('sessionInvariants') as HostSessionInvariants).owners()).toEqual([])
  })

  it('loaded without sessionInvariants it throws an error naming the service', () => {
    const root = new Context()
    expect(() => root.plugin(planModeInvariantPlugin)).toThrow(
      'plugin "@planmode/plan-core/invariant" requires service "sessionInvariants", which is not provided',
    )
  })
})
