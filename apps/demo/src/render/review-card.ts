import { answererText } from '@planmode/store'
import { diffPlans, type PlanDiffLine } from '@planmode/plan-projection/client'
import type { QuestionAnswerer, UserAnswer, UserQuestion } from '@planmode/seams'
import { describeHandoff, handoffChoices, handoffOffer } from '../terminal/handoff-choices.js'
import { fill } from './fill.js'
import { renderMarkdown, wrapWords } from './markdown.js'
import { printable, printableLine } from './printable.js'
import type { Style } from './style.js'

/** Where a card's lines go, and how they look. */
export interface CardOutput {
  line(text?: string): void
  readonly style: Style
  /** The terminal's width; no wrapping when absent. */
  readonly width: number | undefined
}

/**
 * The plan revision the person reviewed before the one now asked (the same
 * planning round: its review kept planning or was dismissed): the card then
 * shows what changed since it instead of the whole plan again.
 */
export interface EarlierRevision {
  /** The `rev` of the revision under review now. */
  readonly rev: number
  /** The earlier revision's `rev` and the plan the person saw then. */
  readonly earlier: { readonly rev: number; readonly plan: string }
}

/** Lines of unchanged plan kept around each change in a revision's card. */
const CONTEXT = 1

/** The short forms of the handoff approvals a review offers (`` `1 <model>`, `1 fresh` … for short ``), or `undefined`. */
function shortHandoffForms(question: UserQuestion): string | undefined {
  const offer = handoffOffer(question)
  const approve = (question.intent as { approve?: unknown } | undefined)?.approve
  const at = question.options.findIndex((option) => option.label === approve) + 1
  if (offer === undefined || at === 0) return undefined
  const forms: string[] = []
  if (offer.models.length > 0) forms.push(`\`${at} <model>\``)
  if (offer.fresh) forms.push(`\`${at} fresh\``)
  if (offer.fresh && offer.models.length > 0) forms.push(`\`${at} fresh <model>\``)
  return `${forms.join(', ')} for short`
}

/** The plan's lines, numbered so comments can name one (`c 3 text`), each wrapped at spaces to the width. */
function numberedRows(out: CardOutput, rows: readonly { mark: ' ' | '+' | '-'; at?: number; text: string }[], digits: number): void {
  const s = out.style
  const gutter = digits + 6
  for (const row of rows) {
    const number = row.at === undefined ? ' '.repeat(digits + 1) : String(row.at).padStart(digits + 1)
    const paint = row.mark === '+' ? s.green : row.mark === '-' ? s.red : (text: string) => text
    const parts = out.width === undefined ? [row.text] : wrapWords(row.text, Math.max(20, out.width - gutter))
    parts.forEach((part, at) => {
      const head = at === 0 ? `${row.mark === ' ' ? ' ' : row.mark}${number}` : ' '.repeat(digits + 2)
      out.line(`  ${row.mark === ' ' ? s.dim(head) : paint(head)}  ${row.mark === ' ' ? part : paint(part)}`)
    })
  }
}

/**
 * The changed lines of a revision with {@link CONTEXT} unchanged lines around
 * each change and `⋮` where lines are left out; numbered by the revision's
 * own lines (a removed line has no number). `undefined` when nothing changed.
 */
function changedRows(diff: readonly PlanDiffLine[]): { mark: ' ' | '+' | '-'; at?: number; text: string }[] | undefined {
  const changed = diff.map((line) => line.kind !== 'same')
  if (!changed.includes(true)) return undefined
  const near = (index: number): boolean => changed.slice(Math.max(0, index - CONTEXT), index + CONTEXT + 1).includes(true)
  const rows: { mark: ' ' | '+' | '-'; at?: number; text: string }[] = []
  let skipped = false
  diff.forEach((line, index) => {
    if (!near(index)) {
      skipped = true
      return
    }
    if (skipped && rows.length > 0) rows.push({ mark: ' ', text: '⋮' })
    skipped = false
    if (line.kind === 'added') rows.push({ mark: '+', at: line.after, text: line.line })
    else if (line.kind === 'removed') rows.push({ mark: '-', text: line.line })
    else rows.push({ mark: ' ', at: line.after, text: line.line })
  })
  if (skipped) rows.push({ mark: ' ', text: '⋮' })
  return rows
}

/**
 * Shows a question put to the person. A plan review shows the plan with
 * numbered lines and the options with what each does; a revision of a plan
 * reviewed in the same round shows only what changed since (`+`/`-` lines,
 * `/plans show N` prints it whole) and the options on one line. Every
 * logged string is printed with its control characters escaped.
 */
