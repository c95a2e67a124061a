import type {} from '@planmode/plan-core'
import { PLAN_COMMAND_REPLIES } from '@planmode/plan-commands'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { UserQuestionError, type PreStepPayload, type Session, type SessionEvent } from '@planmode/seams'
import { KIT_READ_TOOL, KIT_SECTION, type Harness } from '../harness.js'
import { logSummary, messageText, ofType, stableJson, systemOf, toolNamesOf, toolResultsOf, userTextsOf } from '../log-readers.js'
import type { CaseSpec } from './case-spec.js'
import { ENTER_NOTICE } from './notices.js'

const read = (path: string) => ({ toolCalls: [{ toolName: KIT_READ_TOOL, input: { path } }] })
const PLAN = '# Conformance plan\n\n1. Do the thing.'

/** The `step/start` events of a log, in order. */
function stepStarts(events: readonly SessionEvent[]): SessionEvent<'step/start'>[] {
  return ofType(events, 'step/start')
}

const services: CaseSpec = {
  duty: 'services',
  title: 'the context provides the registries the plan layers use and runs agent/pre-step before every step',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    h.check(
      typeof agent.id === 'string' && agent.session !== undefined && typeof agent.session.append === 'function',
      'createAgent() must return a seams Agent (id, session with events and append)',
    )
    h.check(agent.owner === undefined, 'createAgent() without an owner must return a root agent (no `owner`)')
    const seen: PreStepPayload[] = []
    h.context.on('agent/pre-step', async (payload, next) => {
      seen.push(payload)
      return next()
    })
    h.script(read('a.txt'), { text: 'done' })
    await h.prompt(agent, 'read a.txt')
    h.check(
      h.model.requests.length === 2,
      `a turn whose model called a tool and then answered must send 2 requests; the model got ${h.model.requests.length}`,
    )
    h.check(
      seen.length === 2,
      `the agent/pre-step waterfall must run once before each of the turn's 2 steps; it ran ${seen.length} time(s)`,
    )
    seen.forEach((payload, index) => {
      h.check(
        payload.agent.id === agent.id,
        `agent/pre-step payload.agent must be the stepping agent (${agent.id}), got ${String(payload.agent?.id)}`,
      )
      h.check(
        payload.step === index + 1,
        `agent/pre-step payload.step must count from 1 in the turn; call ${index + 1} had step ${String(payload.step)}`,
      )
      h.check(payload.signal instanceof AbortSignal, 'agent/pre-step payload.signal must be an AbortSignal')
      h.check(Array.isArray(payload.messages), 'agent/pre-step payload.messages must be an array of the steered user messages')
    })
  },
}

const turnsAndSteps: CaseSpec = {
  duty: 'turns-and-steps',
  title: 'turns and steps are logged, numbered, around their messages; a command during a step sees the open turn',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    h.script(read('a.txt'), { text: 'done' })
    await h.prompt(agent, 'one')
    let midTurn: string | undefined
    h.script(async () => {
      midTurn = (await h.context.require('commands').execute({ agent, line: '/plan' }))?.text
      return { text: 'two done' }
    })
    await h.prompt(agent, 'two')
    const events = h.events(agent)
    const frame = events
      .filter((event) => event.type.startsWith('turn/') || event.type.startsWith('step/'))
      .map((event) => {
        const data = event.data as { turn?: number; step?: number; reason?: string }
        return `${event.type}(${[data.turn, data.step, data.reason].filter((part) => part !== undefined).join(',')})`
      })
    const expected = [
      'turn/start(1)',
      'step/start(1,1)',
      'step/end(1,1)',
      'step/start(1,2)',
      'step/end(1,2)',
      'turn/end(1,completed)',
      'turn/start(2)',
      'step/start(2,1)',
      'step/end(2,1)',
      'turn/end(2,completed)',
    ]
    h.check(
      frame.join(' ') === expected.join(' '),
      `the turn and step events must be ${expected.join(' ')}; the log has ${frame.join(' ') || 'none'}`,
    )
    const first = events.findIndex((event) => event.type === 'user/message' && messageText(event.data) === 'one')
    const firstTurn = events.findIndex((event) => event.type === 'turn/start')
    h.check(
      first > firstTurn && first < events.findIndex((event) => event.type === 'step/start'),
      `the prompt's user/message must be logged after its turn/start and before the first step/start. Log: ${logSummary(events)}`,
    )
    for (const message of ofType(events, 'assistant/message')) {
      const index = events.indexOf(message)
      const start = events
        .slice(0, index)
        .reverse()
        .find((event) => event.type === 'step/start' || event.type === 'step/end')
      h.check(
        start?.type === 'step/start' &&
          (start.data as { step: number }).step === message.data.step &&
          (start.data as { turn: number }).turn === message.data.turn,
        `each assistant/message must be logged inside its own step (after step/start of turn ${message.data.turn} step ${message.data.step}). Log: ${logSummary(events)}`,
      )
    }
    h.check(
      midTurn === PLAN_COMMAND_REPLIES.entering,
      `a /plan run while the model answers must wait for the next step (plan-core reads the open turn from the log: "${PLAN_COMMAND_REPLIES.entering}"); it answered ${JSON.stringify(midTurn)}`,
    )
  },
}

