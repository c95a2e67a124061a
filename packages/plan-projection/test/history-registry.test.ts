import { Context } from '@planmode/context'
import { sessionProjectionsPlugin, sessionStorePlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planHistory, planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import type { ProjectionChange, SessionEventType } from '@planmode/seams'
import { createHost } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'
import { call, message, result, review, type Raw } from './history-helpers.js'

const append = (session: { append(type: SessionEventType, data: never): Promise<unknown> }, body: Raw) =>
  session.append(body.type as SessionEventType, body.data as never)

describe('§15 the planHistory unit in the host registry', () => {
  it('registers key planHistory only while a sessionProjections registry is composed; disposal removes it; opt-in beside plan', () => {
    const root = new Context()
    root.plugin(planCorePlugin)
    const layer = root.plugin(planHistoryPlugin)
    const registry = root.plugin(sessionProjectionsPlugin)
    expect(root.require('sessionProjections').keys()).toEqual(['planHistory'])
    root.plugin(planProjectionPlugin)
    expect([...root.require('sessionProjections').keys()].sort()).toEqual(['plan', 'planHistory'])
    layer.dispose()
    expect(root.require('sessionProjections').keys()).toEqual(['plan'])
    root.plugin(planHistoryPlugin)
    registry.dispose()
    root.plugin(sessionProjectionsPlugin)
    expect([...root.require('sessionProjections').keys()].sort()).toEqual(['plan', 'planHistory'])
  })

  it('requires planMode: refused without it, and its key follows planMode', async () => {
    const root = new Context()
    root.plugin(sessionStorePlugin, {})
    root.plugin(sessionProjectionsPlugin)
    expect(() => root.plugin(planHistoryPlugin)).toThrow(
      'plugin "@planmode/plan-projection/history" requires service "planMode", which is not provided',
    )
    const core = root.plugin(planCorePlugin)
    root.plugin(planHistoryPlugin)
    const session = await root.require('sessions').create()
    expect(root.require('sessionProjections').snapshot(session)).toEqual({ asOfSeq: -1, values: { planHistory: { revisions: [] } } })
    core.dispose()
    expect(root.require('sessionProjections').keys()).toEqual([])
    root.plugin(planCorePlugin)
    expect(root.require('sessionProjections').keys()).toEqual(['planHistory'])
  })

  it('live changes fire only when a revision opens or settles; a new host over the same log replays the same view', async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = await mkdtemp(join(tmpdir(), 'plan-history-'))
    const first = createHost([], { dir })
    first.root.plugin(planCorePlugin)
    first.root.plugin(planHistoryPlugin)
    const changes: ProjectionChange[] = []
    first.root.require('sessionProjections').onChange((change) => changes.push(change))
    const session = await first.root.require('sessions').create()
    for (const body of [
      { type: 'turn/start', data: { turn: 1 } },
      message(call('a', '# One')),
      review('a', 'keep-planning', { feedback: 'shorter', comments: [{ line: 1, text: 'title?' }] }),
      result('a'),
      message(call('b', 'no heading'), call('c', '# Two\n- do it')),
      result('c', false),
      { type: 'turn/end', data: { turn: 1, reason: 'completed' } },
    ]) {
      await append(session, body)
    }
    const expected = {
      revisions: [
        {
          rev: 1,
          toolCallId: 'a',
          seq: 1,
          title: 'One',
          plan: '# One',
          status: 'keep-planning',
          feedback: 'shorter',
          comments: [{ line: 1, text: 'title?' }],
        },
        { rev: 2, toolCallId: 'c', seq: 4, title: 'Two', plan: '# Two\n- do it', status: 'refused' },
      ],
    }
    expect(first.root.require('sessionProjections').snapshot(session).values.planHistory).toEqual(expected)
    expect(changes.filter((change) => change.key === 'planHistory').map((change) => change.asOfSeq)).toEqual([1, 2, 4, 5])
    await first.root.require('sessions').close(session)

    const second = createHost([], { dir })
    second.root.plugin(planCorePlugin)
    second.root.plugin(planHistoryPlugin)
    const reopened = await second.root.require('sessions').open(session.id)
    expect(second.root.require('sessionProjections').snapshot(reopened).values.planHistory).toEqual(expected)
    expect(planHistory.view(reopened.events.reduce(planHistory.apply, planHistory.initial()))).toEqual(expected)
  })

  it('through the real host loop: a scripted exit_plan_mode call opens a revision, and its failed result (no such tool here) refuses it', async () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    host.root.plugin(planHistoryPlugin)
    const seen: unknown[] = []
    host.root.require('sessionProjections').onChange((change) => {
      if (change.key === 'planHistory') seen.push(change.value)
    })
    const agent = await host.agent()
    host.model.push({ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: '# Ship it\n- one step' } }] }, { text: 'ok' })
    await agent.prompt('go')
    const revisions = host.root.require('sessionProjections').snapshot(agent.session).values.planHistory!.revisions
    expect(revisions).toHaveLength(1)
    expect(revisions[0]).toMatchObject({ rev: 1, title: 'Ship it', plan: '# Ship it\n- one step', status: 'refused' })
    const message = agent.session.events.find((event) => event.type === 'assistant/message')!
    expect(revisions[0]!.seq).toBe(message.seq)
    expect(seen.map((value) => (value as { revisions: { status: string }[] }).revisions.map((r) => r.status))).toEqual([
      ['open'],
      ['refused'],
    ])
  })
})
