import type {} from '@planmode/plan-core'
import { planHistory, planProjection } from '@planmode/plan-projection'
import {
  APPROVE_LABEL,
  ENTER_PLAN_MODE,
  ENTER_PLAN_MODE_LABEL,
  ENTER_PLAN_MODE_MESSAGES,
  EXIT_PLAN_MODE,
  EXIT_PLAN_MODE_MESSAGES,
  KEEP_PLANNING_LABEL,
  STOP_PLANNING_LABEL,
} from '@planmode/plan-tool'
import type { Agent, ProjectionChange, ProjectionUnit, SessionEvent, UserAnswer } from '@planmode/seams'
import { KIT_READ_TOOL, KIT_SECTION, type Harness } from '../harness.js'
import { coldFold, logSummary, messageText, ofType, stableJson, systemOf, toolResultsOf, userTextsOf } from '../log-readers.js'
import type { CaseSpec } from './case-spec.js'
import { ENTER_NOTICE, isNotice, LEAVE_NOTICE, notices } from './notices.js'
import { restartFromLog, restartOpenTurn } from './restart-cases.js'

const PLAN = '# Conformance plan\n\n1. Change the thing.\n2. Test it.'
const exit = (plan: string, toolCallId = 'conformance_exit') => ({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan }, toolCallId }] })

const composition: CaseSpec = {
  duty: 'composition',
  title:
    'the plan layers load into the host context, show up in its registries and requests, and disposing them removes every registration',
  async body(h: Harness) {
    await h.start()
    const ctx = h.context
    const agent = await h.agent()
    const present = () => ({
      command: ctx
        .require('commands')
        .list()
        .some((command) => command.name === 'plan'),
      exitTool:
        ctx
          .require('tools')
          .schemas()
          .some((tool) => tool.name === EXIT_PLAN_MODE) && ctx.require('tools').get(EXIT_PLAN_MODE) !== undefined,
      enterTool: ctx
        .require('tools')
        .schemas()
        .some((tool) => tool.name === ENTER_PLAN_MODE),
      plan: ctx.require('sessionProjections').keys().includes('plan'),
      history: ctx.require('sessionProjections').keys().includes('planHistory'),
    })
    const loaded = present()
    for (const [what, there] of Object.entries(loaded)) {
      h.check(
        there,
        `after loading the plan layers, the host's registries must hold ${what} (commands.list, tools.schemas/get, sessionProjections.keys)`,
      )
    }
    h.check(
      !ctx.require('systemPrompt').assemble({ agent }).system.includes(KIT_SECTION),
      'the plan guidance must be absent from the assembly while plan mode is off',
    )
    await h.command(agent, '/plan')
    h.check(
      ctx.require('systemPrompt').assemble({ agent }).system.includes(KIT_SECTION),
      "systemPrompt.assemble({ agent }) must render plan-policy's section once plan mode is on",
    )
    h.script({ text: 'planning' })
    await h.prompt(agent, 'plan it')
    const request = h.model.requests[0]!
    h.check(systemOf(request).includes(KIT_SECTION), "the request must carry plan-policy's section from the system-prompt registry")
    const names = (request.tools ?? []).map((tool) => tool.name)
    h.check(
      names.includes(EXIT_PLAN_MODE) && names.includes(ENTER_PLAN_MODE) && names.includes(KIT_READ_TOOL),
      `the request must offer every registered tool; it offered [${names.join(', ')}]`,
    )
    const { core, policy, commands, tool, projection, history } = h.layers
    for (const fiber of [history, projection, tool, commands, policy, core]) fiber.dispose()
    const gone = present()
    for (const [what, there] of Object.entries(gone)) {
      h.check(
        !there,
        `disposing the plan layers must remove ${what} from the host's registries (the disposer a register() returned must undo it)`,
      )
    }
    h.check(
      !ctx.require('systemPrompt').assemble({ agent }).system.includes(KIT_SECTION),
      "disposing plan-policy must remove its section from the host's system prompt",
    )
    h.check((await h.command(agent, '/plan')) === undefined, 'after disposal, /plan must be an unknown command (resolves undefined)')
    h.loadLayers(ctx, 'system')
    h.check(Object.values(present()).every(Boolean), 'loading the plan layers again must register them again')
    h.check(
      ctx.require('systemPrompt').assemble({ agent }).system.includes(KIT_SECTION),
      'reloaded layers must read plan mode from the log (it is still on)',
    )
  },
}