const requestHeader: CaseSpec = {
  duty: 'request-header',
  title: 'request/header is logged before a request whose system text or tools changed, and only then, holding what the model received',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    h.script({ text: 'one' })
    await h.prompt(agent, 'one')
    h.script({ text: 'two' })
    await h.prompt(agent, 'two')
    h.context.require('tools').register<Record<string, never>, string>({
      name: 'conformance_extra',
      description: 'A tool registered between turns (conformance kit).',
      parameters: { type: 'object', properties: {} },
      execute: () => 'extra',
    })
    h.script({ text: 'three' })
    await h.prompt(agent, 'three')
    await h.command(agent, '/plan')
    h.script({ text: 'four' })
    await h.prompt(agent, 'four')
    const events = h.events(agent)
    const headers = ofType(events, 'request/header')
    h.check(
      headers.length === 3,
      `4 requests where only the 3rd (a tool added) and the 4th (plan guidance in the system text) change the request must log exactly 3 request/header events (initial, change, change); the log has ${headers.length}. Log: ${logSummary(events)}`,
    )
    const reasons = headers.map((header) => header.data.reason)
    h.check(
      reasons.join(',') === 'initial,change,change',
      `request/header reasons must be initial, change, change; got ${reasons.join(', ')}`,
    )
    const starts = stepStarts(events)
    h.check(
      starts.length === h.model.requests.length,
      `every request must be a logged step: ${h.model.requests.length} request(s), ${starts.length} step/start(s)`,
    )
    const headerTurns = headers.map((header) => `${header.data.turn}.${header.data.step}`)
    h.check(
      headerTurns.join(',') === '1.1,3.1,4.1',
      `the headers must belong to turn 1, 3 and 4 (step 1 each); they say ${headerTurns.join(', ')}`,
    )
    starts.forEach((start, index) => {
      const at = events.indexOf(start)
      const header = events
        .slice(0, at)
        .reverse()
        .find((event): event is SessionEvent<'request/header'> => event.type === 'request/header')
      h.check(header !== undefined, `step ${start.data.turn}.${start.data.step} starts with no request/header logged before it`)
      const request = h.model.requests[index]!
      h.check(
        header.data.system === systemOf(request),
        `the last request/header before step ${start.data.turn}.${start.data.step} must hold the system text the model received; header ${JSON.stringify(header.data.system.slice(0, 80))}, request ${JSON.stringify(systemOf(request).slice(0, 80))}`,
      )
      const logged = header.data.tools.map((tool) => tool.name).join(',')
      h.check(
        logged === toolNamesOf(request).join(','),
        `the last request/header before step ${start.data.turn}.${start.data.step} must list the tools the model received, in order; header [${logged}], request [${toolNamesOf(request).join(',')}]`,
      )
      h.check(
        typeof header.data.model === 'string' && header.data.model !== '',
        'request/header.model must name the model (provider:modelId)',
      )
    })
    h.check(
      headers[1]!.data.tools.some((tool) => tool.name === 'conformance_extra'),
      'the change header of turn 3 must list the tool registered before it',
    )
    h.check(headers[2]!.data.system.includes(KIT_SECTION), 'the change header of turn 4 must hold the plan guidance in its system text')
    const turnOf = (header: SessionEvent<'request/header'>) =>
      events.findIndex((event) => event.type === 'step/start' && (event.data as { turn: number }).turn === header.data.turn)
    for (const header of headers) {
      h.check(
        events.indexOf(header) < turnOf(header),
        `request/header of turn ${header.data.turn} must be logged before that step's step/start. Log: ${logSummary(events)}`,
      )
    }
  },
}

