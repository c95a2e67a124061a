import type {} from '@planmode/plan-core'
import { foldPlanMode } from '@planmode/plan-core'
import {
  APPROVE_LABEL,
  EXIT_PLAN_MODE,
  EXIT_PLAN_MODE_MESSAGES,
  PLAN_HANDOFF_INTRO,
  planToolPlugin,
  type PlanToolHandoffConfig,
} from '@planmode/plan-tool'
import type { Agent, Session, SessionEvent, UserAnswer } from '@planmode/seams'
import { KIT_SECTION, type Harness } from '../harness.js'
import { HANDOFF_MODEL_ID, HANDOFF_MODEL_NAME, handoffModelsOf } from '../handoff-models.js'
import { logSummary, messageText, ofType, stableJson, systemOf, userTextsOf } from '../log-readers.js'
import type { CaseSpec } from './case-spec.js'

const PLAN = '# Handoff plan\n\n1. Change the thing.\n2. Test it.'
const TITLE = 'Handoff plan'
const CALL = 'conformance_handoff_exit'
const HANDOFF_TEXT = `${PLAN_HANDOFF_INTRO}\n\n${PLAN}`
const exit = { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN }, toolCallId: CALL }] }
const approve = (handoff: UserAnswer['handoff']): UserAnswer[] => [
  { id: 'plan-review', selected: [APPROVE_LABEL], ...(handoff === undefined ? {} : { handoff }) },
]

/**
 * Replaces the kit's plan-tool with one whose review offers `handoff` (the
 * other cases keep the kit's plain one). A host whose registries ignore the
 * disposers they return would keep the plain tool: that is `composition`'s.
 */
function offerHandoff(h: Harness, handoff: PlanToolHandoffConfig): void {
  h.layers.tool.dispose()
  h.checkDuty(
    'composition',
    h.context.require('tools').get(EXIT_PLAN_MODE) === undefined,
    `disposing plan-tool must remove exit_plan_mode from the tools registry (the disposer its register() returned); it is still registered, so the case cannot load a plan-tool that offers a handoff`,
  )
  h.context.plugin(planToolPlugin, { handoff })
}

/**
 * Checks, naming `review`, that the case's one review reached the provider
 * through the questions seam with the calling agent (a host that runs tools
 * without their agent asks nothing).
 */
function checkAsked(h: Harness, agent: Agent): void {
  const result = ofType(agent.session.events, 'tool/result').find((event) => event.data.toolCallId === CALL)
  h.checkDuty(
    'review',
    h.asks.length === 1 && h.asks[0]!.agent.id === agent.id,
    `exit_plan_mode must ask the provider once through userQuestions, with its calling agent (the tool execution carries it); it asked ${h.asks.length} time(s) and the tool answered ${JSON.stringify(result?.data.content.map((block) => block.text).join(''))}`,
  )
}

/** The model a request went to, as a request/header names it. */
function modelOf(h: Harness, index: number): string {
  const request = h.model.requests[index]
  if (request === undefined) return 'no model (there is no such request)'
  return handoffModelsOf(h.model).answered.has(request) ? HANDOFF_MODEL_NAME : `${h.model.provider}:${h.model.modelId}`
}

/**
 * The `exit_plan_mode` result of the case's call, checked to be the
 * approval the answer chose. It fails naming `review`: the questions seam
 * must hand the provider's answer (its `handoff` included) to the tool
 * unchanged, and plan-tool does the rest.
 */
function checkApproval(h: Harness, agent: Agent, value: object, text: string): void {
  checkAsked(h, agent)
  const result = ofType(agent.session.events, 'tool/result').find((event) => event.data.toolCallId === CALL)
  const content = result?.data.content.map((block) => block.text).join('')
  h.checkDuty(
    'review',
    result !== undefined && !result.data.isError && stableJson(result.data.value) === stableJson(value) && content === text,
    () =>
      `the provider's answer must reach exit_plan_mode with its handoff (the questions seam passes answers unchanged): the tool/result must be ${JSON.stringify({ isError: false, value, text })}; it is ${JSON.stringify(result?.data)}`,
  )
}

