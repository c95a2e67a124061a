import { planCorePlugin, readPlanLog } from '@planmode/plan-core'
import type { Session } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

/** What an approved exit_plan_mode call leaves in the log (plan-tool writes it through the host's tool runtime). */
async function approvedExit(session: Session, value: unknown = { approved: true }, isError = false): Promise<void> {
  await session.append('tool/result', {
    toolCallId: 'c1',
    toolName: 'exit_plan_mode',
    isError,
    content: [{ type: 'text', text: 'approved' }],
    ...(value === undefined ? {} : { value }),
  } as never)
}

/** A log written by a process that is gone: plan mode on, a turn whose review was approved, then the crash. */
async function crashedAfterApproval(session: Session): Promise<void> {
  await session.append('plan/mode', { active: true })
  await session.append('turn/start', { turn: 1 })
  await session.append('step/start', { turn: 1, step: 1 })
  await approvedExit(session)
}

function fresh(script: Parameters<typeof createHost>[0] = []) {
  const host = createHost(script)
  host.root.plugin(planCorePlugin)
  return { ...host, planMode: host.root.require('planMode') }
}

describe('§3.5 + §9a: an approved exit that had not reached a step boundary when the process died', () => {
  it('is rebuilt as the silent exit it was, and applied without a notice by the turn/end that closes the interrupted turn (§22.2)', async () => {
    const host = fresh([{ text: 'implementing' }])
    const session = await host.root.require('sessions').create()
    await crashedAfterApproval(session)
    const agent = await host.agent(session)
    expect(readPlanLog(session).silent).toEqual({ active: false, cause: 'review', afterRunning: false, turnEnded: false })
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    await agent.prompt('go on')
    expect(eventsOf(session, 'plan/mode').map((e) => e.data.active)).toEqual([true, false])
    const types = session.events.map((e) => e.type)
    expect(types.slice(types.indexOf('turn/end'), types.indexOf('turn/end') + 3)).toEqual(['turn/end', 'plan/mode', 'turn/start'])
    expect(eventsOf(session, 'user/message').filter((e) => e.data.source.kind === 'plugin')).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: false })
  })

  it.each<[string, (session: Session) => Promise<void>]>([
    ['a later plan/mode applied it', async (s) => void (await s.append('plan/mode', { active: false }))],
    [
      'a later successful /plan decided again',
      async (s) => {
        await s.append('command/run', { commandId: 'k1', name: 'plan', args: '', source: { kind: 'user' } })
        await s.append('command/done', { commandId: 'k1', kind: 'success', text: 'Plan mode exit cancelled.' })
      },
    ],
  ])('is not rebuilt when %s', async (_name, after) => {
    const host = fresh()
    const session = await host.root.require('sessions').create()
    await crashedAfterApproval(session)
    await after(session)
    const agent = await host.agent(session)
    expect(readPlanLog(session).silent).toBeUndefined()
    expect(host.planMode.get(agent).pending).toBeUndefined()
  })

  it.each<[string, unknown, boolean]>([
    ['a failed review result', { approved: true }, true],
    ['a result whose value is null', null, false],
    ['a result whose value is not approved', { approved: 'yes' }, false],
  ])('ignores %s', async (_name, value, isError) => {
    const host = fresh()
    const session = await host.root.require('sessions').create()
    await session.append('plan/mode', { active: true })
    await approvedExit(session, value, isError)
    expect(host.planMode.get(await host.agent(session))).toEqual({ active: true })
  })

  it('a /plan off settled before the approval does not hide it; a waiting /plan off after it is kept as the latest word', async () => {
    const host = fresh()
    const session = await host.root.require('sessions').create()
    await crashedAfterApproval(session)
    await session.append('command/run', { commandId: 'k2', name: 'plan', args: ' off', source: { kind: 'user' } })
    await session.append('command/done', { commandId: 'k2', kind: 'success', text: 'Leaving plan mode (applies from the next step).' })
    const agent = await host.agent(session)
    // The /plan off came last: a narrated exit (as the live controller would have it).
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(readPlanLog(session).silent).toBeUndefined()
  })
})

/** A log written by a process that is gone: the user agreed to enter_plan_mode, then the crash before the next step. */
async function crashedAfterEntry(session: Session, value: unknown = { entered: true }, isError = false): Promise<void> {
  // 'none': a result without a value
  await session.append('turn/start', { turn: 1 })
  await session.append('step/start', { turn: 1, step: 1 })
  await session.append('request/header', { reason: 'initial', turn: 1, step: 1, model: 'test:model', system: '', tools: [] })
  await session.append('tool/result', {
    toolCallId: 'e1',
    toolName: 'enter_plan_mode',
    isError,
    content: [{ type: 'text', text: 'entered' }],
    ...(value === 'none' ? {} : { value }),
  } as never)
}

