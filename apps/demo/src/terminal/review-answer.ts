import { isWellFormedText, personTextProblem, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { approveLabelOf, FRESH_WORD, handoffChoices, handoffOffer, readHandoffChoice } from './handoff-choices.js'

/** A remark anchored to a 1-based line of the question's `detail` (SPEC §10). */
export type LineComment = NonNullable<UserAnswer['comments']>[number]

/** An answer with the review members of SPEC §10 (`edit`, `comments`), sent only when the intent declares them. */
export type ReviewAnswer = UserAnswer

/**
 * Reads one typed line as the answer to `question`: an option's number or
 * label selects it; `<number or label>: text` selects it with feedback; any
 * other text is free-form feedback. Returns `undefined` for an empty line.
 */
export function parseReviewAnswer(question: UserQuestion, line: string): UserAnswer | undefined {
  const text = line.trim()
  if (text === '') return undefined
  const pick = (token: string) => {
    const lowered = token.trim().toLowerCase()
    const byNumber = /^\d+$/.test(lowered) ? question.options[Number(lowered) - 1] : undefined
    return byNumber ?? question.options.find((option) => option.label.toLowerCase() === lowered)
  }
  const whole = pick(text)
  if (whole !== undefined) return { id: question.id, selected: [whole.label] }
  const colon = /^([^:]{1,40}):\s*([\s\S]+)$/.exec(text)
  const head = colon === null ? undefined : pick(colon[1]!)
  if (head !== undefined) return { id: question.id, selected: [head.label], custom: colon![2]!.trim() }
  return { id: question.id, selected: [], custom: text }
}

/** What one typed line did to a {@link ReviewDraft}. */
export type ReviewStep =
  /** The review is answered. */
  | { readonly kind: 'answer'; readonly answer: ReviewAnswer }
  /** `e`: the caller opens the plan in an editor and hands the text to {@link ReviewDraft.setEdit}. */
  | { readonly kind: 'edit' }
  /** A comment was added, a reminder of the choices (an empty line), or the line was refused; the review stays open. */
  | { readonly kind: 'note'; readonly text: string; readonly refused?: true }

/** The first line of `text`, at most 40 characters (then `…`), to quote it back. */
const oneLine = (text: string): string => {
  const line = text.split('\n')[0]!.trim()
  return line.length > 40 ? `${line.slice(0, 39)}…` : line
}

/** Words that approve a review, or agree to plan mode, when they are the whole line (any case, a trailing `.` or `!` allowed). */
const YES = /^(y|yes|ok|okay|lgtm|approve|approved)[.!]*$/i
/** Words that decline the plan-mode question as the whole line; at a review they are refused (they say nothing to revise). */
const NO = /^(n|no|nope)[.!]*$/i

/** What the person is told when a member of their answer cannot be logged (SPEC §22.4), by the member `personTextProblem` names. */
function unloggable(problem: string): string {
  const what = /\.custom /.test(problem)
    ? 'the feedback'
    : /\.comments\[/.test(problem)
      ? 'a comment'
      : /\.edit /.test(problem)
        ? 'the edited plan'
        : 'the answer'
  return `${what} holds U+0000 or a broken character (a lone surrogate), which cannot be logged; nothing was sent: type it again without it`
}

const intentFlag = (question: UserQuestion, flag: 'editable' | 'comments'): boolean =>
  question.intent?.kind === 'plan-review' && question.intent[flag] === true

/** The consent label of a `plan-enter` question (SPEC §12), or `undefined` for any other question. */
export function enterApproveLabel(question: UserQuestion): string | undefined {
  const intent = question.intent as { kind?: unknown; approve?: unknown } | undefined
  if (intent?.kind !== 'plan-enter') return undefined
  return typeof intent.approve === 'string' ? intent.approve : 'Enter plan mode'
}

/**
 * One open review, typed a line at a time: an option (number or label, with
 * `: feedback`), free text (keep planning with that feedback), `c <line> <text>`
 * for a line comment (when the intent declares `comments`), `e` to edit the
 * plan (when it declares `editable`). Comments and the edit ride with the
 * option picked last: the edit only with the approve option (SPEC §10: an
 * edit matters only with Approve), comments with any. `yes`, `y`, `ok`,
 * `okay`, `lgtm` or `approve` alone approve; `no` alone is refused (it gives
 * the agent nothing to revise). An empty line dismisses nothing: it is
 * answered with the choices, and the review stays open. The `plan-enter`
 * question (SPEC §12) takes only its options, `yes` (agree) and `no`
 * (decline): a note rides with the declining one (`2: <note>`), and other
 * text is refused with a hint. An answer whose text cannot be logged (U+0000,
 * a lone surrogate: SPEC §22.4) is refused before it is sent.
 * A review whose intent offers a handoff (SPEC §18) also takes the
 * approvals that hand the plan on ({@link handoffChoices}: numbered after
 * the options, by label, or `1 fresh` / `1 <model>` for short); edits and
 * comments ride with them as with Approve.
 */
export class ReviewDraft {
  readonly comments: LineComment[] = []
  private edited: string | undefined

  constructor(readonly question: UserQuestion) {}

  /** Whether the question's intent declares `editable`. */
  get editable(): boolean {
    return intentFlag(this.question, 'editable')
  }

  /** Whether the question's intent declares `comments`. */
  get commentable(): boolean {
    return intentFlag(this.question, 'comments')
  }

  /** The edited plan, when it differs from the question's detail. */
  get edit(): string | undefined {
    return this.edited
  }

  /** Takes the edited text; returns what the user is told. An edit equal to the plan is no edit. */
  setEdit(text: string): string {
    const normalized = text.replace(/\r\n/g, '\n').replace(/\n+$/, '')
    const original = (this.question.detail ?? '').replace(/\n+$/, '')
    if (normalized.trim() === '' || normalized === original) {
      this.edited = undefined
      return '(plan unchanged)'
    }
    if (!isWellFormedText(normalized)) {
      this.edited = undefined
      return '(the edited plan holds U+0000 or a broken character (a lone surrogate), which cannot be logged, so it was not kept; `e` edits again)'
    }
    this.edited = normalized
    const count = normalized.split('\n').length
    return `(edited plan: ${count} line${count === 1 ? '' : 's'}; Approve sends your version)`
  }

  /** Reads one typed line. */
  read(line: string): ReviewStep {
    const text = line.trim()
    if (text === '') return { kind: 'note', text: this.reminder() }
    const enter = enterApproveLabel(this.question)
    if (enter !== undefined) return this.checked(this.readEnter(text, enter))
    if (YES.test(text))
      return this.checked({ kind: 'answer', answer: this.finish({ id: this.question.id, selected: [approveLabelOf(this.question)] }) })
    if (NO.test(text)) {
      const keep = this.question.options.findIndex((option) => option.label !== approveLabelOf(this.question)) + 1
      return {
        kind: 'note',
        text: `“${oneLine(text)}” says nothing the agent can revise: type what should change (that keeps planning)${keep > 0 ? `, or ${keep} to keep planning as it is` : ''}`,
        refused: true,
      }
    }
    if (/^e$/i.test(text)) {
      if (!this.editable) return { kind: 'note', text: 'this review does not take an edited plan', refused: true }
      return { kind: 'edit' }
    }
    const comment = /^c\s+(\d+)\s+(\S[\s\S]*)$/i.exec(text)
    if (comment !== null) {
      if (!this.commentable) return { kind: 'note', text: 'this review does not take line comments', refused: true }
      const lineNo = Number(comment[1])
      const count = (this.question.detail ?? '').replace(/\n+$/, '').split('\n').length
      if (!Number.isSafeInteger(lineNo) || lineNo < 1 || lineNo > count) {
        return { kind: 'note', text: `no line ${comment[1]}: the plan has lines 1-${count}`, refused: true }
      }
      if (!isWellFormedText(comment[2]!)) return { kind: 'note', text: unloggable('answers[0].comments[0].text'), refused: true }
      this.comments.push({ line: lineNo, text: comment[2]!.trim() })
      return { kind: 'note', text: `(comment on line ${lineNo}; ${this.comments.length} so far — pick an option to send)` }
    }
    const handoff = readHandoffChoice(this.question, text)
    if (handoff !== undefined)
      return this.checked({
        kind: 'answer',
        answer: this.finish({ id: this.question.id, selected: [approveLabelOf(this.question)], handoff: handoff.handoff }),
      })
    const refused = this.refuseHandoff(text)
    if (refused !== undefined) return { kind: 'note', text: refused, refused: true }
    const parsed = parseReviewAnswer(this.question, text)!
    return this.checked({ kind: 'answer', answer: this.finish(parsed) })
  }

  /** What an empty line is told: the question is still open, and its choices. */
  private reminder(): string {
    const choices = [...this.question.options, ...handoffChoices(this.question)].map((option, index) => `${index + 1} (${option.label})`)
    const last = choices.pop()
    const list = choices.length === 0 ? last : `${choices.join(', ')} or ${last}`
    const more = enterApproveLabel(this.question) === undefined ? ', or what should change' : ''
    return `(still waiting for your answer: type ${list}${more})`
  }

  /** An answer whose text cannot be logged (SPEC §22.4) is refused here, before the host sees it; the review stays open. */
  private checked(step: ReviewStep): ReviewStep {
    if (step.kind !== 'answer') return step
    const problem = personTextProblem([step.answer])
    return problem === undefined ? step : { kind: 'note', text: unloggable(problem), refused: true }
  }

  /**
   * When the review offers a handoff, a line that reads like its short form
   * (the approve number or label and one or two words) but names nothing
   * offered is refused with what is, rather than sent as feedback; so is a
   * number past the last choice.
   */
  private refuseHandoff(text: string): string | undefined {
    const offer = handoffOffer(this.question)
    if (offer === undefined) return undefined
    const count = this.question.options.length + handoffChoices(this.question).length
    if (/^\d+$/.test(text) && Number(text) > count) return `no choice ${text}: the review has 1-${count}`
    const approve = approveLabelOf(this.question)
    const at = this.question.options.findIndex((option) => option.label === approve) + 1
    const short = new RegExp(`^(${at}|${approve.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})\\s+\\S+(\\s+\\S+)?$`, 'i')
    if (!short.test(text)) return undefined
    const words = [...(offer.fresh ? [FRESH_WORD] : []), ...offer.models]
    return `“${oneLine(text)}” hands the plan on to nothing offered: after ${at} type ${words.join(', ')}${offer.fresh && offer.models.length > 0 ? ` (or ${FRESH_WORD} and a model)` : ''}`
  }

  /**
   * The `plan-enter` question (SPEC §12): an option by number or label; a
   * note goes as custom text with the declining option (`2: <note>`). A
   * note with the consent option is refused here, because the tool reads
   * any custom text as a decline; so is text that does not start with an
   * option, which would otherwise go out as a decline with that text as its
   * note. `yes`-words agree and `no`-words decline (without a note).
   */
  private readEnter(text: string, approve: string): ReviewStep {
    const options = this.question.options
    const agree = options.findIndex((option) => option.label === approve) + 1
    const declineAt = options.findIndex((option) => option.label !== approve)
    const decline = declineAt < 0 ? undefined : options[declineAt]!.label
    const how = `Type ${agree} to agree${decline === undefined ? '' : `, ${declineAt + 1} to decline, or ${declineAt + 1}: <note> to decline with a note`}.`
    if (YES.test(text)) return { kind: 'answer', answer: { id: this.question.id, selected: [approve] } }
    if (NO.test(text) && decline !== undefined) return { kind: 'answer', answer: { id: this.question.id, selected: [decline] } }
    const parsed = parseReviewAnswer(this.question, text)!
    if (parsed.selected.length === 0) {
      return { kind: 'note', text: `“${oneLine(text)}” is not one of the choices. ${how}`, refused: true }
    }
    if (parsed.selected.length === 1 && parsed.selected[0] === approve && parsed.custom !== undefined) {
      return { kind: 'note', text: `${approve} takes no note: the agent would read it as a decline. ${how}`, refused: true }
    }
    return { kind: 'answer', answer: parsed }
  }

  private finish(answer: UserAnswer): ReviewAnswer {
    const approve = approveLabelOf(this.question)
    const approving = answer.selected.length === 1 && answer.selected[0] === approve
    return {
      ...answer,
      ...(approving && this.edited !== undefined ? { edit: this.edited } : {}),
      ...(this.comments.length > 0 ? { comments: [...this.comments] } : {}),
    }
  }
}
