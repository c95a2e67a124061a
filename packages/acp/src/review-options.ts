import type { PermissionOption } from '@agentclientprotocol/sdk'
import type { PlanReviewIntent, UserAnswer, UserQuestion } from '@planmode/seams'

/** What the person chose, as planmode answers it; `keep` when the choice asks for feedback (Keep planning). */
export interface ReviewChoice {
  readonly answer: UserAnswer
  readonly keep: boolean
}

/** A question as a permission request: its options, and the answer each option id means. */
export interface PermissionQuestion {
  readonly options: PermissionOption[]
  /** The answer of `optionId`, or `undefined` for an id this request did not offer. */
  choice(optionId: string): ReviewChoice | undefined
}

const isReview = (intent: UserQuestion['intent']): intent is PlanReviewIntent => intent?.kind === 'plan-review'

/**
 * The permission options of a question (SPEC §23). A plan review: `Approve`
 * (`allow_once`), `Approve with <model>` for each offered model and
 * `Approve in a fresh session` when offered (`allow_once`), `Keep planning`
 * (`reject_once`), `Stop planning` (`reject_always`). The entry question:
 * `Enter plan mode` (`allow_once`), `Not now` (`reject_once`). Any other
 * question: its options in order, the first `allow_once`, the others
 * `reject_once`.
 */
export function permissionQuestion(question: UserQuestion): PermissionQuestion {
  const choices = new Map<string, ReviewChoice>()
  const options: PermissionOption[] = []
  const offer = (optionId: string, name: string, kind: PermissionOption['kind'], choice: ReviewChoice): void => {
    options.push({ optionId, name, kind })
    choices.set(optionId, choice)
  }
  const select = (label: string, extra: Partial<UserAnswer> = {}): UserAnswer => ({ id: question.id, selected: [label], ...extra })
  const intent = question.intent
  if (isReview(intent)) {
    offer('approve', intent.approve, 'allow_once', { answer: select(intent.approve), keep: false })
    for (const model of intent.handoff?.models ?? []) {
      offer(`approve-model:${model}`, `${intent.approve} with ${model}`, 'allow_once', {
        answer: select(intent.approve, { handoff: { model } }),
        keep: false,
      })
    }
    if (intent.handoff?.fresh === true) {
      offer('approve-fresh', `${intent.approve} in a fresh session`, 'allow_once', {
        answer: select(intent.approve, { handoff: { fresh: true } }),
        keep: false,
      })
    }
    const keep = intent.keep ?? question.options.find((option) => option.label !== intent.approve && option.label !== intent.stop)?.label
    if (keep !== undefined) offer('keep', keep, 'reject_once', { answer: select(keep), keep: true })
    if (intent.stop !== undefined) offer('stop', intent.stop, 'reject_always', { answer: select(intent.stop), keep: false })
    return { options, choice: (id) => choices.get(id) }
  }
  const approve = typeof intent?.approve === 'string' ? intent.approve : question.options[0]?.label
  question.options.forEach((option, index) => {
    const first = option.label === approve
    offer(first && intent?.kind === 'plan-enter' ? 'enter' : `option-${index + 1}`, option.label, first ? 'allow_once' : 'reject_once', {
      answer: select(option.label),
      keep: false,
    })
  })
  return { options, choice: (id) => choices.get(id) }
}
