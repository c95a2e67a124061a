import { Context, MissingServiceError } from '@planmode/context'
import { commandsPlugin, sessionStorePlugin, type HostAgent } from '@planmode/host'
import { PLAN_COMMAND_REPLIES, planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import type { CommandResult, ImageAttachment, UserMessage } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf, userTexts } from '@planmode/testkit'

const image: ImageAttachment = { id: 'img-1', mediaType: 'image/png', data: 'iVBORw0KGgo=', name: 'sketch.png' }

function setup() {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  host.root.plugin(planCommandsPlugin)
  host.root.require('tools').register({
    name: 'look',
    description: 'Reads nothing.',
    parameters: { type: 'object', properties: {} },
    execute: () => 'nothing',
  })
  const commands = host.root.require('commands')
  const planMode = host.root.require('planMode')
  const run = (agent: HostAgent, line: string, attachments: ImageAttachment[] = []) =>
    commands.execute({ agent, line, attachments }) as Promise<CommandResult>
  return { ...host, commands, planMode, run }
}

/** Runs `during` inside the first step of a turn (a turn is open), then lets the turn finish. */
async function midTurn<T>(host: ReturnType<typeof setup>, agent: HostAgent, during: () => Promise<T>): Promise<T> {
  let result!: T
  host.model.push(async () => {
    result = await during()
    return { text: 'ok' }
  })
  host.model.push({ text: 'ok' }, { text: 'ok' })
  await agent.prompt('go')
  return result
}

const steered = (agent: HostAgent) =>
  eventsOf(agent.session, 'user/message')
    .map((event) => event.data as UserMessage)
    .filter((message) => message.source.kind === 'user' && !(message.content[0]?.type === 'text' && message.content[0].text === 'go'))

describe('§5 registration', () => {
  it('declares plan with its description and input', () => {
    const { commands } = setup()
    const plan = commands.list().find((command) => command.name === 'plan')!
    expect(plan.description).toBe('Enter or leave plan mode')
    expect(plan.input).toEqual({ hint: '[off|message]', images: true })
  })

  it('appears with the commands service and goes when either side is disposed', () => {
    const root = new Context()
    root.plugin(sessionStorePlugin, {})
    root.plugin(planCorePlugin)
    const layer = root.plugin(planCommandsPlugin)
    const commands = root.plugin(commandsPlugin)
    expect(
      root
        .require('commands')
        .list()
        .map((command) => command.name),
    ).toEqual(['plan'])
    layer.dispose()
    expect(root.require('commands').list()).toEqual([])
    root.plugin(planCommandsPlugin)
    expect(
      root
        .require('commands')
        .list()
        .map((command) => command.name),
    ).toEqual(['plan'])
    commands.dispose()
    root.plugin(commandsPlugin)
    expect(
      root
        .require('commands')
        .list()
        .map((command) => command.name),
    ).toEqual(['plan'])
  })

  it('requires planMode, loudly', () => {
    expect(() => new Context().plugin(planCommandsPlugin)).toThrow(MissingServiceError)
  })
})

describe('§5 /plan off', () => {
  it('with images: an error, no mode change, nothing steered', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(await host.run(agent, '/plan off', [image])).toEqual({ kind: 'error', text: 'Image attachments cannot accompany /plan off.' })
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(steered(agent)).toEqual([])
    expect(eventsOf(agent.session, 'command/done').at(-1)!.data.kind).toBe('error')
  })

  it('committed → Plan mode off.', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(await host.run(agent, '/plan   off  ')).toEqual({ kind: 'success', text: 'Plan mode off.' })
    expect(host.planMode.get(agent)).toEqual({ active: false })
  })

  it('queued → Leaving plan mode (applies from the next step).', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const result = await midTurn(host, agent, () => host.run(agent, '/plan off'))
    expect(result).toEqual({ kind: 'success', text: 'Leaving plan mode (applies from the next step).' })
  })

  it('noop while an exit already waits → the queued wording again', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const results = await midTurn(host, agent, async () => [await host.run(agent, '/plan off'), await host.run(agent, '/plan off')])
    expect(results.map((result) => result.text)).toEqual([PLAN_COMMAND_REPLIES.leaving, 'Leaving plan mode (applies from the next step).'])
  })

  it('cancelled → Plan mode entry cancelled.', async () => {
    const host = setup()
    const agent = await host.agent()
    const results = await midTurn(host, agent, async () => [await host.run(agent, '/plan'), await host.run(agent, '/plan off')])
    expect(results.map((result) => result.text)).toEqual([PLAN_COMMAND_REPLIES.entering, 'Plan mode entry cancelled.'])
  })

  it('noop while inactive → Plan mode is already inactive.', async () => {
    const host = setup()
    const agent = await host.agent()
    expect(await host.run(agent, '/plan off')).toEqual({ kind: 'success', text: 'Plan mode is already inactive.' })
    expect(eventsOf(agent.session, 'plan/mode')).toEqual([])
  })

  it.each(['OFF', 'Off', 'oFf'])(
    '§22.1 /plan %s leaves as /plan off does: same replies, nothing steered, idle and mid-turn',
    async (word) => {
      const host = setup()
      const agent = await host.agent()
      await host.planMode.set(agent, true)
      expect(await host.run(agent, `/plan ${word}`)).toEqual({ kind: 'success', text: 'Plan mode off.' })
      expect(host.planMode.get(agent)).toEqual({ active: false })
      expect(await host.run(agent, `/plan  ${word} `)).toEqual({ kind: 'success', text: 'Plan mode is already inactive.' })
      expect(await host.run(agent, `/plan ${word}`, [image])).toEqual({
        kind: 'error',
        text: 'Image attachments cannot accompany /plan off.',
      })
      await host.planMode.set(agent, true)
      const results = await midTurn(host, agent, async () => [
        await host.run(agent, `/plan ${word}`),
        await host.run(agent, `/plan ${word}`),
      ])
      expect(results.map((result) => result.text)).toEqual([PLAN_COMMAND_REPLIES.leaving, PLAN_COMMAND_REPLIES.leaving])
      expect(steered(agent)).toEqual([])
      // a /plan typed after the turn's last step waits for the next one (§3.2)
      expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    },
  )

  it('§22.1 only the word off leaves: /plan of and /plan offline are messages', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push({ text: 'ok' }, { text: 'ok' })
    expect(await host.run(agent, '/plan of')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    await agent.idle()
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(await host.run(agent, '/plan OFFline')).toEqual({ kind: 'success', text: 'Plan mode is already on.' })
    await agent.idle()
    expect(userTexts(host.model.requests[0]!)).toEqual(['of'])
    expect(steered(agent).map((message) => message.content)).toEqual([[{ type: 'text', text: 'of' }], [{ type: 'text', text: 'OFFline' }]])
  })
})

