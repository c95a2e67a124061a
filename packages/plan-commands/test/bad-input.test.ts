import type { HostAgent } from '@planmode/host'
import { PLAN_COMMAND_REPLIES, planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import type { CommandResult, ImageAttachment, UserMessage } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

const image: ImageAttachment = { id: 'img-1', mediaType: 'image/png', data: 'iVBORw0KGgo=', name: 'sketch.png' }

function setup() {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  host.root.plugin(planCommandsPlugin)
  const commands = host.root.require('commands')
  const planMode = host.root.require('planMode')
  const run = (agent: HostAgent, line: string, attachments: ImageAttachment[] = []) =>
    commands.execute({ agent, line, attachments }) as Promise<CommandResult>
  return { ...host, planMode, run }
}

/** The user messages /plan steered (the idle ones start a turn: wait for it). */
async function steered(host: ReturnType<typeof setup>, agent: HostAgent): Promise<UserMessage[]> {
  await agent.idle()
  return eventsOf(agent.session, 'user/message')
    .map((event) => event.data as UserMessage)
    .filter((message) => message.source.kind === 'user')
}

describe('/plan command lines (bad input matrix)', () => {
  it('/plan OFF leaves (SPEC §22.1): nothing steered, the off replies', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(await host.run(agent, '/plan OFF')).toEqual({ kind: 'success', text: PLAN_COMMAND_REPLIES.off })
    expect(await host.run(agent, '/plan Off')).toEqual({ kind: 'success', text: PLAN_COMMAND_REPLIES.alreadyInactive })
    expect(await steered(host, agent)).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: false })
  })

  it('/plan  off  (extra spaces) is off: the message is trimmed', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(await host.run(agent, '/plan  off ')).toEqual({ kind: 'success', text: PLAN_COMMAND_REPLIES.off })
    expect(await host.run(agent, '/plan\toff\n')).toEqual({ kind: 'success', text: PLAN_COMMAND_REPLIES.alreadyInactive })
    expect(await steered(host, agent)).toEqual([])
  })

  it('/plan off with images: an error, nothing selected, nothing steered, only the command records written', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const before = agent.session.events.length
    expect(await host.run(agent, '/plan off', [image])).toEqual({ kind: 'error', text: 'Image attachments cannot accompany /plan off.' })
    expect(agent.session.events.slice(before).map((e) => e.type)).toEqual(['command/run', 'command/done'])
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(await steered(host, agent)).toEqual([])
  })

  it('/plan with only whitespace enters plan mode and steers nothing', async () => {
    const host = setup()
    const agent = await host.agent()
    for (const line of ['/plan ', '/plan \t \n ', '/plan\u3000']) {
      await host.run(agent, line)
    }
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
    expect(await steered(host, agent)).toEqual([])
  })

  it('a very long message (1 MB) is steered whole, after the mode is committed', async () => {
    const host = setup()
    host.model.push({ text: 'ok' })
    const agent = await host.agent()
    const long = 'plan the migration of every table. '.repeat(30_000)
    expect(await host.run(agent, `/plan ${long}`)).toEqual({ kind: 'success', text: PLAN_COMMAND_REPLIES.on })
    const messages = await steered(host, agent)
    expect(messages).toHaveLength(1)
    expect(messages[0]!.content).toEqual([{ type: 'text', text: long.trim() }])
    const types = agent.session.events.map((e) => e.type)
    expect(types.indexOf('plan/mode')).toBeLessThan(types.lastIndexOf('user/message'))
  })

  it('/planoff and /Plan are not /plan (unknown commands write nothing)', async () => {
    const host = setup()
    const agent = await host.agent()
    expect(await host.run(agent, '/planoff')).toBeUndefined()
    expect(await host.run(agent, '/Plan off')).toBeUndefined()
    expect(agent.session.events).toEqual([])
  })
})