export function writeReviewCard(out: CardOutput, question: UserQuestion, revision?: EarlierRevision): void {
  const s = out.style
  const intent = question.intent as Record<string, unknown> | undefined
  const entering = intent?.kind === 'plan-enter'
  const commentable = intent?.kind === 'plan-review' && intent.comments === true
  const editable = intent?.kind === 'plan-review' && intent.editable === true
  const detail = question.detail === undefined ? undefined : printable(question.detail)
  const rows = detail === undefined ? [] : detail.split('\n')
  const digits = String(rows.length).length
  const diff = revision === undefined || detail === undefined ? undefined : diffPlans(printable(revision.earlier.plan), detail)
  const changed = diff === undefined ? undefined : changedRows(diff)
  const header = printableLine(question.header)
  out.line()
  if (changed !== undefined && revision !== undefined) {
    const added = diff!.filter((line) => line.kind === 'added').length
    const removed = diff!.filter((line) => line.kind === 'removed').length
    const what = `— what changed since #${revision.earlier.rev}: ${added} line${added === 1 ? '' : 's'} added, ${removed} removed (/plans show ${revision.rev} prints it whole)`
    const head = `┌ ${header}, revision ${revision.rev}`
    const columns = out.width ?? Number.POSITIVE_INFINITY
    fill(what, columns - head.length - 3, columns - 4).forEach((row, at) =>
      out.line(at === 0 ? `  ${s.bold(s.yellow(head))} ${s.dim(row)}` : `    ${s.dim(row)}`),
    )
    out.line()
    numberedRows(out, changed, digits)
    out.line()
  } else {
    out.line(`  ${s.bold(s.yellow(`┌ ${header}`))}`)
    if (detail !== undefined) {
      out.line()
      if (commentable)
        numberedRows(
          out,
          rows.map((text, index) => ({ mark: ' ', at: index + 1, text })),
          digits,
        )
      else out.line(renderMarkdown(detail, s, '    ', out.width))
      out.line()
    }
  }
  // On a terminal the rows wrap at spaces, continued under their text.
  const columns = out.width ?? Number.POSITIVE_INFINITY
  const bar = `  ${s.yellow('│')} `
  fill(printableLine(question.question), columns - 4, columns - 4).forEach((row) => out.line(`${bar}${row}`))
  // The approvals that hand the plan on (SPEC §18), numbered after the options: the terminal's, not the question's.
  const choices = [...question.options, ...handoffChoices(question)].map((option) => ({
    label: printableLine(option.label),
    description: printableLine(option.description),
  }))
  const short = shortHandoffForms(question)
  if (changed !== undefined) {
    // A revision: the options on a line, the ways to answer on another.
    fill(choices.map((choice, index) => `${index + 1} ${choice.label}`).join(' · '), columns - 4, columns - 4).forEach((row) =>
      out.line(`${bar}${s.bold(row)}`),
    )
    const ways = [
      'yes approves',
      'other text is feedback',
      commentable ? '`c <line> <text>` comments' : undefined,
      editable ? '`e` edits' : undefined,
      short,
      'a /command dismisses',
    ]
    fill(ways.filter((way) => way !== undefined).join(' · '), columns - 4, columns - 4).forEach((row, at) =>
      out.line(`  ${at === 0 ? s.yellow('└') : ' '} ${s.dim(row)}`),
    )
    return
  }
  choices.forEach((choice, index) => {
    const head = `${index + 1}. ${choice.label}`
    const lines = fill(`— ${choice.description}`, columns - 7 - head.length, columns - 9)
    out.line(`${bar}  ${s.bold(head)} ${s.dim(lines[0]!)}`)
    for (const row of lines.slice(1)) out.line(`${bar}     ${s.dim(row)}`)
  })
  const decline = question.options.findIndex((option) => option.label !== intent?.approve) + 1
  const hint = entering
    ? `answer with a number or a label (yes agrees, no declines)${decline > 0 ? `; ${decline}: <note> declines with a note for the agent` : ''}; a /command dismisses`
    : 'answer with a number or a label (yes approves); other text is feedback (keep planning); a /command dismisses'
  fill(hint, columns - 4, columns - 4).forEach((row, at) => out.line(`  ${at === 0 ? s.yellow('└') : ' '} ${s.dim(row)}`))
  const extras = [
    editable ? '`e` edits the plan (Approve then sends your version)' : undefined,
    commentable ? '`c <line> <text>` comments on a line' : undefined,
    short,
  ].filter((text) => text !== undefined)
  if (extras.length > 0) fill(extras.join('; '), columns - 4, columns - 4).forEach((row) => out.line(`    ${s.dim(row)}`))
}

/**
 * Echoes the answers given to a review (`reviewer › …`), or to the
 * plan-mode entry question (`you › …`: it asks whether to plan, it
 * reviews nothing), found by the answer's question in `questions`. With
 * `elsewhere`, the answer came from another process or server (an answer
 * inbox), and a line names who answered.
 */
export function writeAnswers(
  out: CardOutput,
  answers: readonly UserAnswer[],
  questions: readonly UserQuestion[] = [],
  elsewhere?: { readonly by: QuestionAnswerer | undefined },
): void {
  const s = out.style
  for (const answer of answers) {
    const entering = questions.find((question) => question.id === answer.id)?.intent?.kind === 'plan-enter'
    const chosen = answer.selected.map(printableLine).join(', ')
    const custom = answer.custom === undefined ? '' : `${chosen === '' ? '' : ': '}“${printable(answer.custom)}”`
    out.line(`  ${s.yellow(entering ? 'you ›' : 'reviewer ›')} ${chosen}${custom}`)
    if (elsewhere !== undefined) {
      const who =
        elsewhere.by === undefined
          ? 'from another process (no name given)'
          : `by ${printableLine(answererText(elsewhere.by))}, from another process`
      out.line(`    ${s.dim(`answered ${who}`)}`)
    }
    if (answer.handoff !== undefined && (answer.handoff.fresh === true || answer.handoff.model !== undefined))
      out.line(`    ${s.dim(printableLine(describeHandoff(answer.handoff)))}`)
    if (answer.edit !== undefined) out.line(`    ${s.dim(`with an edited plan (${answer.edit.split('\n').length} lines)`)}`)
    for (const comment of answer.comments ?? []) out.line(`    ${s.dim(`line ${comment.line}: ${printable(comment.text)}`)}`)
  }
}