const noticeCase: CaseSpec = {
  duty: 'notices',
  title: 'an idle /plan injects nothing; one notice is logged before the request/header of the step that uses the new state',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    const before = agent.session.events.length
    await h.command(agent, '/plan')
    const idle = agent.session.events.slice(before).map((event) => event.type)
    h.check(
      idle.join(',') === 'command/run,plan/mode,command/done',
      `an idle /plan must log command/run, plan/mode, command/done and nothing else; it logged ${idle.join(', ')}`,
    )
    h.script({ text: 'one' })
    await h.prompt(agent, 'one')
    h.checkHeaderLogged(agent)
    h.check(
      notices(agent.session.events).length === 0,
      'no notice may be logged before the first request/header: nothing told the model anything yet',
    )
    await h.command(agent, '/plan off')
    h.check(!agent.session.events.slice(-3).some((event) => event.type === 'user/message'), 'an idle /plan off must inject nothing')
    h.script({ text: 'two' })
    await h.prompt(agent, 'two')
    h.checkTranscript(agent)
    let events = agent.session.events
    h.check(
      notices(events).join('|') === LEAVE_NOTICE,
      `leaving plan mode between turns must log exactly one leaving notice at the next step; notices: ${JSON.stringify(notices(events))}`,
    )
    const leave = events.findIndex(isNotice)
    const two = events.findIndex((event) => event.type === 'user/message' && messageText(event.data) === 'two')
    const headerTwo = events.findIndex((event, index) => index > leave && event.type === 'request/header')
    const stepTwo = events.findIndex((event, index) => index > leave && event.type === 'step/start')
    h.check(leave > two, "the notice must be a user message of the step: logged after the turn's prompt")
    h.check(
      headerTwo > leave && stepTwo > headerTwo,
      `the notice must be logged before the request/header and step/start of the request that uses the new state. Log: ${logSummary(events)}`,
    )
    h.check(userTextsOf(h.model.requests[1]!).at(-1) === LEAVE_NOTICE, 'the request of that step must end with the notice')
    await h.command(agent, '/plan')
    await h.command(agent, '/plan off')
    h.script({ text: 'three' })
    await h.prompt(agent, 'three')
    h.check(notices(agent.session.events).length === 1, 'a net-zero switch (on, then off, before the next step) must narrate nothing')
    h.script(
      async () => {
        await h.commandDuringStep(agent, '/plan')
        return { toolCalls: [{ toolName: KIT_READ_TOOL, input: { path: 'a.txt' } }] }
      },
      { text: 'planning' },
    )
    await h.prompt(agent, 'four')
    h.checkTranscript(agent)
    events = agent.session.events
    h.check(
      notices(events).join('|') === `${LEAVE_NOTICE}|${ENTER_NOTICE}`,
      `a /plan during a step must be told by one entering notice at the next step; notices: ${JSON.stringify(notices(events))}`,
    )
    const enter = events.map((event) => isNotice(event)).lastIndexOf(true)
    const mode = events.map((event) => event.type).lastIndexOf('plan/mode')
    const header = events.findIndex((event, index) => index > enter && event.type === 'request/header')
    const step = events.findIndex((event, index) => index > enter && event.type === 'step/start')
    h.check(
      mode < enter && enter < header && header < step,
      `the entering notice must follow the flushed plan/mode and precede the next request/header and step/start. Log: ${logSummary(events)}`,
    )
    const last = h.model.requests.at(-1)!
    h.check(
      userTextsOf(last).at(-1) === ENTER_NOTICE && systemOf(last).includes(KIT_SECTION),
      'the request that uses plan mode must carry the guidance and end with the notice',
    )
  },
}