const transcriptFromLog: CaseSpec = {
  duty: 'transcript-from-log',
  title: 'every request is built from the log: user messages (notices, guidance, appended ones) and tool results reach the model',
  async body(h: Harness) {
    await h.start('transcript')
    const agent = await h.agent()
    h.script({ text: 'hello' })
    await h.prompt(agent, 'hi')
    // The notice below is due only once a header told the model the mode (request-header).
    h.checkHeaderLogged(agent)
    await h.command(agent, '/plan')
    const appended = 'conformance: a user message appended to the log between turns'
    await h.within('session.append(user/message)', () =>
      agent.session.append('user/message', { content: [{ type: 'text', text: appended }], source: { kind: 'user' } }),
    )
    h.script(read('a.txt'), { text: 'planned' })
    await h.prompt(agent, 'plan it')
    const events = h.events(agent)
    const starts = stepStarts(events)
    h.checkDuty(
      'turns-and-steps',
      starts.length === h.model.requests.length,
      `every request must be a logged step: ${h.model.requests.length} request(s), ${starts.length} step/start(s)`,
    )
    // The notice and the guidance message reach the log through the pre-step decision (pre-step-order), then the model from the log.
    const loggedNotice = events.findIndex((event) => event.type === 'user/message' && messageText(event.data) === ENTER_NOTICE)
    const loggedGuidance = events.findIndex((event) => event.type === 'user/message' && messageText(event.data) === KIT_SECTION)
    h.checkDuty(
      'pre-step-order',
      loggedNotice >= 0 && loggedNotice < loggedGuidance && loggedGuidance < events.indexOf(starts[1]!),
      `the pre-step decision's messages, the notice, then the guidance message, must be logged as user messages of the step that uses plan mode, before its step/start. Log: ${logSummary(events)}`,
    )
    h.checkTranscript(agent)
    const second = userTextsOf(h.model.requests[1]!)
    h.check(
      second.includes(appended),
      'a user/message appended to the session log must reach the next request (the transcript is built from the log, not from a list of its own)',
    )
    h.check(
      second.includes(ENTER_NOTICE),
      `the plan-mode notice (${JSON.stringify(ENTER_NOTICE)}) logged by the pre-step must reach the model`,
    )
    h.check(second.includes(KIT_SECTION), 'the guidance message (placement "transcript") logged by the pre-step must reach the model')
    h.check(second.indexOf(ENTER_NOTICE) < second.indexOf(KIT_SECTION), 'the notice must come before the guidance message in the request')
    const results = ofType(events, 'tool/result')
    h.check(results.length === 1, `the ${KIT_READ_TOOL} call must log one tool/result; the log has ${results.length}`)
    const sentResult = toolResultsOf(h.model.requests[2]!).get(results[0]!.data.toolCallId)
    h.check(
      sentResult !== undefined && sentResult.includes('contents of a.txt'),
      `the logged tool/result of ${KIT_READ_TOOL} must reach the next request as a tool result; it carried ${JSON.stringify(sentResult)}`,
    )
    h.check(
      h.model.requests[2]!.prompt.some(
        (message) =>
          message.role === 'assistant' &&
          message.content.some((part) => part.type === 'tool-call' && part.toolCallId === results[0]!.data.toolCallId),
      ),
      'the logged assistant/message with the tool call must reach the next request',
    )
  },
}

