import { planModeGuidance } from '@planmode/plan-core'
import { UPDATE_PLAN, UPDATE_PLAN_MESSAGES } from '@planmode/plan-progress'
import type { Session, UserMessage } from '@planmode/seams'
import { LEAVE_NOTICE, userTexts } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'
import { approve, log, messageText, PLAN, progressMessages, setup } from './support.js'

const TRACK =
  'Track the approved plan with update_plan: mark a step in_progress when you start it and done when it is finished.\n' +
  'Plan progress: 0/3.\n[ ] 1. Add a cache.\n[ ] 2. Wire it in.\n[ ] 3. Test it.'
const REMIND_HEAD = 'The approved plan still has open steps; update them with update_plan as you work.'

const read = { toolCalls: [{ toolName: 'read', input: {} }] }
const updateCall = (updates: unknown[]) => ({ toolCalls: [{ toolName: UPDATE_PLAN, input: { updates } }] })

function host(script: Parameters<typeof setup>[0] = []) {
  const h = setup(script)
  h.root.require('tools').register({
    name: 'read',
    description: 'Reads.',
    parameters: { type: 'object' },
    annotations: { readOnlyHint: true },
    execute: () => 'text',
  })
  return h
}

/** The user messages logged before the `step/start` of `turn`.`step`, since the previous step or the turn's start. */
function stepMessages(session: Session, turn: number, step: number): string[] {
  const events = session.events
  const start = events.findIndex((event) => event.type === 'step/start' && event.data.turn === turn && event.data.step === step)
  let from = start
  while (from > 0 && events[from - 1]!.type !== 'step/end' && events[from - 1]!.type !== 'turn/start') from--
  return events
    .slice(from, start)
    .filter((event) => event.type === 'user/message')
    .map((event) => messageText(event.data as UserMessage))
}

describe('§17 what the model reads: the message that starts tracking', () => {
  it('at the first accepted pre-step in the default mode after the approval: one user message, exact text and source', async () => {
    const h = host([{ text: 'on it' }])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    const logged = agent.session.events.filter((event) => event.type === 'user/message').map((event) => event.data as UserMessage)
    expect(logged.map(messageText)).toEqual(['go', TRACK])
    expect(logged[1]).toEqual({
      content: [{ type: 'text', text: TRACK }],
      source: { kind: 'plugin', plugin: 'plan-mode', form: 'progress' },
    })
    expect(userTexts(h.model.requests[0]!)).toEqual(['go', TRACK])
    // logged before the step's request/header and step/start
    const types = agent.session.events.map((event) => event.type as string)
    expect(types.indexOf('request/header')).toBeGreaterThan(types.lastIndexOf('user/message'))
  })

  it('is sent once: not at later steps, nor in later turns, once it is logged after the approval', async () => {
    const h = host([read, { text: 'a' }, { text: 'b' }])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    await agent.prompt('more') // the reminder may come here; the tracking message does not
    expect(progressMessages(agent.session).filter((text) => text.startsWith(UPDATE_PLAN_MESSAGES.track))).toHaveLength(1)
  })

  it('not while plan mode is on (next active); it comes at the first step in the default mode', async () => {
    const h = host([{ text: 'planning' }, { text: 'doing' }])
    const agent = await h.agent()
    await approve(agent.session)
    await log(agent.session, 'plan/mode', { active: true, cause: 'inherit' }) // on, but not an entry that ends tracking
    await agent.prompt('one')
    expect(progressMessages(agent.session)).toEqual([])
    await log(agent.session, 'plan/mode', { active: false, cause: 'review' })
    await agent.prompt('two')
    expect(progressMessages(agent.session)).toEqual([TRACK])
  })

  it('a plan without steps is never mentioned; nor a plan whose tracking ended', async () => {
    const h = host([{ text: 'a' }, { text: 'b' }])
    const agent = await h.agent()
    await approve(agent.session, '# Prose\n\nJust do it.')
    await agent.prompt('go')
    await approve(agent.session, PLAN, 'exit-2')
    await log(agent.session, 'plan/mode', { active: true, cause: 'user' })
    await log(agent.session, 'plan/mode', { active: false, cause: 'user' })
    await agent.prompt('again')
    expect(progressMessages(agent.session)).toEqual([])
  })

  it('a new approval is a new plan: its own message is sent', async () => {
    const h = host([{ text: 'a' }, { text: 'b' }])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    await log(agent.session, 'plan/mode', { active: true, cause: 'model' })
    await approve(agent.session, '# Next\n\n1. One.\n', 'exit-2')
    await agent.prompt('again')
    expect(progressMessages(agent.session)).toEqual([TRACK, `${UPDATE_PLAN_MESSAGES.track}\nPlan progress: 0/1.\n[ ] 1. One.`])
  })

  it('comes after the notice and the guidance message of the same step (plan-core’s order)', async () => {
    const h = host([{ text: 'hello' }, { text: 'doing' }])
    const agent = await h.agent()
    h.planMode.setGuidance('GUIDE')
    await h.planMode.set(agent, true)
    await agent.prompt('plan it') // guidance, and a header telling the model plan mode is on
    // the review was recorded, then the user left plan mode by hand: a leaving notice is due, and the plan is tracked
    await log(agent.session, 'assistant/message', {
      turn: 1,
      step: 1,
      content: [{ type: 'tool-call', toolCallId: 'e', toolName: 'exit_plan_mode', input: { plan: PLAN } }],
    })
    await log(agent.session, 'plan/review', { toolCallId: 'e', outcome: 'approved' })
    await h.planMode.set(agent, false)
    await agent.prompt('now')
    expect(stepMessages(agent.session, 2, 1)).toEqual(['now', LEAVE_NOTICE, TRACK])
    expect(planModeGuidance('GUIDE').source).toMatchObject({ form: 'guidance' })
  })

  it('a rejected pre-step adds nothing; the next accepted one does', async () => {
    const h = host([{ text: 'doing' }])
    const agent = await h.agent()
    await approve(agent.session)
    const off = h.root.on('agent/pre-step', async () => ({ kind: 'reject', reason: 'not now' }))
    await agent.prompt('first')
    off()
    expect(progressMessages(agent.session)).toEqual([])
    await agent.prompt('second')
    expect(progressMessages(agent.session)).toEqual([TRACK])
  })
})