/** Watches the host for the sessions a handoff from `origin` creates: a session whose first event is `plan/handoff` from it. */
function watchFreshSessions(h: Harness, origin: Agent) {
  const found: Session[] = []
  const waiting: ((session: Session) => void)[] = []
  const ended = new Map<Session, (() => void)[]>()
  const endedFirstTurn = (session: Session): boolean => ofType(session.events, 'turn/end').some((event) => event.data.turn === 1)
  const stop = h.context.on('session/event', ({ session, event }) => {
    const from = (event.data as { from?: { session?: unknown } } | null)?.from
    if (event.seq === 0 && event.type === 'plan/handoff' && from?.session === origin.session.id && !found.includes(session)) {
      found.push(session)
      for (const resolve of waiting.splice(0)) resolve(session)
    }
    if (event.type === 'turn/end' && endedFirstTurn(session)) for (const resolve of ended.get(session)?.splice(0) ?? []) resolve()
  })
  return {
    found,
    stop,
    /** The first fresh session, once there is one. */
    first: (): Promise<Session> => (found[0] !== undefined ? Promise.resolve(found[0]) : new Promise((resolve) => waiting.push(resolve))),
    /** Resolves once `session` logged the `turn/end` of its first turn. */
    firstTurnEnded: (session: Session): Promise<void> => {
      if (endedFirstTurn(session)) return Promise.resolve()
      return new Promise((resolve) => {
        let list = ended.get(session)
        if (list === undefined) ended.set(session, (list = []))
        list.push(resolve)
      })
    },
  }
}

const handoffModel: CaseSpec = {
  duty: 'handoff-model',
  title:
    "a model chosen at the review carries the agent's requests from its next step (and later turns), and the step's request/header names it",
  async body(h: Harness) {
    await h.start()
    offerHandoff(h, { models: [HANDOFF_MODEL_ID] })
    const agent = await h.agent()
    await h.command(agent, '/plan')
    h.script(exit, { text: 'carrying out the plan' })
    h.answers.push(approve({ model: HANDOFF_MODEL_ID }))
    await h.prompt(agent, 'plan it')
    h.checkHeaderLogged(agent)
    checkApproval(h, agent, { approved: true, handoff: { model: HANDOFF_MODEL_ID } }, EXIT_PLAN_MODE_MESSAGES.approved)
    const events = agent.session.events
    h.check(
      modelOf(h, 0) !== HANDOFF_MODEL_NAME,
      `request #1, before the approval, must go to the model the agent was created with; it went to ${modelOf(h, 0)}`,
    )
    h.check(
      modelOf(h, 1) === HANDOFF_MODEL_NAME,
      () =>
        `after an approval that chose model "${HANDOFF_MODEL_ID}", the agent's requests from its next step must go to that model (the environment's models["${HANDOFF_MODEL_ID}"], ${HANDOFF_MODEL_NAME}): request #2 went to ${modelOf(h, 1)}`,
    )
    const firstEnd = ofType(events, 'step/end').find((event) => event.data.turn === 1 && event.data.step === 1)
    const secondStart = ofType(events, 'step/start').find((event) => event.data.turn === 1 && event.data.step === 2)
    const between = ofType(events, 'request/header').filter(
      (event) => firstEnd !== undefined && secondStart !== undefined && event.seq > firstEnd.seq && event.seq < secondStart.seq,
    )
    h.check(
      between.length === 1 && between[0]!.data.model === HANDOFF_MODEL_NAME && between[0]!.data.reason === 'change',
      () =>
        `the step after the approval must log one request/header { reason: 'change', model: '${HANDOFF_MODEL_NAME}' } before its step/start; it logged ${JSON.stringify(between.map((event) => ({ reason: event.data.reason, model: event.data.model })))}. Log: ${logSummary(events)}`,
    )
    h.checkTranscript(agent)
    h.script({ text: 'one more thing done' })
    await h.prompt(agent, 'one more thing')
    h.check(
      modelOf(h, 2) === HANDOFF_MODEL_NAME,
      () => `the agent must keep the chosen model for its later turns: request #3 went to ${modelOf(h, 2)}`,
    )
  },
}

/**
 * A model chosen with `fresh` is the new session's (SPEC §18): the handing
 * agent goes on, in its own session's next turn, with the model it had.
 */