const sessionEvent: CaseSpec = {
  duty: 'session-event',
  title: 'session/event follows each append once, after events holds it, with the same events array while the log grows',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    const seen: { event: SessionEvent; session: Session; events: readonly SessionEvent[]; holds: boolean }[] = []
    h.context.on('session/event', ({ session, event }) => {
      if (session?.id !== agent.session.id) return
      const events = session.events
      seen.push({ event, session, events, holds: events[events.length - 1] === event || events.includes(event) })
    })
    h.script(read('a.txt'), { text: 'done' })
    await h.prompt(agent, 'one')
    await h.command(agent, '/plan')
    let emittedBeforeResolve = false
    const before = seen.length
    const message = { content: [{ type: 'text' as const, text: 'appended' }], source: { kind: 'user' as const } }
    const appended = await h.within('session.append(user/message)', () => agent.session.append('user/message', message))
    emittedBeforeResolve = seen.length === before + 1
    h.script({ text: 'two' })
    await h.prompt(agent, 'two')
    const events = agent.session.events
    h.check(events.length > 0 && seen.length > 0, 'the host emitted no session/event for the agent session')
    events.forEach((event, index) => {
      h.check(
        event.seq === index,
        `session.events[${index}].seq must be ${index} (seq counts from 0, strictly increasing); it is ${String(event.seq)}`,
      )
    })
    const emitted = seen.map((entry) => entry.event.seq).join(',')
    h.check(
      emitted === events.map((event) => event.seq).join(','),
      `session/event must be emitted exactly once per append, in order: the log has seq ${events.map((event) => event.seq).join(',')}, session/event carried ${emitted}`,
    )
    seen.forEach((entry) => {
      h.check(
        entry.holds,
        `when session/event is emitted for seq ${entry.event.seq} (${entry.event.type}), payload.session.events must already hold that event object`,
      )
      h.check(
        entry.events === events,
        `session/event for seq ${entry.event.seq} (${entry.event.type}) must hand listeners the same events array the session has while the log only grows (readers fold incrementally by array identity); it was a different array`,
      )
      h.check(
        entry.session === agent.session,
        `session/event for seq ${entry.event.seq} must carry the agent's session object itself, not a copy`,
      )
    })
    h.check(emittedBeforeResolve, 'session.append() must resolve after its session/event was emitted')
    h.check(
      appended?.type === 'user/message' && stableJson(appended.data) === stableJson(message),
      `session.append('user/message', data) must resolve with the event it logged (that type and data); it resolved with ${JSON.stringify(appended)}`,
    )
    const logged = events[appended.seq]
    h.check(
      logged?.seq === appended.seq && logged.type === appended.type && stableJson(logged.data) === stableJson(appended.data),
      `session.append() must resolve with the event as logged, at its seq: it resolved with ${JSON.stringify(appended)}, the log has ${JSON.stringify(logged)} at seq ${appended.seq}`,
    )
  },
}