interface ReviewExpectation {
  readonly title: string
  readonly answer: UserAnswer
  readonly isError: boolean
  readonly text: string
  readonly outcome: string
  readonly activeAfter: boolean
}

const reviews: readonly ReviewExpectation[] = [
  {
    title: 'Approve',
    answer: { id: 'plan-review', selected: [APPROVE_LABEL] },
    isError: false,
    text: EXIT_PLAN_MODE_MESSAGES.approved,
    outcome: 'approved',
    activeAfter: false,
  },
  {
    title: 'Keep planning with feedback',
    answer: { id: 'plan-review', selected: [KEEP_PLANNING_LABEL], custom: 'add tests first' },
    isError: true,
    text: `Error: ${EXIT_PLAN_MODE_MESSAGES.keepPlanningWithFeedback}add tests first`,
    outcome: 'keep-planning',
    activeAfter: true,
  },
  {
    title: 'Stop planning',
    answer: { id: 'plan-review', selected: [STOP_PLANNING_LABEL] },
    isError: true,
    text: `Error: ${EXIT_PLAN_MODE_MESSAGES.stopped}`,
    outcome: 'stopped',
    activeAfter: false,
  },
]

function reviewCase(expected: ReviewExpectation): CaseSpec {
  return {
    duty: 'review',
    title: `exit_plan_mode through the host's questions seam: ${expected.title}`,
    async body(h: Harness) {
      await h.start()
      const agent = await h.agent()
      await h.command(agent, '/plan')
      h.answers.push([expected.answer])
      h.script(exit(PLAN), { text: 'next' })
      await h.prompt(agent, 'plan the change')
      const answered = ofType(agent.session.events, 'tool/result').find((event) => event.data.toolCallId === 'conformance_exit')
      h.check(
        h.asks.length === 1,
        `exit_plan_mode must ask the provider once through userQuestions (it needs its calling agent in the tool execution); it asked ${h.asks.length} time(s) and the tool answered ${JSON.stringify(answered?.data.content.map((block) => block.text).join(''))}`,
      )
      const ask = h.asks[0]!
      const question = ask.questions[0]
      h.check(ask.agent.id === agent.id, 'the ask must carry the calling agent')
      h.check(
        question?.id === 'plan-review' && question.detail === PLAN,
        `the provider must receive the plan-review question with the plan as its detail; it got ${JSON.stringify(question)}`,
      )
      h.check(
        question.options.map((option) => option.label).join('|') === [APPROVE_LABEL, KEEP_PLANNING_LABEL, STOP_PLANNING_LABEL].join('|') &&
          question.intent?.kind === 'plan-review',
        'the provider must receive the options and intent exit_plan_mode asked with',
      )
      const events = agent.session.events
      const result = ofType(events, 'tool/result').find((event) => event.data.toolCallId === 'conformance_exit')
      h.check(result !== undefined, `the exit_plan_mode call must log a tool/result. Log: ${logSummary(events)}`)
      const text = result.data.content.map((block) => block.text).join('')
      h.check(
        result.data.isError === expected.isError && text === expected.text,
        `after ${expected.title}, the tool/result must be ${expected.isError ? 'a failure' : 'a success'} with ${JSON.stringify(expected.text)}; it is ${JSON.stringify(result.data)}`,
      )
      const record = ofType(events, 'plan/review')[0]
      h.check(
        record?.data.outcome === expected.outcome,
        `the review must be recorded as plan/review { outcome: '${expected.outcome}' }; got ${JSON.stringify(record?.data)}`,
      )
      if (expected.outcome === 'keep-planning')
        h.check(
          record.data.feedback === 'add tests first',
          'the feedback the provider returned must reach the tool unchanged (custom text)',
        )
      const sent = toolResultsOf(h.model.requests[1]!).get('conformance_exit')
      h.checkDuty(
        'transcript-from-log',
        sent !== undefined && sent.includes(expected.text.replace(/^Error: /, '')),
        `the logged tool/result of exit_plan_mode must reach the model's next request as a tool result; it carried ${JSON.stringify(sent)}`,
      )
      h.check(
        h.context.require('planMode').get(agent).active === expected.activeAfter,
        `after ${expected.title}, plan mode must be ${expected.activeAfter ? 'on' : 'off'} at the next step`,
      )
      h.check(
        systemOf(h.model.requests[1]!).includes(KIT_SECTION) === expected.activeAfter,
        `the request after ${expected.title} must ${expected.activeAfter ? 'still' : 'no longer'} carry the plan guidance`,
      )
      if (!expected.activeAfter) {
        const modes = ofType(events, 'plan/mode')
        const off = modes.at(-1)!
        h.check(
          off.data.active === false && off.data.cause === 'review',
          `leaving by review must log plan/mode { active: false, cause: 'review' }; got ${JSON.stringify(off.data)}`,
        )
        const secondStep = events.findIndex((event) => event.type === 'step/start' && (event.data as { step: number }).step === 2)
        h.check(
          events.indexOf(off) > events.indexOf(result) && events.indexOf(off) < secondStep,
          "the review's plan/mode must be appended at the next step boundary, after the tool result, before the next step",
        )
      }
      h.check(notices(events).length === 0, 'a review outcome is told by its tool result: no notice may be logged')
    },
  }
}

