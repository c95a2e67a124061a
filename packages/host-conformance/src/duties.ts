import { GUIDANCE_DUTIES, type GuidanceDuty } from './guidance-duties.js'
import { HANDOFF_DUTIES, type HandoffDuty } from './handoff-duties.js'

/**
 * The duties the kit checks, by name: the host duties of SPEC §16 and the
 * plan-layer behaviours that depend on the host.
 *
 * @public
 */
export type HostDuty =
  | HandoffDuty
  | GuidanceDuty
  | 'services'
  | 'turns-and-steps'
  | 'request-header'
  | 'transcript-from-log'
  | 'session-event'
  | 'command-args'
  | 'child-questions'
  | 'pre-step-order'
  | 'questions-in-log'
  | 'composition'
  | 'restart-from-log'
  | 'notices'
  | 'review'
  | 'enter-plan-mode'
  | 'projections'

/** What one duty means, in a sentence a host author can act on. @public */
export interface HostDutyInfo {
  /** The duty's name (the prefix of every failure). */
  readonly duty: HostDuty
  /** `host` for a duty of SPEC §16, `plan` for a plan-layer behaviour that depends on the host. */
  readonly kind: 'host' | 'plan'
  /** What the host must do. */
  readonly means: string
  /**
   * The duties this one's case builds on, directly. A case checks them
   * before its own rules and names them when they break, so a failure of
   * this duty's case names this duty or one of these (or one they build on).
   */
  readonly dependsOn: readonly HostDuty[]
}

/** The duties before the handoff ones (SPEC §16 and the plan-layer behaviours), in the order their cases run. */
const BASE_DUTIES: readonly HostDutyInfo[] = [
  {
    duty: 'services',
    kind: 'host',
    means:
      "the context provides the registries the plan layers use (systemPrompt, tools, commands, userQuestions, sessionProjections) and runs the agent/pre-step waterfall before every step, with the stepping agent as payload.agent (a child's with its owner, from its first step)",
    dependsOn: [],
  },
  {
    duty: 'turns-and-steps',
    kind: 'host',
    means:
      'every turn is logged as turn/start … turn/end and every model request as step/start … step/end, numbered from 1 (steps per turn); a turn whose model called tools takes its next step',
    dependsOn: ['services'],
  },
  {
    duty: 'request-header',
    kind: 'host',
    means:
      'a request/header (initial, then change) is logged before the step/start of every request whose system text, tools or model differ from the last header, and only then; it holds what the model received',
    dependsOn: ['services', 'turns-and-steps'],
  },
  {
    duty: 'transcript-from-log',
    kind: 'host',
    means:
      'every request is built from the log: each user/message (notices and guidance messages included), each block as one verbatim text part of a user message, and each tool/result reaches the model, in log order',
    dependsOn: ['services', 'turns-and-steps', 'request-header', 'pre-step-order'],
  },
  {
    duty: 'session-event',
    kind: 'host',
    means:
      'session/event is emitted once after each append, once session.events holds the event, and with the same events array while the log only grows',
    dependsOn: ['services', 'turns-and-steps'],
  },
  {
    duty: 'command-args',
    kind: 'host',
    means:
      "every command is logged as command/run { commandId, name, args, source } before its handler (args always a string: the text after the name, '' when nothing follows it; the plan layers read it trimmed, so spaces around it may be kept or dropped) and command/done { commandId, kind } after it; an unknown command logs nothing",
    dependsOn: ['services'],
  },
  {
    duty: 'child-questions',
    kind: 'host',
    means:
      "the userQuestions seam refuses an agent owned by a live agent with UserQuestionError NOT_ROOT_AGENT, without asking the provider; a root agent reaches the provider; every tool call runs with its calling agent (ToolExecution.agent), so a sub-agent tool starts its child as that agent's",
    dependsOn: ['services', 'turns-and-steps'],
  },
  {
    duty: 'pre-step-order',
    kind: 'host',
    means:
      "a pre-step decision's messages are logged as user/message after whatever the waterfall appended (the flush's plan/mode), in the decision's order, and before the step's request/header and step/start; on reject no step is taken and the proposed messages are logged before turn/end",
    dependsOn: ['services', 'turns-and-steps', 'request-header', 'command-args'],
  },
  {
    duty: 'questions-in-log',
    kind: 'host',
    means:
      "every ask that reaches a provider is logged on the asking agent's session: question/asked { questionId, agent, question } before the provider is asked, question/settled { questionId, outcome } (answered with the answers and by, cancelled, failed) before the ask settles; a refusal logs nothing; an ask its process left open is settled interrupted by the writer that reopens the session",
    dependsOn: ['services', 'turns-and-steps', 'child-questions', 'review', 'restart-from-log'],
  },
  {
    duty: 'composition',
    kind: 'plan',
    means:
      'the plan layers load into the host context (/plan, exit_plan_mode, enter_plan_mode, the plan and planHistory keys, the guidance) and disposing them removes every registration',
    dependsOn: ['services', 'turns-and-steps'],
  },
  {
    duty: 'restart-from-log',
    kind: 'plan',
    means:
      'a host opened on a logged session rebuilds plan state from the log alone: a /plan selected after the last step is still pending and applies at the next step; a turn the log leaves open is closed when the session is opened for writing, before anything else is appended (step/end for an open step, then turn/end with reason interrupted)',
    dependsOn: ['services', 'turns-and-steps', 'request-header', 'command-args', 'transcript-from-log', 'notices'],
  },
  {
    duty: 'notices',
    kind: 'plan',
    means:
      'an idle /plan injects nothing; the model is told by one notice logged as a user message of the step whose request uses the new state, before its request/header; a net-zero switch narrates nothing',
    dependsOn: ['services', 'turns-and-steps', 'request-header', 'transcript-from-log', 'pre-step-order'],
  },
  {
    duty: 'review',
    kind: 'plan',
    means:
      'exit_plan_mode reaches the provider through the host questions seam and its answer (Approve, Keep planning with feedback, Stop planning) comes back unchanged to the tool and the log',
    dependsOn: ['services', 'turns-and-steps', 'transcript-from-log', 'child-questions', 'pre-step-order'],
  },
  {
    duty: 'enter-plan-mode',
    kind: 'plan',
    means: 'enter_plan_mode runs with its calling agent, asks through the seam, and an accepted entry applies at the next step silently',
    dependsOn: ['services', 'turns-and-steps', 'child-questions', 'pre-step-order', 'review'],
  },
  {
    duty: 'projections',
    kind: 'plan',
    means:
      'the sessionProjections snapshot of plan and planHistory equals a cold fold of the log as of its last event, at rest, between steps and from a session/event listener; onChange reports every change as of the event that made it',
    dependsOn: ['services', 'turns-and-steps', 'session-event', 'command-args', 'review'],
  },
]

/**
 * Every duty the kit checks, in the order its cases run.
 *
 * @public
 */
export const HOST_DUTIES: readonly HostDutyInfo[] = [...BASE_DUTIES, ...HANDOFF_DUTIES, ...GUIDANCE_DUTIES]