const commandArgs: CaseSpec = {
  duty: 'command-args',
  title:
    "command/run { args: string } before the handler and command/done after it, for every command; args as typed, '' when only whitespace follows",
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    const inputs: { rawInput: string; last: SessionEvent | undefined }[] = []
    h.context.require('commands').register({
      name: 'conformance_echo',
      description: 'Echoes its input (conformance kit).',
      handler: ({ rawInput, agent: caller }) => {
        inputs.push({ rawInput, last: caller.session.events[caller.session.events.length - 1] })
        return { kind: 'success', text: `echo ${rawInput}` }
      },
    })
    h.context.require('commands').register({
      name: 'conformance_throw',
      description: 'Throws (conformance kit).',
      handler: () => {
        throw new Error('conformance: the handler threw')
      },
    })
    const plan = await h.command(agent, '/plan')
    h.check(
      plan?.text === PLAN_COMMAND_REPLIES.on,
      `an idle /plan must answer ${JSON.stringify(PLAN_COMMAND_REPLIES.on)}; it answered ${JSON.stringify(plan)}`,
    )
    await h.command(agent, '/conformance_echo')
    await h.command(agent, '/conformance_echo  two words ')
    await h.command(agent, '/conformance_echo   ')
    const thrown = await h.command(agent, '/conformance_throw')
    h.check(thrown?.kind === 'error', `a throwing handler must give an error result; got ${JSON.stringify(thrown)}`)
    const length = agent.session.events.length
    const unknown = await h.command(agent, '/conformance_no_such_command')
    h.check(unknown === undefined, `an unknown command must resolve undefined; got ${JSON.stringify(unknown)}`)
    h.check(agent.session.events.length === length, 'an unknown command must log nothing')
    await h.command(agent, '/plan off')
    const events = h.events(agent)
    const runs = ofType(events, 'command/run')
    h.check(runs.length === 6, `6 commands ran, so the log must hold 6 command/run events; it has ${runs.length}`)
    for (const run of runs) {
      const { args, name, commandId, source } = run.data as { args?: unknown; name?: unknown; commandId?: unknown; source?: unknown }
      h.check(
        typeof args === 'string',
        `command/run.args must be a string, '' when nothing follows the name; /${String(name)} logged ${args === undefined ? 'no args' : JSON.stringify(args)} (a missing args loses a pending /plan on restart)`,
      )
      h.check(
        typeof commandId === 'string' && commandId !== '',
        `command/run.commandId must be a non-empty string; /${String(name)} logged ${JSON.stringify(commandId)}`,
      )
      h.check(typeof source === 'object' && source !== null, `command/run.source must say who ran /${String(name)}`)
      const done = ofType(events, 'command/done').filter((event) => event.data.commandId === commandId)
      h.check(
        done.length === 1,
        `command/run ${String(commandId)} (/${String(name)}) must be followed by exactly one command/done with its commandId; found ${done.length}`,
      )
      h.check(events.indexOf(done[0]!) > events.indexOf(run), `command/done of /${String(name)} must be logged after its command/run`)
    }
    const argsOf = runs.map((run) => run.data.args)
    h.check(
      runs[0]!.data.name === 'plan' && argsOf[0] === '',
      `a bare /plan must log command/run { name: 'plan', args: '' }; it logged ${JSON.stringify(runs[0]!.data)}`,
    )
    h.check(argsOf[1] === '', `a bare /conformance_echo must log args ''; it logged ${JSON.stringify(argsOf[1])}`)
    // The plan layers read `args.trim()` (SPEC §5, §7): the spaces around the text are the host's to keep or drop.
    h.check(
      typeof argsOf[2] === 'string' && argsOf[2].trim() === 'two words',
      `"/conformance_echo  two words " must log the text after the name as args ("two words", spaces around it kept or not); it logged ${JSON.stringify(argsOf[2])}`,
    )
    h.check(
      typeof argsOf[3] === 'string' && argsOf[3].trim() === '',
      `"/conformance_echo   " (only spaces after the name) must log args '' (or the spaces as typed); it logged ${JSON.stringify(argsOf[3])}`,
    )
    h.check(
      typeof argsOf[5] === 'string' && argsOf[5].trim() === 'off',
      `"/plan off" must log the text after the name as args ("off", spaces around it kept or not); it logged ${JSON.stringify(argsOf[5])}`,
    )
    inputs.forEach((input, index) => {
      const run = runs[index + 1]!
      h.check(
        input.rawInput === run.data.args,
        `the handler's rawInput must be the logged args; logged ${JSON.stringify(run.data.args)}, handler got ${JSON.stringify(input.rawInput)}`,
      )
      h.check(
        input.last === run || input.last?.seq === run.seq,
        'command/run must be logged before the handler runs (it was not the last event when the handler ran)',
      )
    })
    const kinds = ofType(events, 'command/done').map((event) => event.data.kind)
    h.check(
      kinds.join(',') === 'success,success,success,success,error,success',
      `command/done.kind must be the result's kind (success, success, success, success, error, success); got ${kinds.join(', ')}`,
    )
    const planRun = events.indexOf(runs[0]!)
    h.check(
      events[planRun + 1]?.type === 'plan/mode',
      `the idle /plan's plan/mode must be logged between its command/run and command/done. Log: ${logSummary(events)}`,
    )
  },
}