const enterPlanMode: CaseSpec = {
  duty: 'enter-plan-mode',
  title: 'enter_plan_mode asks through the seam with its calling agent; an accepted entry applies silently at the next step',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    h.answers.push([{ id: 'plan-enter', selected: [ENTER_PLAN_MODE_LABEL] }])
    h.script(
      { toolCalls: [{ toolName: ENTER_PLAN_MODE, input: { reason: 'a large change' }, toolCallId: 'conformance_enter' }] },
      { text: 'exploring' },
    )
    await h.prompt(agent, 'change everything')
    const events = agent.session.events
    h.check(
      h.asks.length === 1,
      `enter_plan_mode must ask the provider once (it needs its calling agent in the tool execution); asks: ${h.asks.length}. Log: ${logSummary(events)}`,
    )
    h.check(
      h.asks[0]!.questions[0]?.id === 'plan-enter' && h.asks[0]!.questions[0].detail === 'a large change',
      'the provider must receive the plan-enter question with the reason as its detail',
    )
    const result = ofType(events, 'tool/result').find((event) => event.data.toolCallId === 'conformance_enter')
    h.check(
      result?.data.isError === false && stableJson(result.data.value) === stableJson({ entered: true }),
      `an accepted entry must give the value { entered: true }; the result is ${JSON.stringify(result?.data)}`,
    )
    h.check(
      result.data.content.map((block) => block.text).join('') === ENTER_PLAN_MODE_MESSAGES.entered,
      'the accepted entry must be rendered with its exact text',
    )
    const mode = ofType(events, 'plan/mode')[0]
    h.check(
      mode?.data.active === true && mode.data.cause === 'model',
      `the entry must log plan/mode { active: true, cause: 'model' } at the next step; got ${JSON.stringify(mode?.data)}`,
    )
    const secondStep = events.findIndex((event) => event.type === 'step/start' && (event.data as { step: number }).step === 2)
    h.check(
      events.indexOf(mode) > events.indexOf(result) && events.indexOf(mode) < secondStep,
      'the entry must be appended at the next step boundary',
    )
    h.check(systemOf(h.model.requests[1]!).includes(KIT_SECTION), 'the step after an accepted entry must carry the plan guidance')
    h.check(notices(events).length === 0, 'an approved entry is told by its tool result: no notice may be logged')
  },
}

