import { Context, MissingServiceError } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import type { Session } from '@planmode/seams'
import { createHost } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'
import { approve, progressMessages, setup } from './support.js'

const keys = (h: { root: Context }, session: Session) => Object.keys(h.root.require('sessionProjections').snapshot(session).values)

describe('§17/§8 layer rules', () => {
  it.each([
    ['planProgressPlugin', planProgressPlugin],
    ['planProgressProjectionPlugin', planProgressProjectionPlugin],
  ])('%s requires planMode: loading it without one throws an error naming the service', (_name, plugin) => {
    const root = new Context()
    let error: unknown
    try {
      root.plugin(plugin)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(MissingServiceError)
    expect((error as MissingServiceError).service).toBe('planMode')
    expect((error as Error).message).toContain('planMode')
  })

  it('loads without tools or sessionProjections (they stay optional) and registers when they appear', () => {
    const root = new Context()
    root.plugin(planCorePlugin)
    const layer = root.plugin(planProgressPlugin)
    const projection = root.plugin(planProgressProjectionPlugin)
    expect([layer.applied, projection.applied]).toEqual([true, true])
  })

  it('disposing plan-core removes the tool, the messages and the key; plan-core again brings them back, working', async () => {
    const h = setup([{ text: 'one' }, { text: 'two' }])
    const agent = await h.agent()
    await approve(agent.session)
    const tools = h.root.require('tools')
    expect(tools.get(UPDATE_PLAN)).toBeDefined()
    expect(keys(h, agent.session)).toContain('planProgress')
    h.core.dispose()
    expect(tools.get(UPDATE_PLAN)).toBeUndefined()
    expect(keys(h, agent.session)).not.toContain('planProgress')
    expect([h.progress.applied, h.projection!.applied]).toEqual([false, false])
    await agent.prompt('no plan mode loaded')
    expect(progressMessages(agent.session)).toEqual([])
    h.root.plugin(planCorePlugin)
    expect(tools.get(UPDATE_PLAN)).toBeDefined()
    expect(keys(h, agent.session)).toContain('planProgress')
    await agent.prompt('back')
    expect(progressMessages(agent.session)).toHaveLength(1)
  })

  it('nested in plan-core’s own context, it is disposed with plan-core for good', () => {
    const h = createHost()
    const core = h.root.plugin(planCorePlugin)
    const layer = core.ctx.plugin(planProgressPlugin)
    core.dispose()
    expect(layer.disposed).toBe(true)
    h.root.plugin(planCorePlugin)
    expect(h.root.require('tools').get(UPDATE_PLAN)).toBeUndefined()
  })

  it('composed in a bundle beside plan-core: undone with plan-core, applied again when plan-core returns there', () => {
    const h = createHost()
    let bundle: Context | undefined
    let core: { dispose(): void } | undefined
    h.root.plugin({
      name: 'test/bundle',
      apply(ctx) {
        bundle = ctx
        core = ctx.plugin(planCorePlugin)
        ctx.plugin(planProgressPlugin)
      },
    })
    const tools = h.root.require('tools')
    expect(tools.get(UPDATE_PLAN)).toBeDefined()
    core!.dispose()
    expect(tools.get(UPDATE_PLAN)).toBeUndefined()
    bundle!.plugin(planCorePlugin)
    expect(tools.get(UPDATE_PLAN)).toBeDefined()
  })

  it('disposing the layer removes the tool and its messages; disposing the projection plugin removes only the key', async () => {
    const h = setup([{ text: 'one' }, { text: 'two' }])
    const agent = await h.agent()
    await approve(agent.session)
    h.projection!.dispose()
    expect(keys(h, agent.session)).not.toContain('planProgress')
    expect(h.root.require('tools').get(UPDATE_PLAN)).toBeDefined()
    h.progress.dispose()
    expect(h.root.require('tools').get(UPDATE_PLAN)).toBeUndefined()
    await agent.prompt('go')
    expect(progressMessages(agent.session)).toEqual([])
    expect(
      h.root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual([])
  })

  it('the projection works without the layer, and the layer without the projection', async () => {
    const withoutLayer = setup()
    withoutLayer.progress.dispose()
    const a = await withoutLayer.agent()
    await approve(a.session)
    expect(withoutLayer.root.require('sessionProjections').snapshot(a.session).values.planProgress?.total).toBe(3)
    const withoutProjection = setup([{ text: 'x' }], { projection: false })
    const b = await withoutProjection.agent()
    await approve(b.session)
    await b.prompt('go')
    expect(progressMessages(b.session)).toHaveLength(1)
    expect(keys(withoutProjection, b.session)).toEqual([])
  })

  it('the projection through the host registry: a snapshot of the log, validated, and a change per relevant event', async () => {
    const h = setup()
    const agent = await h.agent()
    const changes: unknown[] = []
    h.root.require('sessionProjections').onChange((change) => {
      if (change.key === 'planProgress') changes.push(change.value)
    })
    await approve(agent.session)
    const value = h.root.require('sessionProjections').snapshot(agent.session).values.planProgress
    expect(value).toEqual({
      plan: { toolCallId: 'exit-1', title: 'Add caching' },
      steps: [
        { step: 1, text: 'Add a cache.', status: 'pending' },
        { step: 2, text: 'Wire it in.', status: 'pending' },
        { step: 3, text: 'Test it.', status: 'pending' },
      ],
      done: 0,
      total: 3,
      active: null,
    })
    // the call, the record (the approval) and the result change the state; plan/mode off does not
    expect(changes.at(-1)).toEqual(value)
  })
})