const childQuestions: CaseSpec = {
  duty: 'child-questions',
  title: 'userQuestions refuses a child owned by a live agent (NOT_ROOT_AGENT) without asking; a root agent is asked',
  async body(h: Harness) {
    await h.start()
    const parent = await h.agent()
    const child = await h.agent(parent)
    h.check(
      child.owner?.id === parent.id,
      `createAgent({ owner }) must return an agent whose owner is that agent; its owner is ${String(child.owner?.id)}`,
    )
    const questions = [{ id: 'conformance', header: 'Check', question: 'Proceed?', options: [{ label: 'Yes', description: 'Go on.' }] }]
    let refusal: unknown
    try {
      await h.within('userQuestions.ask for a child', () => h.context.require('userQuestions').ask({ agent: child, questions }))
    } catch (error) {
      refusal = (error as { cause?: unknown }).cause ?? error
    }
    h.check(refusal !== undefined, 'userQuestions.ask for a child owned by a live agent must reject; it resolved')
    h.check(
      UserQuestionError.isInstance(refusal) && refusal.code === 'NOT_ROOT_AGENT',
      `userQuestions.ask for a child owned by a live agent must reject with UserQuestionError NOT_ROOT_AGENT; it rejected with ${String((refusal as { code?: unknown })?.code ?? refusal)}`,
    )
    h.check(h.asks.length === 0, "a child's ask must be refused before the provider is asked")
    const asked = (): number => h.asks.length
    // The answer carries only what every seam passes on (a host that drops other keys is review's to name).
    h.answers.push([{ id: 'conformance', selected: ['Yes'] }])
    const answers = await h.within('userQuestions.ask for a root agent', () =>
      h.context.require('userQuestions').ask({ agent: parent, questions }),
    )
    h.check(asked() === 1 && h.asks[0]!.agent.id === parent.id, "a root agent's ask must reach the provider with that agent")
    h.check(
      JSON.stringify(answers) === JSON.stringify([{ id: 'conformance', selected: ['Yes'] }]),
      `the provider's answers must come back to the asking agent; got ${JSON.stringify(answers)}`,
    )
    // Through the exit tool: the child's review is refused, and the child stays in plan mode.
    await h.command(child, '/plan')
    h.script({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'waiting' })
    await h.prompt(child, 'present the plan')
    const result = ofType(h.events(child), 'tool/result')[0]
    h.check(
      result?.data.isError === true,
      `a child's exit_plan_mode must fail (its review is refused by the seam); its result is ${JSON.stringify(result?.data)}`,
    )
    h.check(asked() === 1, "a child's exit_plan_mode must not reach the provider")
    h.check(h.context.require('planMode').get(child).active, 'a refused review must leave the child in plan mode')
  },
}

