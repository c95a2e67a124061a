import type {} from '@planmode/plan-core'
import { RECOMMENDED_CHILD_SECTION } from '@planmode/plan-policy'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { Agent, PreStepPayload, SessionEvent } from '@planmode/seams'
import { KIT_READ_TOOL, KIT_SECTION, type Harness } from '../harness.js'
import { logSummary, messageText, ofType, systemOf } from '../log-readers.js'
import type { CaseSpec } from './case-spec.js'
import { isNotice } from './notices.js'

/** The tool the kit registers to run a child agent from inside its owner's tool call, as a host's sub-agent tool does. */
export const KIT_EXPLORE_TOOL = 'conformance_explore'

const PLAN = '# Child plan\n\n1. Do the thing.'
const CHILD_REPORT = 'conformance: what the child found'

/** Where `plan/mode` sits in a log, with its data, and where the first `request/header` sits. */
function inheritance(events: readonly SessionEvent[]): { mode: number; data: unknown; header: number } {
  const mode = events.findIndex((event) => event.type === 'plan/mode')
  return { mode, data: events[mode]?.data, header: events.findIndex((event) => event.type === 'request/header') }
}

/** Checks that `child`'s log inherited plan mode at its first step (SPEC §21): `plan/mode { active: true, cause: 'inherit' }` before its first header. */
function checkInherited(h: Harness, child: Agent): void {
  const events = h.events(child)
  const { mode, data, header } = inheritance(events)
  h.check(
    mode >= 0 && JSON.stringify(data) === JSON.stringify({ active: true, cause: 'inherit' }),
    () =>
      `a child whose owner is in plan mode must inherit it at its first accepted pre-step: plan-core appends plan/mode { active: true, cause: 'inherit' }, reading the owner's log through agent.owner.session; the child's log has ${mode < 0 ? 'no plan/mode' : `plan/mode ${JSON.stringify(data)}`}. Log: ${logSummary(events)}`,
  )
  h.check(
    header > mode,
    `the inherited plan/mode must be logged before the child's first request/header (it is at ${mode}, the header at ${header}). Log: ${logSummary(events)}`,
  )
  h.check(
    !events.some(isNotice),
    `an inherited plan mode tells the model nothing: the child's log must hold no notice. Log: ${logSummary(events)}`,
  )
}

const childInherits: CaseSpec = {
  duty: 'services',
  title: "a child's first pre-step runs the waterfall with its owner known: it inherits the owner's plan mode before its first request",
  async body(h: Harness) {
    await h.start()
    const parent = await h.agent()
    await h.command(parent, '/plan')
    const planMode = h.context.require('planMode')
    h.check(planMode.get(parent).active, 'an idle /plan must put the owner in plan mode (the case needs it)')
    const child = await h.agent(parent)
    h.check(
      child.owner?.id === parent.id,
      `createAgent({ owner }) must return an agent whose owner is that agent; its owner is ${String(child.owner?.id)}`,
    )
    h.check(
      !planMode.get(child).active,
      'before its first step a child is not in plan mode: inheritance happens at its first accepted pre-step (SPEC §21)',
    )
    const seen: PreStepPayload[] = []
    h.context.on('agent/pre-step', async (payload, next) => {
      if (payload.agent.id === child.id) seen.push(payload)
      return next()
    })
    h.script({ toolCalls: [{ toolName: KIT_READ_TOOL, input: { path: 'a.txt' } }] }, { text: 'found it' })
    await h.prompt(child, 'look around')
    h.check(
      seen.length === 2,
      `the agent/pre-step waterfall must run once before each of the child's 2 steps; it ran ${seen.length} time(s)`,
    )
    const owner = seen[0]!.agent.owner
    h.checkDuty(
      'services',
      owner?.id === parent.id,
      `agent/pre-step payload.agent of a child must carry its owner (agent.owner) from its first step, so plan-core can read the owner's plan mode; the first pre-step's agent has ${owner === undefined ? 'no owner' : `owner ${owner.id}`}`,
    )
    h.checkDuty(
      'services',
      owner.session.events.some((event) => event.type === 'plan/mode'),
      "the owner a child's pre-step carries must hold the owner's session log (agent.owner.session.events with its plan/mode)",
    )
    h.checkHeaderLogged(child)
    checkInherited(h, child)
    const system = systemOf(h.model.requests[0]!)
    h.check(
      system.includes(RECOMMENDED_CHILD_SECTION.trim()) && !system.includes(KIT_SECTION),
      `the child's first request must carry plan-policy's child section (RECOMMENDED_CHILD_SECTION), not the plan section: its system text is ${JSON.stringify(system.slice(0, 200))}`,
    )
    h.check(planMode.get(child).active, 'after its first step the child is in plan mode')
    // A child of an owner in the default mode starts in the default mode.
    await h.command(parent, '/plan off')
    const second = await h.agent(parent)
    h.script({ text: 'default mode' })
    await h.prompt(second, 'look around')
    h.check(
      !h.events(second).some((event) => event.type === 'plan/mode'),
      `a child whose owner is in the default mode at its first step inherits nothing. Log: ${logSummary(h.events(second))}`,
    )
    h.check(
      !systemOf(h.model.requests[2]!).includes(RECOMMENDED_CHILD_SECTION.trim()),
      'a child in the default mode must not read the child section',
    )
  },
}

