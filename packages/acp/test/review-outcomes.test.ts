import type { SessionEvent } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { carryingScript } from './support/arc-script.js'
import { createAcpHost, type AcpHost } from './support/reference-host.js'
import { openReview } from './support/review-setup.js'
import { connectTestClient, updatesOf, type TestClient } from './support/test-client.js'

let host: AcpHost | undefined
afterEach(async () => {
  await host?.close()
  host = undefined
})

/** The events of one type in a session's log. */
const logged = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): SessionEvent<T>[] =>
  events.filter((event) => event.type === type) as unknown as SessionEvent<T>[]

/** The text of the completed update of `toolCallId`. */
function completedText(client: TestClient, sessionId: string, toolCallId: string): string | undefined {
  const update = updatesOf(client.updates(sessionId), 'tool_call_update').find(
    (found) => found.toolCallId === toolCallId && (found.status === 'completed' || found.status === 'failed'),
  )
  const block = update?.content?.[0]
  return block?.type === 'content' && block.content.type === 'text' ? `${update!.status}: ${block.content.text}` : undefined
}

describe('the review, outcome by outcome', () => {
  it('a client without elicitation: Keep planning is asked no feedback, and the model revises', async () => {
    const open = await openReview({ elicitation: false, after: [{ text: 'Revising the plan.' }] })
    host = open.host
    open.asked.respond({ outcome: { outcome: 'selected', optionId: 'keep' } })
    expect(await open.turn).toEqual({ stopReason: 'end_turn' })
    expect(open.client.wire.messages.some((entry) => entry.message.method === 'elicitation/create')).toBe(false)
    const events = host.session(open.sessionId).events
    expect(logged(events, 'plan/review').map((event) => event.data)).toEqual([{ toolCallId: 'call-plan-1', outcome: 'keep-planning' }])
    expect(logged(events, 'tool/result')[0]!.data.content[0]!.text).toBe(
      'Error: The user chose to keep planning; revise the plan and present it again.',
    )
    expect(completedText(open.client, open.sessionId, 'call-plan-1')).toBe('completed: Keep planning.')
    expect(open.client.wire.problems).toEqual([])
  })

  it('a declined feedback form is Keep planning without feedback', async () => {
    const open = await openReview({ after: [{ text: 'Revising the plan.' }] })
    host = open.host
    open.asked.respond({ outcome: { outcome: 'selected', optionId: 'keep' } })
    ;(await open.client.nextElicitation()).respond({ action: 'decline' })
    await open.turn
    expect(logged(host.session(open.sessionId).events, 'plan/review').map((event) => event.data.feedback)).toEqual([undefined])
  })

  it('session/cancel during the review: the client answers cancelled, the review is settled cancelled, the turn ends cancelled, plan mode stays on', async () => {
    const open = await openReview()
    host = open.host
    await open.client.agent.notify('session/cancel', { sessionId: open.sessionId })
    // A client answers every pending permission request of a cancelled turn with `cancelled` (ACP prompt-turn).
    open.asked.respond({ outcome: { outcome: 'cancelled' } })
    expect(await open.turn).toEqual({ stopReason: 'cancelled' })
    const events = host.session(open.sessionId).events
    expect(logged(events, 'question/settled').map((event) => event.data.outcome)).toEqual(['cancelled'])
    expect(logged(events, 'plan/review')).toEqual([])
    expect(logged(events, 'turn/end').at(-1)!.data.reason).toBe('cancelled')
    expect(host.ctx.require('planMode').get(host.ctx.require('agents').list()[0]!).active).toBe(true)
    expect(open.client.wire.problems).toEqual([])
  })

  it('an outcome the agent did not offer is a dismissal, never an approval, and the logger warns', async () => {
    const open = await openReview({ after: [{ text: 'Waiting for your message.' }] })
    host = open.host
    open.asked.respond({ outcome: { outcome: 'selected', optionId: 'approve-everything' } })
    expect(await open.turn).toEqual({ stopReason: 'end_turn' })
    const events = host.session(open.sessionId).events
    expect(logged(events, 'plan/review').map((event) => event.data.outcome)).toEqual(['dismissed'])
    expect(logged(events, 'plan/mode').map((event) => event.data.active)).toEqual([true])
    expect(
      host.logger.lines.some(
        (line) => line.level === 'warn' && line.message.includes('"approve-everything"') && line.message.includes('never approved'),
      ),
    ).toBe(true)
    expect(completedText(open.client, open.sessionId, 'call-plan-1')).toBe(
      'completed: Review dismissed: the agent stays in plan mode and waits for your message.',
    )
    expect(updatesOf(open.client.updates(open.sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual(['plan'])
  })

  it('a cancelled outcome without session/cancel is a dismissal', async () => {
    const open = await openReview({ after: [{ text: 'Waiting for your message.' }] })
    host = open.host
    open.asked.respond({ outcome: { outcome: 'cancelled' } })
    expect(await open.turn).toEqual({ stopReason: 'end_turn' })
    expect(logged(host.session(open.sessionId).events, 'plan/review').map((event) => event.data.outcome)).toEqual(['dismissed'])
  })

  it('Stop planning leaves plan mode without approving, and the mode is published', async () => {
    const open = await openReview({ after: [{ text: 'Stopped; waiting for you.' }] })
    host = open.host
    open.asked.respond({ outcome: { outcome: 'selected', optionId: 'stop' } })
    expect(await open.turn).toEqual({ stopReason: 'end_turn' })
    expect(logged(host.session(open.sessionId).events, 'plan/review').map((event) => event.data.outcome)).toEqual(['stopped'])
    expect(completedText(open.client, open.sessionId, 'call-plan-1')).toBe('completed: Planning stopped without approval.')
    expect(updatesOf(open.client.updates(open.sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual([
      'plan',
      'default',
    ])
  })

  it('approval into a fresh session: the turn ends with a message naming it, session/list lists it, session/load opens it with its plan', async () => {
    const open = await openReview({ planTool: { handoff: { fresh: true, models: [] } }, after: carryingScript('fresh-up', 2) })
    host = open.host
    expect(open.asked.params.options.map((option) => option.optionId)).toEqual(['approve', 'approve-fresh', 'keep', 'stop'])
    open.asked.respond({ outcome: { outcome: 'selected', optionId: 'approve-fresh' } })
    expect(await open.turn).toEqual({ stopReason: 'end_turn' })
    const origin = host.session(open.sessionId)
    const fresh = logged(origin.events, 'acp/fresh-session')[0]!.data.session
    const told = updatesOf(open.client.updates(open.sessionId), 'agent_message_chunk').at(-1)!
    expect(told.content).toEqual({
      type: 'text',
      text: `The approved plan is carried out in a fresh session: ${fresh}. Load that session to follow it; this one stops here.`,
    })
    expect(completedText(open.client, open.sessionId, 'call-plan-1')).toBe('completed: Approved into a fresh session.')
    // Every plan/mode the origin's log holds (with SPEC §22.2, the off one after the turn) was published, and nothing else.
    const loggedModes = logged(origin.events, 'plan/mode').map((event) => (event.data.active ? 'plan' : 'default'))
    expect(updatesOf(open.client.updates(open.sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual(loggedModes)
    for (const agent of host.ctx.require('agents').list()) await agent.idle()
    const listed = await open.client.agent.request('session/list', {})
    expect(listed.sessions.map((session) => session.sessionId).sort()).toEqual([fresh, open.sessionId].sort())
    expect(listed.sessions.find((session) => session.sessionId === fresh)).toMatchObject({ title: 'Add a greeting', cwd: '/work/project' })
    await open.client.agent.request('session/load', { sessionId: fresh, cwd: '/work/project', mcpServers: [] })
    const plans = updatesOf(open.client.updates(fresh), 'plan').map((update) => update.entries.map((entry) => entry.status).join(','))
    expect(plans.at(-1)).toBe('completed,completed')
    expect(updatesOf(open.client.updates(fresh), 'agent_message_chunk').at(-1)!.content).toEqual({
      type: 'text',
      text: 'Done: the CLI greets, and greet() is tested.',
    })
    expect(open.client.wire.problems).toEqual([])
  })

  it('enter_plan_mode is a permission request with Enter plan mode and Not now; the entry is published as the mode', async () => {
    host = createAcpHost({
      script: [
        { toolCalls: [{ toolCallId: 'call-enter', toolName: 'enter_plan_mode', input: { reason: 'The change touches three modules.' } }] },
        { text: 'Exploring first.' },
      ],
    })
    const { client } = connectTestClient(host.ctx.require('acp'))
    await client.initialize()
    const { sessionId } = await client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })
    const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Refactor the storage layer.' }] })
    const asked = await client.nextPermission()
    expect(asked.params.toolCall).toMatchObject({
      toolCallId: 'call-enter',
      kind: 'switch_mode',
      content: [{ content: { text: 'The change touches three modules.' } }],
    })
    expect(asked.params.options).toEqual([
      { optionId: 'enter', name: 'Enter plan mode', kind: 'allow_once' },
      { optionId: 'option-2', name: 'Not now', kind: 'reject_once' },
    ])
    asked.respond({ outcome: { outcome: 'selected', optionId: 'enter' } })
    expect(await turn).toEqual({ stopReason: 'end_turn' })
    expect(updatesOf(client.updates(sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual(['plan'])
    expect(logged(host.session(sessionId).events, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(
      updatesOf(client.updates(sessionId), 'tool_call_update').find(
        (update) => update.toolCallId === 'call-enter' && update.status !== 'in_progress',
      ),
    ).toMatchObject({ status: 'completed' })
    expect(client.wire.problems).toEqual([])
  })
})
