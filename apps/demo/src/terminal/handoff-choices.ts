import type { UserAnswerHandoff, UserQuestion } from '@planmode/seams'

/** What a plan review offers to hand the approved plan on to (SPEC §18: the intent's `handoff`). */
export interface HandoffOffer {
  readonly fresh: boolean
  readonly models: readonly string[]
}

/** One approval that hands the plan on: a choice the terminal numbers after the question's own options. */
export interface HandoffChoice {
  /** `Approve with fast`, `Approve in a fresh session`, `Approve in a fresh session with fast`. */
  readonly label: string
  readonly description: string
  /** What the answer's `handoff` carries (only what is chosen). */
  readonly handoff: UserAnswerHandoff
}

/** The word of the short form (`1 fresh`) that asks for a fresh session. */
export const FRESH_WORD = 'fresh'

/** The handoff a `plan-review` question's intent offers, or `undefined` when it offers none (or is another question). */
export function handoffOffer(question: UserQuestion): HandoffOffer | undefined {
  const intent = question.intent as { kind?: unknown; handoff?: { fresh?: unknown; models?: unknown } } | undefined
  if (intent?.kind !== 'plan-review' || typeof intent.handoff !== 'object' || intent.handoff === null) return undefined
  const fresh = intent.handoff.fresh === true
  const models = Array.isArray(intent.handoff.models)
    ? intent.handoff.models.filter((id): id is string => typeof id === 'string' && id.trim() !== '')
    : []
  return fresh || models.length > 0 ? { fresh, models } : undefined
}

/** The approve label of a `plan-review` question (`Approve` when the intent names none). */
export function approveLabelOf(question: UserQuestion): string {
  const intent = question.intent as { kind?: unknown; approve?: unknown } | undefined
  return intent?.kind === 'plan-review' && typeof intent.approve === 'string' ? intent.approve : 'Approve'
}

/**
 * The approvals that hand the plan on, in the order the terminal numbers
 * them after the question's options: one per offered model (`Approve with
 * <id>`), then, when a fresh session is offered, `Approve in a fresh
 * session` and one per model for that session. Empty when nothing is offered.
 */
export function handoffChoices(question: UserQuestion): readonly HandoffChoice[] {
  const offer = handoffOffer(question)
  if (offer === undefined) return []
  const approve = approveLabelOf(question)
  const choices: HandoffChoice[] = offer.models.map((model) => ({
    label: `${approve} with ${model}`,
    description: `Leave plan mode; the agent carries out the plan with model ${model} from its next step.`,
    handoff: { model },
  }))
  if (offer.fresh) {
    choices.push({
      label: `${approve} in a fresh session`,
      description: 'Leave plan mode; a new session carries out the plan, starting from the plan alone, and this one stops here.',
      handoff: { fresh: true },
    })
    for (const model of offer.models) {
      choices.push({
        label: `${approve} in a fresh session with ${model}`,
        description: `The same, with model ${model} in the new session.`,
        handoff: { fresh: true, model },
      })
    }
  }
  return choices
}

/**
 * Reads a typed line as a handoff approval: the number the terminal gives
 * the choice (after the question's options), its label (any case), or the
 * short form — the approve option's number or label followed by `fresh`
 * and/or one offered model id, in any order (`1 fresh`, `1 careful`,
 * `approve fresh careful`). `undefined` when the line is none of these.
 */
export function readHandoffChoice(question: UserQuestion, line: string): HandoffChoice | undefined {
  const choices = handoffChoices(question)
  if (choices.length === 0) return undefined
  const text = line.trim()
  if (/^\d+$/.test(text)) {
    const at = Number(text) - question.options.length - 1
    return at >= 0 ? choices[at] : undefined
  }
  const lowered = text.toLowerCase()
  const byLabel = choices.find((choice) => choice.label.toLowerCase() === lowered)
  if (byLabel !== undefined) return byLabel
  const approve = approveLabelOf(question)
  const approveAt = question.options.findIndex((option) => option.label === approve) + 1
  const head = [String(approveAt), approve.toLowerCase()].find((token) => lowered.startsWith(`${token} `))
  if (approveAt === 0 || head === undefined) return undefined
  const words = text.slice(head.length).trim().split(/\s+/)
  const offer = handoffOffer(question)!
  let fresh = false
  let model: string | undefined
  for (const word of words) {
    if (word.toLowerCase() === FRESH_WORD && offer.fresh && !fresh) fresh = true
    else if (offer.models.includes(word) && model === undefined) model = word
    else return undefined
  }
  return choices.find((choice) => (choice.handoff.fresh === true) === fresh && choice.handoff.model === model)
}

/** How an answer's handoff reads in the transcript: `with model fast`, `in a fresh session`, `in a fresh session, with model fast`. */
export function describeHandoff(handoff: UserAnswerHandoff): string {
  const parts = [
    handoff.fresh === true ? 'in a fresh session' : undefined,
    handoff.model === undefined ? undefined : `with model ${handoff.model}`,
  ]
  return parts.filter((part) => part !== undefined).join(', ')
}
