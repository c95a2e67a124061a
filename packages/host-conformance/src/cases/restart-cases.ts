import { PLAN_COMMAND_REPLIES } from '@planmode/plan-commands'
import type { SessionEvent } from '@planmode/seams'
import { KIT_SECTION, type Harness } from '../harness.js'
import { logSummary, messageText, stableJson, systemOf, userTextsOf } from '../log-readers.js'
import type { CaseSpec } from './case-spec.js'
import { ENTER_NOTICE, isNotice } from './notices.js'

export const restartFromLog: CaseSpec = {
  duty: 'restart-from-log',
  title: 'a host opened on a logged session rebuilds a /plan selected after the last step, and applies it at the next step',
  async body(h: Harness) {
    const first = await h.start()
    const agent = await h.agent()
    h.script(async () => {
      await h.commandDuringStep(agent, '/plan')
      return { text: 'done' }
    })
    await h.prompt(agent, 'before the restart')
    h.checkHeaderLogged(agent)
    h.checkCommandRecords(agent)
    const logged = agent.session.events.map((event) => `${event.seq}:${event.type}`)
    const id = agent.session.id
    h.check(
      first.openAgent !== undefined,
      'the host adapter has no openAgent(sessionId): the kit cannot reopen a logged session (skip this duty if your host cannot restart)',
    )
    const second = await h.restart()
    h.check(second.openAgent !== undefined, 'the restarted host adapter has no openAgent(sessionId)')
    const reopened = await h.within(`openAgent(${JSON.stringify(id)})`, () => second.openAgent!(id))
    const reread = reopened.session.events.map((event) => `${event.seq}:${event.type}`)
    h.check(
      reread.join(',') === logged.join(','),
      `the reopened session must hold the log as written: before ${logged.join(',')}, after ${reread.join(',')}`,
    )
    const state = h.context.require('planMode').get(reopened)
    h.check(
      state.active === false && state.pending === true,
      `after the restart, planMode.get() must rebuild the waiting /plan from its logged command/run and command/done ({ active: false, pending: true }); got ${JSON.stringify(state)}`,
    )
    const view = h.context.require('sessionProjections').snapshot(reopened.session).values.plan
    h.check(
      stableJson(view) === stableJson({ active: false, pending: true }),
      `after the restart the plan projection must say pending; got ${JSON.stringify(view)}`,
    )
    h.script({ text: 'planning' })
    await h.prompt(reopened, 'after the restart')
    h.checkTranscript(reopened)
    const events = reopened.session.events
    const turnStart = events.map((event) => event.type).lastIndexOf('turn/start')
    const mode = events.findIndex((event, index) => index > turnStart && event.type === 'plan/mode')
    const header = events.findIndex((event, index) => index > turnStart && event.type === 'request/header')
    h.check(
      mode > turnStart && header > mode,
      `the rebuilt selection must be appended by the first step after the restart, before its request/header. Log: ${logSummary(events)}`,
    )
    // The rebuilt selection applied, the step tells the model with a notice (notices): logged before its step/start.
    const notice = events.findIndex((event, index) => index > mode && isNotice(event))
    const step = events.findIndex((event, index) => index > turnStart && event.type === 'step/start')
    h.checkDuty(
      'notices',
      notice > mode && notice < step && messageText((events[notice] as SessionEvent<'user/message'>).data) === ENTER_NOTICE,
      `the step that applies the rebuilt /plan must log the entering notice as its user message, after the plan/mode and before its step/start. Log: ${logSummary(events)}`,
    )
    const request = h.model.requests[1]!
    h.check(systemOf(request).includes(KIT_SECTION), 'the first request after the restart must carry the plan guidance')
    const texts = userTextsOf(request)
    h.check(
      texts[0] === 'before the restart',
      `the first request after the restart must be built from the reopened log (it starts with "before the restart"); it starts ${JSON.stringify(texts[0])}`,
    )
    h.check(
      texts.at(-1) === ENTER_NOTICE,
      `the first request after the restart must end with the entering notice; it ends ${JSON.stringify(texts.at(-1))}`,
    )
  },
}

/** A turn or step event as `type(turn,step,reason)`, the parts it has. */
function frameOf(event: SessionEvent): string {
  const data = event.data as { turn?: number; step?: number; reason?: string }
  return `${event.type}(${[data.turn, data.step, data.reason].filter((part) => part !== undefined).join(',')})`
}