const preStepOrder: CaseSpec = {
  duty: 'pre-step-order',
  title: "a pre-step decision's messages are logged after the flush's plan/mode, in order, before the step's request/header",
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    h.script(
      async () => {
        await h.commandDuringStep(agent, '/plan draft the change')
        return read('a.txt')
      },
      { text: 'planning' },
    )
    await h.prompt(agent, 'build it')
    h.checkHeaderLogged(agent)
    // The steered message is the /plan command's input (command-args), the notice needs a header (request-header).
    h.checkCommandRecords(agent, { '/plan draft the change': 'draft the change' })
    const events = h.events(agent)
    const find = (what: string, predicate: (event: SessionEvent) => boolean) => {
      const index = events.findIndex(predicate)
      h.check(index >= 0, `the log must hold ${what}. Log: ${logSummary(events)}`)
      return index
    }
    const mode = find('the flushed plan/mode', (event) => event.type === 'plan/mode')
    const steered = find(
      'the steered user/message "draft the change"',
      (event) => event.type === 'user/message' && messageText(event.data) === 'draft the change',
    )
    const notice = find('the entering notice', (event) => event.type === 'user/message' && messageText(event.data) === ENTER_NOTICE)
    const step2 = find('step/start of step 2', (event) => event.type === 'step/start' && (event.data as { step: number }).step === 2)
    const header = events.findIndex((event, index) => index > mode && event.type === 'request/header')
    h.check(
      mode < steered && steered < notice,
      `the decision's messages (the steered message, then the notice) must be logged after the plan/mode the flush appended, in the decision's order; the log has plan/mode at ${mode}, steered at ${steered}, notice at ${notice}. Log: ${logSummary(events)}`,
    )
    h.check(
      header > notice && header < step2,
      `the step's request/header must come after its decision's messages and before its step/start. Log: ${logSummary(events)}`,
    )
    h.check(notice < step2, 'the decision messages must be logged before the step/start of their step')
    h.check(systemOf(h.model.requests[1]!).includes(KIT_SECTION), 'the step after the flush must carry the plan guidance')
    const texts = userTextsOf(h.model.requests[1]!)
    h.check(
      texts.slice(-2).join('|') === `draft the change|${ENTER_NOTICE}`,
      `step 2's request must end with the steered message, then the notice; it ends ${JSON.stringify(texts.slice(-2))}`,
    )
  },
}

const STEERED = 'conformance: a message steered while the step ran'
const REJECTION = 'conformance: the kit rejects this step'

const preStepReject: CaseSpec = {
  duty: 'pre-step-order',
  title: 'on a rejected pre-step no step is taken, and the steered messages it was proposed are logged before turn/end',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    const proposed: string[][] = []
    h.context.on('agent/pre-step', async (payload, next) => {
      if (payload.agent.id !== agent.id || payload.step !== 2) return next()
      proposed.push(payload.messages.map(messageText))
      return { kind: 'reject', reason: REJECTION }
    })
    h.script(async () => {
      await h.within('agent.steer() during a step', () =>
        agent.steer({ content: [{ type: 'text', text: STEERED }], source: { kind: 'user' } }),
      )
      return read('a.txt')
    })
    await h.prompt(agent, 'build it', { mayReject: true })
    const events = h.events(agent)
    h.checkDuty(
      'services',
      proposed.length === 1 && proposed[0]!.includes(STEERED),
      `agent/pre-step of step 2 must be proposed the message steered during step 1 (payload.messages); it ran ${proposed.length} time(s) with ${JSON.stringify(proposed)}`,
    )
    h.check(
      h.model.requests.length === 1,
      `a rejected pre-step must take no step: the model got ${h.model.requests.length} request(s), not 1`,
    )
    const ends = ofType(events, 'turn/end')
    h.check(ends.length === 1, `the rejected turn must log exactly one turn/end; the log has ${ends.length}. Log: ${logSummary(events)}`)
    const end = events.indexOf(ends[0]!)
    const stepEnd = events.findIndex((event) => event.type === 'step/end')
    const logged = events.flatMap((event, index) => (event.type === 'user/message' && messageText(event.data) === STEERED ? [index] : []))
    h.check(
      logged.length === 1,
      `the steered message a rejected pre-step was proposed must be logged once as a user/message (it is never lost); it was logged ${logged.length} time(s). Log: ${logSummary(events)}`,
    )
    h.check(
      logged[0]! > stepEnd && logged[0]! < end,
      `the steered message a rejected pre-step was proposed must be logged after the last step's step/end and before turn/end; it is at ${logged[0]}, step/end at ${stepEnd}, turn/end at ${end}. Log: ${logSummary(events)}`,
    )
    h.check(
      !events.slice(stepEnd + 1).some((event) => event.type === 'step/start' || event.type === 'request/header'),
      `a rejected pre-step must log no request/header or step/start after it. Log: ${logSummary(events)}`,
    )
  },
}

/** The cases of the host duties of SPEC §16. */
export const HOST_DUTY_CASES: readonly CaseSpec[] = [
  services,
  turnsAndSteps,
  requestHeader,
  transcriptFromLog,
  sessionEvent,
  commandArgs,
  childQuestions,
  preStepOrder,
  preStepReject,
]
