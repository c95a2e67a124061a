import type { HostDuty } from './duties.js'

/**
 * The duties of the plan guidance beyond the transcript (SPEC §24): what a
 * host that compacts its conversations keeps of it.
 *
 * @public
 */
export type GuidanceDuty = 'compaction'

/** The entries of the guidance duties in `HOST_DUTIES`, in the order their cases run. */
export const GUIDANCE_DUTIES: readonly {
  readonly duty: GuidanceDuty
  readonly kind: 'host'
  readonly means: string
  readonly dependsOn: readonly HostDuty[]
}[] = [
  {
    duty: 'compaction',
    kind: 'host',
    means:
      "a host that compacts what the model reads keeps the session's latest full guidance message in it, or logs the section again as a full guidance message (while plan mode is on) when it drops it: a re-entry to plan mode sends only the guidance-again line, which refers to that message (plan-policy's checkCompactedGuidance says whether what a compaction keeps is enough); a host that never compacts has nothing more to do",
    dependsOn: ['services', 'turns-and-steps', 'request-header', 'command-args', 'pre-step-order', 'transcript-from-log', 'composition'],
  },
]