const childQuestionsInTool: CaseSpec = {
  duty: 'child-questions',
  title:
    "a child started inside its owner's tool call inherits plan mode; its exit_plan_mode is refused by the seam without asking, and its report returns",
  async body(h: Harness) {
    await h.start()
    const parent = await h.agent()
    await h.command(parent, '/plan')
    let child: Agent | undefined
    let ranWithoutAgent = false
    const childPreSteps: PreStepPayload[] = []
    h.context.on('agent/pre-step', async (payload, next) => {
      if (payload.agent.id !== parent.id) childPreSteps.push(payload)
      return next()
    })
    h.context.require('tools').register<{ question: string }, string>({
      name: KIT_EXPLORE_TOOL,
      description: 'Runs a child agent on a question (conformance kit).',
      parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
      annotations: { readOnlyHint: true },
      async execute({ question }, execution) {
        const caller = execution.agent
        if (caller === undefined) {
          ranWithoutAgent = true
          throw new Error('conformance_explore ran without its calling agent')
        }
        child = await h.agent(caller)
        await h.within(`prompt(child, ${JSON.stringify(question)}) from the owner's tool call`, () => h.host.prompt(child!, question))
        const said = ofType(child.session.events, 'assistant/message').flatMap((event) =>
          event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])),
        )
        return said.at(-1) ?? ''
      },
    })
    h.script(
      { toolCalls: [{ toolName: KIT_EXPLORE_TOOL, input: { question: 'what is there?' } }] },
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] },
      { text: CHILD_REPORT },
      { text: 'the owner goes on' },
    )
    // A tool run without its calling agent cannot start a child of it: that, not the steps it left unscripted, is what broke.
    const prompted = await h.prompt(parent, 'ask a child').then(
      () => undefined,
      (error: unknown) => error,
    )
    h.check(
      !ranWithoutAgent,
      `the host must run every tool call with its calling agent (ToolExecution.agent): a sub-agent tool starts the child as a child of that agent, and the child's questions are refused by its owner; the kit's ${KIT_EXPLORE_TOOL} ran without one. Log: ${logSummary(h.events(parent))}`,
    )
    if (prompted !== undefined) throw prompted
    h.check(child !== undefined, `the owner's tool call must run (it starts the child). Log: ${logSummary(h.events(parent))}`)
    h.check(
      child.owner?.id === parent.id,
      `createAgent({ owner }) from a tool call must return a child of the calling agent; its owner is ${String(child.owner?.id)}`,
    )
    const firstOwner = childPreSteps[0]?.agent.owner
    h.checkDuty(
      'services',
      firstOwner?.id === parent.id,
      `agent/pre-step payload.agent of a child must carry its owner (agent.owner) from its first step, so plan-core can read the owner's plan mode; ${childPreSteps.length === 0 ? "the child's steps ran no pre-step" : `the first pre-step's agent has ${firstOwner === undefined ? 'no owner' : `owner ${firstOwner.id}`}`}`,
    )
    h.checkHeaderLogged(child)
    checkInherited(h, child)
    const result = ofType(h.events(child), 'tool/result').find((event) => event.data.toolName === EXIT_PLAN_MODE)
    h.check(
      h.asks.length === 0,
      `an inheriting child's exit_plan_mode must be refused by the seam without asking the provider (its owner is live); the provider was asked ${h.asks.length} time(s)${h.asks[0] === undefined ? '' : ` for agent ${h.asks[0].agent.id} (the child is ${child.id}: a child's tools must run as the child)`}`,
    )
    h.check(
      result?.data.isError === true,
      `a child's exit_plan_mode must fail (the seam refuses its review); its result is ${JSON.stringify(result?.data)}`,
    )
    h.check(
      !h.events(child).some((event) => event.type === 'plan/review'),
      'a refused review records nothing (no plan/review in the child log)',
    )
    h.check(h.context.require('planMode').get(child).active, 'a refused review must leave the child in plan mode')
    h.check(h.context.require('planMode').get(parent).active, "the child's refused review must leave its owner in plan mode")
    const report = ofType(h.events(parent), 'tool/result').find((event) => event.data.toolName === KIT_EXPLORE_TOOL)
    h.check(
      report?.data.isError === false && report.data.content.map((block) => block.text).join('') === CHILD_REPORT,
      `the owner's tool call must return the child's last message; its result is ${JSON.stringify(report?.data)}`,
    )
    h.check(
      ofType(h.events(parent), 'user/message').every((event) => messageText(event.data) !== CHILD_REPORT),
      "the child's messages stay in the child's log",
    )
  },
}

/** The cases of SPEC §21 that depend on the host: a child's owner in its pre-step, and a child's questions refused. */
export const CHILD_CASES: readonly CaseSpec[] = [childInherits, childQuestionsInTool]