describe('§12 + §9a: an approved entry that had not reached a step boundary when the process died', () => {
  it('is rebuilt as the silent entry it was, applied with cause model and no notice by the turn/end that closes the interrupted turn (§22.2)', async () => {
    const host = fresh([{ text: 'exploring' }])
    const session = await host.root.require('sessions').create()
    await crashedAfterEntry(session)
    const agent = await host.agent(session)
    expect(readPlanLog(session).silent).toEqual({ active: true, cause: 'model', afterRunning: false, turnEnded: false })
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
    await agent.prompt('go on')
    expect(eventsOf(session, 'plan/mode').map((e) => e.data)).toEqual([{ active: true, cause: 'model' }])
    const types = session.events.map((e) => e.type)
    expect(types.slice(types.indexOf('turn/end'), types.indexOf('turn/end') + 3)).toEqual(['turn/end', 'plan/mode', 'turn/start'])
    expect(eventsOf(session, 'user/message').filter((e) => e.data.source.kind === 'plugin')).toEqual([])
    expect(readPlanLog(session).told).toBe(true)
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it.each<[string, unknown, boolean]>([
    ['a declined entry', { entered: false }, false],
    ['a failed call', { entered: true }, true],
    ['a result without a value', 'none', false],
    ['a result whose value is not an object', 'entered', false],
  ])('%s rebuilds nothing', async (_name, value, isError) => {
    const host = fresh()
    const session = await host.root.require('sessions').create()
    await crashedAfterEntry(session, value, isError)
    expect(host.planMode.get(await host.agent(session))).toEqual({ active: false })
  })

  it('a later /plan off that settled replaces it (latest wins)', async () => {
    const host = fresh()
    const session = await host.root.require('sessions').create()
    await crashedAfterEntry(session)
    await session.append('command/run', { commandId: 'k1', name: 'plan', args: 'off', source: { kind: 'user' } })
    await session.append('command/done', { commandId: 'k1', kind: 'success', text: 'Plan mode entry cancelled.' })
    expect(host.planMode.get(await host.agent(session))).toEqual({ active: false })
  })
})

describe('§9 latest wins: a silent selection after a settled /plan decides alone', () => {
  it('an entry agreed after a settled mid-turn /plan off (logged still on) keeps plan mode on after a restart, untold of any switch', async () => {
    const host = fresh([{ text: 'planning' }])
    const session = await host.root.require('sessions').create()
    await session.append('plan/mode', { active: true, cause: 'user' })
    await session.append('turn/start', { turn: 1 })
    await session.append('step/start', { turn: 1, step: 1 })
    await session.append('request/header', { reason: 'initial', turn: 1, step: 1, model: 'test:model', system: '', tools: [] })
    // /plan off mid-turn: settled (queued), not applied yet
    await session.append('command/run', { commandId: 'k1', name: 'plan', args: 'off', source: { kind: 'user' } })
    await session.append('command/done', { commandId: 'k1', kind: 'success', text: 'Leaving plan mode (applies from the next step).' })
    // then the model asked to plan and the user agreed: the later, silent selection is "on"
    await session.append('tool/result', {
      toolCallId: 'e1',
      toolName: 'enter_plan_mode',
      isError: false,
      content: [{ type: 'text', text: 'entered' }],
      value: { entered: true },
    } as never)
    const agent = await host.agent(session)
    expect(host.planMode.get(agent)).toEqual({ active: true })
    await agent.prompt('go on')
    expect(eventsOf(session, 'plan/mode').map((e) => e.data)).toEqual([{ active: true, cause: 'user' }])
    expect(eventsOf(session, 'user/message').filter((e) => e.data.source.kind === 'plugin')).toEqual([])
  })

  it('an approved exit after a settled /plan (logged off) leaves nothing pending', async () => {
    const host = fresh()
    const session = await host.root.require('sessions').create()
    await session.append('turn/start', { turn: 1 })
    await session.append('command/run', { commandId: 'k1', name: 'plan', args: '', source: { kind: 'user' } })
    await session.append('command/done', {
      commandId: 'k1',
      kind: 'success',
      text: 'Entering plan mode from the next step. Send /plan off to leave.',
    })
    await (session.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', { toolCallId: 'c1', outcome: 'stopped' })
    expect(host.planMode.get(await host.agent(session))).toEqual({ active: false })
  })
})

describe('§9 latest wins, after the silent selection is applied', () => {
  it('a /plan whose process died in its handler, replaced by a later approval that a plan/mode applied, is not brought back by a restart', async () => {
    // The log as a dead process left it, read by a controller loaded afterwards (a restart).
    const host = createHost()
    const session = await host.root.require('sessions').create()
    await session.append('plan/mode', { active: true, cause: 'user' })
    await session.append('turn/start', { turn: 1 })
    await session.append('command/run', { commandId: 'k1', name: 'plan', args: '', source: { kind: 'user' } }) // no command/done: it died there
    await (session.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', { toolCallId: 'c1', outcome: 'approved' })
    await session.append('turn/end', { turn: 1, reason: 'interrupted' })
    await session.append('plan/mode', { active: false, cause: 'review' }) // what the turn end committed (§22.2)
    expect(readPlanLog(session).replaced).toBe('k1')
    host.root.plugin(planCorePlugin)
    // A controller that reads this log first agrees with the one that wrote it: nothing waits.
    expect(host.root.require('planMode').get(await host.agent(session))).toEqual({ active: false })
    // A later /plan counts again.
    await session.append('command/run', { commandId: 'k2', name: 'plan', args: '', source: { kind: 'user' } })
    expect(readPlanLog(session).replaced).toBeUndefined()
  })
})