/** What a `session/event` listener saw when it called `snapshot()` right after a `plan/mode` event. */
interface ListenerSnapshot {
  readonly seq: number
  readonly asOfSeq: number | undefined
  readonly values: Readonly<Record<string, unknown>>
  readonly cold: Readonly<Record<string, unknown>>
  readonly error?: unknown
}

const projections: CaseSpec = {
  duty: 'projections',
  title:
    'the plan and planHistory snapshots equal a cold fold of the log, at rest, between steps and inside session/event; onChange reports each change as of its event',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    const units: readonly ProjectionUnit[] = [planProjection as ProjectionUnit, planHistory as ProjectionUnit]
    const upTo = (events: readonly SessionEvent[], seq: number) => events.filter((event) => event.seq <= seq)
    const changes: { change: ProjectionChange }[] = []
    h.context.require('sessionProjections').onChange((change) => {
      if (change.session.id === agent.session.id) changes.push({ change })
    })
    const inListener: ListenerSnapshot[] = []
    h.context.on('session/event', ({ session, event }) => {
      if (session.id !== agent.session.id || event.type !== 'plan/mode') return
      const cold = Object.fromEntries(units.map((unit) => [unit.key, coldFold(unit, upTo(session.events, event.seq))]))
      try {
        const snapshot = h.context.require('sessionProjections').snapshot(session)
        inListener.push({ seq: event.seq, asOfSeq: snapshot.asOfSeq, values: snapshot.values, cold })
      } catch (error) {
        inListener.push({ seq: event.seq, asOfSeq: undefined, values: {}, cold, error })
      }
    })
    const agree = (when: string, subject: Agent = agent) => {
      h.checkCommandRecords(subject)
      const events = subject.session.events
      const snapshot = h.context.require('sessionProjections').snapshot(subject.session)
      const lastSeq = events.length === 0 ? -1 : events[events.length - 1]!.seq
      h.check(
        snapshot.asOfSeq === lastSeq,
        `${when}: snapshot().asOfSeq must be the seq of the last event (${lastSeq}); it is ${snapshot.asOfSeq}`,
      )
      for (const unit of units) {
        const cold = coldFold(unit, events)
        const served = snapshot.values[unit.key]
        h.check(
          stableJson(served) === stableJson(cold),
          `${when}: the ${unit.key} snapshot must equal a cold fold of the log; served ${JSON.stringify(served)}, fold ${JSON.stringify(cold)}`,
        )
      }
    }
    agree('on an empty session')
    await h.command(agent, '/plan')
    agree('after an idle /plan')
    h.check(
      changes.some(({ change }) => change.key === 'plan' && stableJson(change.value) === stableJson({ active: true, pending: false })),
      'sessionProjections.onChange must report the plan value that changed with an append',
    )
    h.answers.push(
      [{ id: 'plan-review', selected: [KEEP_PLANNING_LABEL], custom: 'smaller' }],
      [{ id: 'plan-review', selected: [APPROVE_LABEL] }],
    )
    h.script(
      exit(PLAN, 'conformance_exit_1'),
      () => {
        agree('between two steps')
        return exit(`${PLAN}\n3. Smaller.`, 'conformance_exit_2')
      },
      { text: 'implementing' },
    )
    await h.prompt(agent, 'plan it')
    // Both reviews must have reached the provider (review) before their history can be compared.
    h.checkDuty(
      'review',
      h.asks.length === 2,
      `exit_plan_mode must ask the provider once per call through userQuestions (it needs its calling agent in the tool execution); two calls asked ${h.asks.length} time(s) and the tool answered ${JSON.stringify(
        ofType(agent.session.events, 'tool/result').map((event) => event.data.content.map((block) => block.text).join('')),
      )}`,
    )
    agree('after a turn with two reviews')
    const history = h.context.require('sessionProjections').snapshot(agent.session).values.planHistory as
      { revisions?: { status?: string }[] } | undefined
    h.check(
      history?.revisions?.map((revision) => revision.status).join(',') === 'keep-planning,approved',
      `planHistory must list both reviews (keep-planning, approved); it has ${JSON.stringify(history)}`,
    )
    h.script(async () => {
      await h.commandDuringStep(agent, '/plan')
      agree('after /plan during a step')
      return { text: 'noted' }
    })
    await h.prompt(agent, 'one more')
    agree('after a turn that ended with /plan waiting')
    const plan = h.context.require('sessionProjections').snapshot(agent.session).values.plan
    h.check(
      stableJson(plan) === stableJson({ active: false, pending: true }),
      `a /plan waiting for the next step must show as pending; the plan value is ${JSON.stringify(plan)}`,
    )

    // snapshot() called by a session/event listener right after a plan/mode event must already include it.
    const modes = ofType(agent.session.events, 'plan/mode').map((event) => event.seq)
    h.checkDuty(
      'session-event',
      inListener.map((seen) => seen.seq).join(',') === modes.join(','),
      `the kit's session/event listener must see every plan/mode event once (seq ${modes.join(', ')}); it saw ${inListener.map((seen) => seen.seq).join(', ')}`,
    )
    for (const seen of inListener) {
      const when = `snapshot() called from a session/event listener for the plan/mode at seq ${seen.seq}`
      h.check(seen.error === undefined, () => `${when} threw: ${seen.error instanceof Error ? seen.error.message : String(seen.error)}`)
      h.check(
        seen.asOfSeq === seen.seq,
        `${when}: asOfSeq must be ${seen.seq} (it catches up with session.events first); it is ${String(seen.asOfSeq)}`,
      )
      for (const unit of units) {
        h.check(
          stableJson(seen.values[unit.key]) === stableJson(seen.cold[unit.key]),
          `${when}: the ${unit.key} value must equal a cold fold of the log up to that event; served ${JSON.stringify(seen.values[unit.key])}, fold ${JSON.stringify(seen.cold[unit.key])}`,
        )
      }
    }

    // Every change onChange reported is as of the event appended, with the value folded up to it; every change of a value is reported.
    const events = agent.session.events
    for (const { change } of changes) {
      const unit = units.find((candidate) => candidate.key === change.key)
      if (unit === undefined) continue
      // (When it is reported is the registry's business: the seams do not say it is synchronous.)
      const cold = coldFold(unit, upTo(events, change.asOfSeq))
      h.check(
        stableJson(change.value) === stableJson(cold),
        `onChange's ${change.key} value as of seq ${change.asOfSeq} must equal a cold fold of the log up to that event; reported ${JSON.stringify(change.value)}, fold ${JSON.stringify(cold)}`,
      )
    }
    for (const unit of units) {
      let previous = stableJson(coldFold(unit, []))
      for (const event of events) {
        const value = stableJson(coldFold(unit, upTo(events, event.seq)))
        if (value === previous) continue
        previous = value
        h.check(
          changes.some(({ change }) => change.key === unit.key && change.asOfSeq === event.seq),
          `the ${unit.key} value changed with ${event.type} at seq ${event.seq}, but sessionProjections.onChange reported no ${unit.key} change as of that seq. Log: ${logSummary(events)}`,
        )
      }
    }
    const other = await h.agent()
    agree('on a second, empty session', other)
    agree('on the first session again')
  },
}

/** The cases of the plan-layer behaviours that depend on the host. */
export const PLAN_LAYER_CASES: readonly CaseSpec[] = [
  composition,
  restartFromLog,
  restartOpenTurn(false),
  restartOpenTurn(true),
  noticeCase,
  ...reviews.map(reviewCase),
  enterPlanMode,
  projections,
]