/**
 * A process that ended mid-turn (with `openStep`, mid-step): the kit appends
 * `turn/start { turn: 2 }` (and `step/start { turn: 2, step: 1 }`) with no
 * end and restarts. The writer that reopens the log closes that turn at
 * once, before `openAgent` resolves: `step/end` for the open step, then
 * `turn/end { turn: 2, reason: 'interrupted' }`.
 */
export function restartOpenTurn(openStep: boolean): CaseSpec {
  return {
    duty: 'restart-from-log',
    title: openStep
      ? 'a turn the log leaves open in a step is closed when the session is opened for writing: step/end of the step, then turn/end interrupted'
      : 'a turn the log leaves open is closed by turn/end interrupted when the session is opened for writing, and the session is idle after the next turn',
    async body(h: Harness) {
      await h.start()
      const agent = await h.agent()
      h.script({ text: 'one' })
      await h.prompt(agent, 'before the restart')
      const dangling = await h.within("session.append('turn/start') (a process that ends mid-turn)", () =>
        agent.session.append('turn/start', { turn: 2 }),
      )
      if (openStep)
        await h.within("session.append('step/start') (a process that ends mid-step)", () =>
          agent.session.append('step/start', { turn: 2, step: 1 }),
        )
      const logged = agent.session.events.map((event) => `${event.seq}:${event.type}`)
      const id = agent.session.id
      const second = await h.restart()
      h.check(
        second.openAgent !== undefined,
        'the host adapter has no openAgent(sessionId): the kit cannot reopen a logged session (skip this duty if your host cannot restart)',
      )
      const reopened = await h.within(`openAgent(${JSON.stringify(id)})`, () => second.openAgent!(id))
      const opened = reopened.session.events
      const reread = opened.slice(0, logged.length).map((event) => `${event.seq}:${event.type}`)
      h.check(
        reread.join(',') === logged.join(','),
        `the reopened session must hold the log as written (then the closing of the turn it left open): before ${logged.join(',')}, after ${reread.join(',')}`,
      )
      const closing = opened.slice(logged.length).map(frameOf)
      const expected = [...(openStep ? ['step/end(2,1)'] : []), 'turn/end(2,interrupted)']
      h.check(
        closing.join(' ') === expected.join(' '),
        `the turn the log left open (turn 2, seq ${dangling.seq}) must be closed when the session is opened for writing: once openAgent() resolved, the log as written must be followed by exactly ${expected.join(' ')}${openStep ? ' (the open step first)' : ''}; it is followed by ${closing.join(' ') || 'nothing'}. Log: ${logSummary(opened)}`,
      )
      h.script({ text: 'two' })
      await h.prompt(reopened, 'after the restart')
      const events = reopened.session.events
      const closes = events.filter((event) => event.type === 'turn/end' && event.data.turn === 2)
      h.check(
        closes.length === 1,
        `the turn the log left open (turn 2, seq ${dangling.seq}) must be closed once: the log has ${closes.length} turn/end { turn: 2 }. Log: ${logSummary(events)}`,
      )
      const next = events.findIndex((event, index) => index >= logged.length && event.type === 'turn/start')
      h.check(
        next > events.indexOf(closes[0]!),
        `the next turn must start after the closing of the one the log left open. Log: ${logSummary(events)}`,
      )
      const start = events[next] as SessionEvent<'turn/start'>
      h.checkDuty(
        'turns-and-steps',
        start.data.turn === 3,
        `the first turn after the one left open must be turn/start { turn: 3 }; it is ${JSON.stringify(start.data)}`,
      )
      const before = events.length
      const plan = await h.command(reopened, '/plan')
      const idle = reopened.session.events.slice(before).map((event) => event.type)
      h.check(
        plan?.text === PLAN_COMMAND_REPLIES.on && idle.join(',') === 'command/run,plan/mode,command/done',
        `after that turn the session must read as idle: /plan must commit at once (${JSON.stringify(PLAN_COMMAND_REPLIES.on)}, logging command/run, plan/mode, command/done); it answered ${JSON.stringify(plan?.text)} and logged ${idle.join(', ')}`,
      )
    },
  }
}