describe('§5 /plan [message]', () => {
  it('committed → Plan mode on. Send /plan off to leave.; nothing steered without a message', async () => {
    const host = setup()
    const agent = await host.agent()
    expect(await host.run(agent, '/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    expect(await host.run(agent, '/plan   ')).toEqual({ kind: 'success', text: 'Plan mode is already on.' })
    expect(agent.status).toBe('idle')
    expect(steered(agent)).toEqual([])
  })

  it('queued, and noop with an entry still pending → Entering plan mode from the next step.', async () => {
    const host = setup()
    const agent = await host.agent()
    const results = await midTurn(host, agent, async () => [await host.run(agent, '/plan'), await host.run(agent, '/plan')])
    expect(results).toEqual([
      { kind: 'success', text: 'Entering plan mode from the next step. Send /plan off to leave.' },
      { kind: 'success', text: 'Entering plan mode from the next step. Send /plan off to leave.' },
    ])
  })

  it('cancelled (a waiting exit withdrawn) → Plan mode exit cancelled.', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const results = await midTurn(host, agent, async () => [await host.run(agent, '/plan off'), await host.run(agent, '/plan')])
    expect(results[1]).toEqual({ kind: 'success', text: 'Plan mode exit cancelled.' })
    // the reversed selection is kept (equal to the logged state) until the next accepted pre-step drops it
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: true })
    expect(await host.run(agent, '/plan')).toEqual({ kind: 'success', text: 'Plan mode is already on.' })
    host.model.push({ text: 'ok' })
    await agent.prompt('again')
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
  })

  it('noop when already active → Plan mode is already on.', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(await host.run(agent, '/plan')).toEqual({ kind: 'success', text: 'Plan mode is already on.' })
  })

  it('steers one user message: image blocks first, then the trimmed text', async () => {
    const host = setup()
    const agent = await host.agent()
    await midTurn(host, agent, () => host.run(agent, '/plan   draft the migration  ', [image, { ...image, id: 'img-2' }]))
    expect(steered(agent)).toEqual([
      {
        content: [
          { type: 'image', attachment: image },
          { type: 'image', attachment: { ...image, id: 'img-2' } },
          { type: 'text', text: 'draft the migration' },
        ],
        source: { kind: 'user' },
      },
    ])
  })

  it('/plan with images only steers an image-only message', async () => {
    const host = setup()
    const agent = await host.agent()
    await midTurn(host, agent, () => host.run(agent, '/plan', [image]))
    expect(steered(agent)).toEqual([{ content: [{ type: 'image', attachment: image }], source: { kind: 'user' } }])
  })

  it('an idle /plan message commits first, then the steered message starts a turn under plan mode', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push({ text: 'planning' })
    await host.run(agent, '/plan sketch it')
    await agent.idle()
    const log = agent.session.events.map((event) => event.type)
    expect(log.indexOf('plan/mode')).toBeLessThan(log.indexOf('turn/start'))
    expect(userTexts(host.model.requests[0]!)).toEqual(['sketch it'])
  })
})

describe('§5 transcript', () => {
  it('/plan, /plan off and their replies never reach the model; only the steered message does', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.run(agent, '/plan look around')
      return { toolCalls: [{ toolName: 'look', input: {} }] }
    })
    host.model.push(async () => {
      await host.run(agent, '/plan off')
      return { toolCalls: [{ toolName: 'look', input: {} }] }
    })
    host.model.push({ text: 'done' })
    await agent.prompt('go')
    const everything = JSON.stringify(host.model.requests.map((request) => request.prompt))
    expect(everything).not.toContain('/plan')
    for (const reply of Object.values(PLAN_COMMAND_REPLIES)) expect(everything).not.toContain(reply)
    expect(userTexts(host.model.requests[1]!)).toEqual(['go', 'look around', 'The user switched this session to plan mode.'])
    expect(eventsOf(agent.session, 'command/run').map((event) => event.data.args)).toEqual([' look around', ' off'])
  })
})
