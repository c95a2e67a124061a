import type { PlanReviewIntent, UserAnswer, UserAnswerComment, UserQuestion } from '@planmode/seams'

/** What `planmode answer` was told to answer. @public */
export type AnswerChoice =
  | {
      /** A plan review's decision: its intent's `approve`, `keep` or `stop` label. `approve` also fits any question whose intent names an `approve` label (`enter_plan_mode`'s). */
      readonly decision: 'approve' | 'keep' | 'stop'
      /** Feedback (`custom`): with `keep` it is what to change; with `stop` it is recorded. Not with `approve`: an approval with feedback would keep planning. */
      readonly feedback?: string
      /** Remarks on lines of the plan (`keep`, `stop`). */
      readonly comments?: readonly UserAnswerComment[]
      /** An edited plan to approve instead (`approve` of a review that is `editable`). */
      readonly edit?: string
      /** A handoff the review offers (`approve`): carry the plan out in a fresh session, and/or with this model. */
      readonly handoff?: { readonly fresh?: boolean; readonly model?: string }
    }
  | {
      /** Option labels, by question id (`''` for the ask's only question). */
      readonly options: ReadonlyMap<string, readonly string[]>
      /** Free text, by question id (`''` for the ask's only question). */
      readonly text: ReadonlyMap<string, string>
    }

/** The answers a choice makes for an ask, or why it cannot be made. @public */
export type ChoiceResult = { readonly ok: true; readonly answers: UserAnswer[] } | { readonly ok: false; readonly problem: string }

const isReview = (question: UserQuestion): question is UserQuestion & { readonly intent: PlanReviewIntent } =>
  question.intent?.kind === 'plan-review'

function labelsOf(question: UserQuestion): string {
  return question.options.map((option) => JSON.stringify(option.label)).join(', ')
}

/** A decision on the ask's one question. */
function decide(questions: readonly UserQuestion[], choice: Extract<AnswerChoice, { decision: string }>): ChoiceResult {
  const fail = (problem: string): ChoiceResult => ({ ok: false, problem })
  if (questions.length !== 1) return fail(`this ask has ${questions.length} questions; answer each with --option <question id>=<label>`)
  const question = questions[0]!
  const intent = question.intent as (Partial<PlanReviewIntent> & { readonly kind: string }) | undefined
  const review = isReview(question)
  const { decision, feedback, comments, edit, handoff } = choice
  const hasComments = comments !== undefined && comments.length > 0
  if (decision !== 'approve' || !review) {
    if (edit !== undefined) return fail('--edit-file goes with approve only (the edited plan is what is approved)')
    if (handoff !== undefined) return fail('--fresh and --model go with approve only')
  }
  if (decision === 'approve') {
    if (typeof intent?.approve !== 'string')
      return fail(
        `question ${JSON.stringify(question.id)} has no approve option: answer it with --option <label> (its options: ${labelsOf(question)})`,
      )
    if (feedback !== undefined || hasComments) {
      return fail(
        'approve takes no --feedback or --comment: an approval with feedback or comments keeps planning. Use keep to ask for changes, or approve alone',
      )
    }
    const answer: { -readonly [K in keyof UserAnswer]: UserAnswer[K] } = { id: question.id, selected: [intent.approve] }
    if (edit !== undefined) {
      if (!review || intent.editable !== true) return fail(`question ${JSON.stringify(question.id)} does not take an edited plan`)
      answer.edit = edit
    }
    if (handoff !== undefined) answer.handoff = handoff
    return { ok: true, answers: [answer] }
  }
  if (!review)
    return fail(
      `question ${JSON.stringify(question.id)} is not a plan review, so ${decision} means nothing there: answer it with --option <label> (its options: ${labelsOf(question)})`,
    )
  const label = decision === 'keep' ? intent?.keep : intent?.stop
  if (decision === 'stop' && label === undefined)
    return fail(`this plan review offers no Stop planning (its options: ${labelsOf(question)})`)
  if (hasComments && intent?.comments !== true) return fail('this plan review takes no line comments')
  const answer: { -readonly [K in keyof UserAnswer]: UserAnswer[K] } = { id: question.id, selected: label === undefined ? [] : [label] }
  if (feedback !== undefined) answer.custom = feedback
  if (label === undefined && (feedback === undefined || feedback.trim() === ''))
    return fail('this plan review names no Keep planning option: give --feedback to say what to change')
  if (hasComments) answer.comments = comments
  return { ok: true, answers: [answer] }
}

/**
 * The answers a choice of `planmode answer` makes for an ask's questions:
 * `approve`, `keep` and `stop` map onto a plan review's labels (its
 * intent's `approve`, `keep`, `stop`), with `feedback` as `custom` and
 * `comments` as line comments; `--option`/`--text` pick labels and free text
 * of any question (by question id when the ask has several). The writer
 * checks the answers again; this only turns a command line into them.
 *
 * @example
 * ```ts
 * const made = answersFor(ask.question, { decision: 'keep', feedback: 'Split step 2', comments: [{ line: 3, text: 'why?' }] })
 * ```
 *
 * @public
 */
export function answersFor(questions: readonly UserQuestion[], choice: AnswerChoice): ChoiceResult {
  if ('decision' in choice) return decide(questions, choice)
  const fail = (problem: string): ChoiceResult => ({ ok: false, problem })
  const single = questions.length === 1
  const keyOf = (key: string): string | undefined => (key === '' ? (single ? questions[0]!.id : undefined) : key)
  for (const key of [...choice.options.keys(), ...choice.text.keys()]) {
    const id = keyOf(key)
    if (id === undefined)
      return fail(
        `this ask has ${questions.length} questions (${questions.map((question) => JSON.stringify(question.id)).join(', ')}): name each, --option <question id>=<label>`,
      )
    if (!questions.some((question) => question.id === id))
      return fail(
        `this ask has no question ${JSON.stringify(id)} (its questions: ${questions.map((question) => JSON.stringify(question.id)).join(', ')})`,
      )
  }
  const answers: UserAnswer[] = []
  for (const question of questions) {
    const selected = [...(choice.options.get(question.id) ?? []), ...(single ? (choice.options.get('') ?? []) : [])]
    const text = choice.text.get(question.id) ?? (single ? choice.text.get('') : undefined)
    const unknown = selected.find((label) => !question.options.some((option) => option.label === label))
    if (unknown !== undefined)
      return fail(
        `${JSON.stringify(unknown)} is not an option of question ${JSON.stringify(question.id)} (its options: ${labelsOf(question)})`,
      )
    if (selected.length === 0 && (text === undefined || text.trim() === ''))
      return fail(
        `question ${JSON.stringify(question.id)} has no answer: give --option <label> (its options: ${labelsOf(question)}) or --text`,
      )
    answers.push({ id: question.id, selected, ...(text === undefined ? {} : { custom: text }) })
  }
  return { ok: true, answers }
}