describe('§17 what the model reads: the reminder at the start of a turn', () => {
  it('at the turn’s first accepted pre-step when the last ended turn logged no plan/progress and steps are open', async () => {
    const h = host([{ text: 'a' }, read, { text: 'b' }])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go') // turn 1: the tracking message; no update
    await agent.prompt('continue') // turn 2: two steps
    const remind = `${REMIND_HEAD}\nPlan progress: 0/3.\n[ ] 1. Add a cache.\n[ ] 2. Wire it in.\n[ ] 3. Test it.`
    expect(stepMessages(agent.session, 2, 1)).toEqual(['continue', remind])
    expect(stepMessages(agent.session, 2, 2)).toEqual([]) // not the turn's first pre-step
    expect(userTexts(h.model.requests[1]!).at(-1)).toBe(remind)
  })

  it('not when the last ended turn logged plan/progress; again when a later turn logged none', async () => {
    const h = host([updateCall([{ step: 1, status: 'in_progress' }]), { text: 'started' }, { text: 'idle chat' }, { text: 'more chat' }])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go') // turn 1: tracking message, then an update
    await agent.prompt('how is it going?') // turn 2: turn 1 logged progress: no reminder
    expect(stepMessages(agent.session, 2, 1)).toEqual(['how is it going?'])
    await agent.prompt('and now?') // turn 3: turn 2 logged none
    expect(stepMessages(agent.session, 3, 1)).toEqual([
      'and now?',
      `${REMIND_HEAD}\nPlan progress: 0/3.\n[>] 1. Add a cache.\n[ ] 2. Wire it in.\n[ ] 3. Test it.`,
    ])
  })

  it('not once every step is done or skipped', async () => {
    const h = host([
      updateCall([
        { step: 1, status: 'done' },
        { step: 2, status: 'skipped', note: 'n/a' },
        { step: 3, status: 'done' },
      ]),
      { text: 'done' },
      { text: 'a' },
      { text: 'b' },
    ])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    await agent.prompt('next')
    await agent.prompt('and next')
    expect(progressMessages(agent.session)).toEqual([TRACK])
  })

  it('not in a turn whose first accepted pre-step is in plan mode, even once a later step of it is in the default mode', async () => {
    const h = host([
      { text: 'a' },
      async () => {
        await h.planMode.set(agent, false) // mid-turn: applies at the next pre-step
        return read
      },
      { text: 'b' },
    ])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    await log(agent.session, 'plan/mode', { active: true, cause: 'inherit' })
    await agent.prompt('continue')
    expect(progressMessages(agent.session)).toEqual([TRACK])
  })

  it('the turn’s first pre-step is read from the log too: a plan-progress reloaded mid-turn does not remind at the next step', async () => {
    const h = host([
      { text: 'a' },
      async () => {
        h.progress.dispose()
        h.root.plugin((await import('@planmode/plan-progress')).planProgressPlugin)
        return read
      },
      { text: 'b' },
    ])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    await agent.prompt('continue')
    expect(progressMessages(agent.session).filter((text) => text.startsWith(REMIND_HEAD))).toHaveLength(1)
    expect(stepMessages(agent.session, 2, 2)).toEqual([])
  })
})