async function checkHandingAgentKeepsItsModel(h: Harness, origin: Agent): Promise<void> {
  const before = origin.session.events.length
  h.script({ text: 'still here, on the model I had' })
  await h.prompt(origin, 'one more thing in this session')
  const index = h.model.requests.length - 1
  const own = `${h.model.provider}:${h.model.modelId}`
  const headers = ofType(origin.session.events.slice(before), 'request/header')
  h.check(
    modelOf(h, index) === own && headers.every((event) => event.data.model === own),
    () =>
      `a model chosen with a fresh session is the new session's agent's only: the handing agent's next turn must go on with its own model (${own}); its request went to ${modelOf(h, index)}${headers.length === 0 ? '' : `, its request/header names ${headers.map((event) => event.data.model).join(', ')}`}. Log: ${logSummary(origin.session.events)}`,
  )
}

/** The fresh-session cases: without a model, the new session's agent uses the handing agent's; with one, that one. */
function freshCase(withModel: boolean): CaseSpec {
  return {
    duty: 'handoff-fresh',
    title: withModel
      ? 'fresh with a model: plan/handoff names the model, and the new session’s requests go to it; the handing agent keeps its own model'
      : 'fresh: no further request in the approving turn; a new session starts with plan/handoff and a first turn with no user message, whose request carries the handoff message',
    async body(h: Harness) {
      await h.start()
      offerHandoff(h, withModel ? { fresh: true, models: [HANDOFF_MODEL_ID] } : { fresh: true })
      const origin = await h.agent()
      await h.command(origin, '/plan')
      const watch = watchFreshSessions(h, origin)
      try {
        h.script(exit, { text: 'carrying out the plan in the new session' })
        h.answers.push(approve(withModel ? { fresh: true, model: HANDOFF_MODEL_ID } : { fresh: true }))
        const logged = origin.session.events.length
        await h.within('prompt("plan it")', () => h.host.prompt(origin, 'plan it'))
        const errors = h.model.scriptErrors
        if (errors.length > 0) h.fail(`while the model answered, the case's own step failed: ${String(errors[0])}`, errors[0])
        h.checkTurn(origin, logged, 'prompt("plan it")')
        checkApproval(
          h,
          origin,
          { approved: true, handoff: withModel ? { fresh: true, model: HANDOFF_MODEL_ID } : { fresh: true } },
          EXIT_PLAN_MODE_MESSAGES.fresh,
        )
        const events = origin.session.events
        const later = ofType(events, 'step/start').filter((event) => event.data.turn === 1 && event.data.step > 1)
        h.check(
          later.length === 0 && ofType(events, 'turn/end').some((event) => event.data.turn === 1),
          () =>
            `after an approval that chose a fresh session, the host must make no further request in that turn once the step that ran exit_plan_mode ends, and end the turn; the log has ${later.length} later step(s). Log: ${logSummary(events)}`,
        )
        const session = await h.within(
          'waiting for the new session whose first event is plan/handoff (the host creates one after an approval that chose a fresh session)',
          () => watch.first(),
        )
        const first = session.events[0] as SessionEvent | undefined
        const expected = {
          from: { session: origin.session.id, toolCallId: CALL },
          plan: PLAN,
          title: TITLE,
          ...(withModel ? { model: HANDOFF_MODEL_ID } : {}),
        }
        h.check(
          first?.type === 'plan/handoff' && stableJson(first.data) === stableJson(expected),
          () =>
            `the new session's first event must be plan/handoff ${JSON.stringify(expected)} exactly, as agent/handoff gave it; it is ${JSON.stringify(first)}`,
        )
        await h.within("the new session's first turn (the host starts it, with no user message)", () => watch.firstTurnEnded(session))
        const fresh = session.events
        const firstHeader = fresh.findIndex((event) => event.type === 'request/header' || event.type === 'step/start')
        const before = fresh.slice(0, firstHeader === -1 ? fresh.length : firstHeader)
        const messages = ofType(before, 'user/message')
        const isHandoff = (event: SessionEvent<'user/message'>): boolean => {
          const source = event.data.source as { kind?: string; plugin?: string; form?: string }
          return source.kind === 'plugin' && source.plugin === 'plan-mode' && source.form === 'handoff'
        }
        const turnStart = fresh.findIndex((event) => event.type === 'turn/start')
        h.check(
          turnStart > 0 && messages.every((event) => isHandoff(event) && fresh.indexOf(event) > turnStart),
          () =>
            `the host must start the new session's first turn with no user message (plan-tool adds the plan at its first step); before its first step the log has ${JSON.stringify(messages.map((event) => ({ source: event.data.source, text: messageText(event.data).slice(0, 60) })))}. Log: ${logSummary(fresh)}`,
        )
        h.checkDuty(
          'pre-step-order',
          messages.length > 0,
          `the new session's first pre-step decision carries plan-tool's handoff message (contribute, SPEC §3.3), and the host must log a decision's messages before the step's request/header; nothing was logged before its first step. Log: ${logSummary(fresh)}`,
        )
        h.check(
          messages.length === 1 && messageText(messages[0]!.data) === HANDOFF_TEXT,
          () =>
            `the new session's first step must log the handoff message once, ${JSON.stringify(HANDOFF_TEXT)}, from the pre-step decision; it logged ${JSON.stringify(messages.map((event) => messageText(event.data)))}. Log: ${logSummary(fresh)}`,
        )
        h.check(
          h.model.requests.length === 2 && h.model.remaining === 0,
          () =>
            `the origin's step and the new session's first step must make the case's two requests; the model got ${h.model.requests.length} and has ${h.model.remaining} scripted reply(ies) left. New session: ${logSummary(fresh)}`,
        )
        const request = h.model.requests[1]!
        h.check(
          stableJson(userTextsOf(request)) === stableJson([HANDOFF_TEXT]),
          () =>
            `the new session's first request must be built from its own log: its one user message is the handoff message; it carried ${JSON.stringify(userTextsOf(request))}`,
        )
        h.check(
          !foldPlanMode(fresh) && !systemOf(request).includes(KIT_SECTION),
          'the new session starts in the default mode: no plan/mode on, and no plan guidance in its request',
        )
        const header = ofType(fresh, 'request/header')[0]
        const firstStart = fresh.findIndex((event) => event.type === 'step/start')
        h.checkDuty(
          'request-header',
          header !== undefined && fresh.indexOf(header) < firstStart,
          () =>
            `every session's first request is preceded by its request/header (reason 'initial'), the new session of a handoff too (the case reads which model it went to there); its log has ${header === undefined ? 'none' : `one at ${fresh.indexOf(header)}, after its first step/start`}. Log: ${logSummary(fresh)}`,
        )
        const want = withModel ? HANDOFF_MODEL_NAME : modelOf(h, 0)
        // The chosen model is resolved from the environment's models as for a switch in the session (handoff-model):
        // a host that resolves none keeps the handing agent's model in the new session too.
        if (withModel && modelOf(h, 1) === modelOf(h, 0)) {
          h.checkDuty(
            'handoff-model',
            false,
            `the new session's agent must use the model chosen at the review, resolved from the environment's models["${HANDOFF_MODEL_ID}"] (${HANDOFF_MODEL_NAME}) as for a switch in the session; its request went to the handing agent's model, ${modelOf(h, 1)}`,
          )
        }
        h.check(modelOf(h, 1) === want && header?.data.model === want, () =>
          withModel
            ? `the new session's agent must use the model chosen at the review (${HANDOFF_MODEL_NAME}, the environment's models["${HANDOFF_MODEL_ID}"]): its request went to ${modelOf(h, 1)}, its request/header names ${header?.data.model}`
            : `without a model chosen, the new session's agent uses the handing agent's model (${want}): its request went to ${modelOf(h, 1)}, its request/header names ${header?.data.model}`,
        )
        if (withModel) await checkHandingAgentKeepsItsModel(h, origin)
      } finally {
        watch.stop()
      }
    },
  }
}

/** The cases of the handoff duties (SPEC §18), in the order of `HANDOFF_DUTIES`. */
export const HANDOFF_CASES: readonly CaseSpec[] = [handoffModel, freshCase(false), freshCase(true)]
