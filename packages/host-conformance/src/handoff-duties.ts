import type { HostDuty } from './duties.js'

/**
 * The duties of a handoff (SPEC §18): what a host does after an approved
 * review that chose another model or a fresh session.
 *
 * @public
 */
export type HandoffDuty = 'handoff-model' | 'handoff-fresh'

/** The entries of the handoff duties in `HOST_DUTIES`, in the order their cases run. */
export const HANDOFF_DUTIES: readonly {
  readonly duty: HandoffDuty
  readonly kind: 'host'
  readonly means: string
  readonly dependsOn: readonly HostDuty[]
}[] = [
  {
    duty: 'handoff-model',
    kind: 'host',
    means:
      "on agent/handoff with a model (an approval that chose one), the agent's requests from its next step go to that model, resolved from the environment's models, and its request/header records the change",
    dependsOn: ['services', 'turns-and-steps', 'request-header', 'composition', 'review'],
  },
  {
    duty: 'handoff-fresh',
    kind: 'host',
    means:
      "on agent/handoff with fresh, no further request in that turn once the step that ran the tool ends; a new session whose first event is the plan/handoff given, its first turn started with no user message, its agent on the model chosen (else the handing agent's), while the handing agent keeps its own model",
    dependsOn: ['services', 'turns-and-steps', 'session-event', 'pre-step-order', 'composition', 'review', 'handoff-model'],
  },
]
