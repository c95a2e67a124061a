import { Context } from '@planmode/context'
import { sessionProjectionsPlugin, sessionStorePlugin, type HostAgent } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProjection, planProjectionPlugin } from '@planmode/plan-projection'
import type { ProjectionChange, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHost } from '@planmode/testkit'

type Body = { [K in SessionEventType]: { type: K; data: SessionEventMap[K] } }[SessionEventType]

const ids = fc.constantFrom('c1', 'c2', 'c3')
const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  fc.boolean().map((active): Body => ({ type: 'plan/mode', data: { active } })),
  fc
    .tuple(ids, fc.constantFrom('plan', 'plan', 'other'), fc.option(fc.constantFrom('', 'off', ' off', 'OFF', 'x'), { nil: undefined }))
    .map(([commandId, name, args]): Body => ({
      type: 'command/run',
      data:
        args === undefined
          ? ({ commandId, name, source: { kind: 'user' } } as SessionEventMap['command/run']) /* a log from before args was always logged */
          : { commandId, name, args, source: { kind: 'user' } },
    })),
  fc
    .tuple(ids, fc.constantFrom<'success' | 'error'>('success', 'error'))
    .map(([commandId, kind]): Body => ({ type: 'command/done', data: { commandId, kind } })),
  fc.nat(3).map((turn): Body => ({ type: 'turn/start', data: { turn } })),
  fc.constant<Body>({ type: 'user/message', data: { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } }),
)

const coldView = (events: readonly SessionEvent[]) => planProjection.view(events.reduce(planProjection.apply, planProjection.initial()))

describe('§7 the plan projection in the host registry', () => {
  it('registers key plan only while a sessionProjections registry is composed; disposal removes it', () => {
    const root = new Context()
    root.plugin(planCorePlugin)
    const layer = root.plugin(planProjectionPlugin)
    const registry = root.plugin(sessionProjectionsPlugin)
    expect(root.require('sessionProjections').keys()).toEqual(['plan'])
    layer.dispose()
    expect(root.require('sessionProjections').keys()).toEqual([])
    root.plugin(planProjectionPlugin)
    registry.dispose()
    root.plugin(sessionProjectionsPlugin)
    expect(root.require('sessionProjections').keys()).toEqual(['plan'])
  })

  it('needs plan-core only (§8): refused without planMode, and its key follows planMode', async () => {
    const root = new Context()
    root.plugin(sessionStorePlugin, {})
    root.plugin(sessionProjectionsPlugin)
    expect(() => root.plugin(planProjectionPlugin)).toThrow(
      'plugin "@planmode/plan-projection" requires service "planMode", which is not provided',
    )
    const core = root.plugin(planCorePlugin)
    root.plugin(planProjectionPlugin)
    const session = await root.require('sessions').create()
    expect(root.require('sessionProjections').snapshot(session)).toEqual({
      asOfSeq: -1,
      values: { plan: { active: false, pending: false } },
    })
    core.dispose()
    expect(root.require('sessionProjections').keys()).toEqual([])
    root.plugin(planCorePlugin)
    expect(root.require('sessionProjections').keys()).toEqual(['plan'])
  })

  it('the view equals a cold refold at every prefix (fast-check, real sessions and registry)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(bodyArb, { maxLength: 30 }), async (bodies) => {
        const host = createHost()
        host.root.plugin(planCorePlugin)
        host.root.plugin(planProjectionPlugin)
        const projections = host.root.require('sessionProjections')
        const session = await host.root.require('sessions').create()
        for (const body of bodies) {
          await session.append(body.type, body.data as never)
          const snapshot = projections.snapshot(session)
          expect(snapshot.asOfSeq).toBe(session.events.at(-1)!.seq)
          expect(snapshot.values.plan).toEqual(coldView(session.events))
        }
        host.root.dispose()
      }),
      { numRuns: 60 },
    )
  })

  it('a late registration folds the existing log; a new host over the same log agrees (pure replay)', async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = await mkdtemp(join(tmpdir(), 'plan-projection-'))
    const first = createHost([], { dir })
    const session = await first.root.require('sessions').create()
    await session.append('command/run', { commandId: 'a', name: 'plan', args: ' now', source: { kind: 'user' } })
    await session.append('command/done', { commandId: 'a', kind: 'success' })
    first.root.plugin(planCorePlugin)
    first.root.plugin(planProjectionPlugin)
    expect(first.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: true })
    await first.root.require('sessions').close(session)

    const second = createHost([], { dir })
    second.root.plugin(planCorePlugin)
    second.root.plugin(planProjectionPlugin)
    const reopened = await second.root.require('sessions').open(session.id)
    expect(second.root.require('sessionProjections').snapshot(reopened).values.plan).toEqual({ active: false, pending: true })
  })

  it('follows the real /plan command records: a refused /plan off with images leaves no pending exit', async () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    host.root.plugin(planProjectionPlugin)
    const changes: ProjectionChange[] = []
    host.root.require('sessionProjections').onChange((change) => changes.push(change))
    host.root.require('commands').register({
      name: 'plan',
      description: 'stand-in',
      input: { images: true },
      handler: async ({ agent, rawInput, attachments }) => {
        if (rawInput.trim() === 'off' && attachments.length > 0) return { kind: 'error', text: 'no' }
        await host.root.require('planMode').set(agent, rawInput.trim() !== 'off')
        return { kind: 'success', text: 'ok' }
      },
    })
    const agent: HostAgent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    const image = { id: 'i', mediaType: 'image/png', data: 'AA==' }
    await host.root.require('commands').execute({ agent, line: '/plan off', attachments: [image] })
    expect(host.root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: true, pending: false })
    expect(changes.map((change) => change.value)).toEqual([
      { active: true, pending: false },
      { active: true, pending: true },
      { active: true, pending: false },
    ])
  })
})
