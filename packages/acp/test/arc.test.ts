import { afterEach, describe, expect, it } from 'vitest'
import { carryingScript, FEEDBACK, GOAL, PLAN_V1, PLAN_V2, planningScript } from './support/arc-script.js'
import { createAcpHost, type AcpHost } from './support/reference-host.js'
import { connectTestClient, updatesOf } from './support/test-client.js'

let host: AcpHost | undefined
afterEach(async () => {
  await host?.close()
  host = undefined
})

const text = (update: { content?: unknown }): string => (update.content as { text?: string } | undefined)?.text ?? ''

describe('the whole arc, from the SDK client in process', () => {
  it('new session, mode by set_mode and config option, /plan, exploration, Keep planning with feedback, a revision, approval with a model, the plan moving, the mode published', async () => {
    host = createAcpHost({
      script: planningScript(),
      models: { careful: carryingScript() },
      planTool: { handoff: { fresh: true, models: ['careful'] } },
    })
    const { client } = connectTestClient(host.ctx.require('acp'))
    const init = await client.initialize()
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, sessionCapabilities: { list: {}, resume: {} } },
    })

    const created = await client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })
    const sessionId = created.sessionId
    expect(created.modes).toMatchObject({ currentModeId: 'default', availableModes: [{ id: 'default' }, { id: 'plan' }] })
    expect(created.configOptions).toMatchObject([
      { id: 'mode', category: 'mode', type: 'select', currentValue: 'default', options: [{ value: 'default' }, { value: 'plan' }] },
    ])
    const commands = await client.until(sessionId, (update) => update.sessionUpdate === 'available_commands_update')
    expect(commands).toMatchObject({
      availableCommands: [{ name: 'plan', description: 'Enter or leave plan mode', input: { hint: '[off|message]' } }],
    })

    // The mode by session/set_mode, then back by the config option: each logged plan/mode is published both ways.
    await client.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
    const switched = await client.agent.request('session/set_config_option', { sessionId, configId: 'mode', value: 'default' })
    expect(switched.configOptions).toMatchObject([{ id: 'mode', currentValue: 'default' }])
    const modes = () =>
      client
        .updates(sessionId)
        .filter((update) => update.sessionUpdate === 'current_mode_update')
        .map((update) => update.currentModeId)
    const configs = () =>
      client
        .updates(sessionId)
        .filter((update) => update.sessionUpdate === 'config_option_update')
        .map((update) => update.configOptions[0]?.currentValue)
    expect(modes()).toEqual(['plan', 'default'])
    expect(configs()).toEqual(['plan', 'default'])

    // /plan <goal>: the command runs, plan mode is on, and the steered goal starts the turn.
    const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `/plan ${GOAL}` }] })
    const first = await client.nextPermission()
    expect(first.params.toolCall).toMatchObject({
      toolCallId: 'call-plan-1',
      kind: 'switch_mode',
      status: 'pending',
      content: [{ type: 'content', content: { type: 'text', text: PLAN_V1 } }],
    })
    expect(first.params.options).toEqual([
      { optionId: 'approve', name: 'Approve', kind: 'allow_once' },
      { optionId: 'approve-model:careful', name: 'Approve with careful', kind: 'allow_once' },
      { optionId: 'approve-fresh', name: 'Approve in a fresh session', kind: 'allow_once' },
      { optionId: 'keep', name: 'Keep planning', kind: 'reject_once' },
      { optionId: 'stop', name: 'Stop planning', kind: 'reject_always' },
    ])
    // Before the request: what was typed, the command's reply, the exploration with its kind, and the plan under review.
    const before = client.updates(sessionId)
    expect(before.filter((update) => update.sessionUpdate === 'user_message_chunk').map(text)).toEqual([`/plan ${GOAL}`, GOAL])
    expect(before.filter((update) => update.sessionUpdate === 'agent_message_chunk').map(text)).toEqual([
      'Plan mode on. Send /plan off to leave.',
      'Let me look at the CLI first.',
    ])
    expect(before.find((update) => update.sessionUpdate === 'tool_call' && update.toolCallId === 'call-read')).toMatchObject({
      title: 'Read src/cli.ts',
      kind: 'read',
      status: 'pending',
    })
    expect(
      updatesOf(before, 'tool_call_update')
        .filter((update) => update.toolCallId === 'call-read')
        .map((update) => update.status),
    ).toEqual(['in_progress', 'completed'])
    expect(before.find((update) => update.sessionUpdate === 'tool_call' && update.toolCallId === 'call-plan-1')).toMatchObject({
      title: 'Add a greeting',
      kind: 'switch_mode',
    })
    expect(before.filter((update) => update.sessionUpdate === 'plan').at(-1)).toEqual({
      sessionUpdate: 'plan',
      entries: [
        { content: 'Add greet() to src/greet.ts.', priority: 'medium', status: 'pending' },
        { content: 'Print the greeting from the CLI.', priority: 'medium', status: 'pending' },
      ],
    })
    expect(modes()).toEqual(['plan', 'default', 'plan'])

    // Keep planning, with feedback through the form.
    first.respond({ outcome: { outcome: 'selected', optionId: 'keep' } })
    const form = await client.nextElicitation()
    expect(form.params).toMatchObject({
      mode: 'form',
      sessionId,
      toolCallId: 'call-plan-1',
      requestedSchema: { type: 'object', properties: { feedback: { type: 'string' } } },
    })
    form.respond({ action: 'accept', content: { feedback: FEEDBACK } })

    const second = await client.nextPermission()
    expect(second.params.toolCall).toMatchObject({ toolCallId: 'call-plan-2', content: [{ content: { text: PLAN_V2 } }] })
    const kept = client
      .updates(sessionId)
      .find((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call-plan-1' && update.status === 'completed')
    expect(text((kept as { content: { content: unknown }[] }).content[0]!)).toBe(`Keep planning.\nFeedback: ${FEEDBACK}`)
    expect(
      client
        .updates(sessionId)
        .filter((update) => update.sessionUpdate === 'plan')
        .at(-1),
    ).toMatchObject({ entries: [{}, {}, { content: 'Test greet() in test/greet.test.ts.', status: 'pending' }] })
    const session = host.session(sessionId)
    const result = session.events.find((event) => event.type === 'tool/result' && event.data.toolCallId === 'call-plan-1')
    expect(result?.type === 'tool/result' && result.data.content[0]?.text).toBe(
      `Error: The user chose to keep planning; their feedback: ${FEEDBACK}`,
    )

    // Approve with a model: the next steps go to it, the mode is published off, and the plan moves as update_plan runs.
    second.respond({ outcome: { outcome: 'selected', optionId: 'approve-model:careful' } })
    expect(await turn).toEqual({ stopReason: 'end_turn' })
    expect(host.models.careful!.requests).toHaveLength(4)
    expect(modes()).toEqual(['plan', 'default', 'plan', 'default'])
    expect(configs()).toEqual(['plan', 'default', 'plan', 'default'])
    const approved = client
      .updates(sessionId)
      .find((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call-plan-2' && update.status === 'completed')
    expect(text((approved as { content: { content: unknown }[] }).content[0]!)).toBe('Approved with careful.')
    const plans = client
      .updates(sessionId)
      .filter((update) => update.sessionUpdate === 'plan')
      .map((update) => update.entries.map((entry) => entry.status).join(','))
    expect(plans).toEqual([
      'pending,pending',
      'pending,pending,pending',
      'in_progress,pending,pending',
      'completed,in_progress,pending',
      'completed,completed,completed',
    ])
    expect(
      updatesOf(client.updates(sessionId), 'tool_call')
        .filter((update) => update.toolCallId.startsWith('call-up'))
        .map((update) => update.kind),
    ).toEqual(['think', 'think', 'think'])
    expect(
      client
        .updates(sessionId)
        .filter((update) => update.sessionUpdate === 'agent_message_chunk')
        .map(text)
        .at(-1),
    ).toBe('Done: the CLI greets, and greet() is tested.')
    expect(client.wire.problems).toEqual([])
    client.close()
  })
})
