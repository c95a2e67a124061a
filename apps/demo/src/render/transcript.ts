import {
  isInterruptedTurnEnd,
  type CommandResult,
  type RequestHeader,
  type SessionEvent,
  type ToolPresentation,
  type UserAnswer,
  type UserQuestion,
} from '@planmode/seams'
import { fill } from './fill.js'
import { renderMarkdown } from './markdown.js'
import { printable, printableData, printableLine } from './printable.js'
import { handoffMessageLine, progressMessageLine, refusedUpdateLine, updatePlanCallTitle, updatePlanResultLine } from './progress-lines.js'
import { writeAnswers, writeReviewCard, type CardOutput, type EarlierRevision } from './review-card.js'
import type { Style } from './style.js'

/** The plan badge shown on every prompt line, from the `plan` projection. */
export type PlanBadge = 'on' | 'off' | 'pending-on' | 'pending-off'

/** The badge for a `plan` projection value (`{ active, pending }`). */
export function badgeOf(view: { readonly active: boolean; readonly pending: boolean } | undefined): PlanBadge {
  if (view === undefined) return 'off'
  if (view.pending) return view.active ? 'pending-off' : 'pending-on'
  return view.active ? 'on' : 'off'
}

/**
 * What the prompt line shows beside the badge: the tracked plan's progress
 * (SPEC §17, `plan 2/5`) and the model the next steps use when a handoff
 * (SPEC §18) chose one (`model fast`).
 */
export interface PromptStatus {
  readonly progress?: { readonly done: number; readonly total: number }
  readonly model?: string
}

/** Where the transcript goes. */
export interface TranscriptOutput {
  write(chunk: string): unknown
}

/** Options of {@link TranscriptRenderer}. */
export interface TranscriptOptions {
  readonly out: TranscriptOutput
  readonly style: Style
  /** The plan-policy section, to say when a request gains or loses it. */
  readonly planSection?: string
  /** How a tool call is titled (the tool's `presentCall`), when the host knows the tool. */
  readonly present?: (toolName: string, input: unknown) => ToolPresentation | undefined
  /** Wrap plans to this many columns (a TTY's width); no wrapping when absent. */
  readonly width?: number
  /** Assistant text arrives through {@link TranscriptRenderer.stream} as it is generated (a TTY), not with the logged message. */
  readonly live?: boolean
  /** Where plan-policy puts the guidance (SPEC §13): request headers are described accordingly. Default `system`. */
  readonly placement?: 'system' | 'transcript'
  /**
   * Whose transcript this is: the agent's own (default), or a helper agent's
   * (a child the `explore` tool started), shown under the parent's call with
   * every line behind {@link HELPER_GUTTER}, its words as `helper`, its
   * question as `asked`, and `planSection` naming the child guidance.
   */
  readonly role?: 'agent' | 'helper'
}

/** What every line of a helper agent's transcript starts with: it sits under the parent's `explore` call. */
export const HELPER_GUTTER = '    ┆ '

const EXIT = 'exit_plan_mode'
const ENTER = 'enter_plan_mode'
const UPDATE_PLAN = 'update_plan'
/** Streamed assistant text continues under its first word (`  assistant ` is 12 columns). */
const STREAM_INDENT = ' '.repeat(12)

/** The first line of `text`, cut at a space to at most `max` columns (then `…`). */
function clipWords(text: string, max: number): string {
  const line = text.trim().split('\n')[0]!
  if (line.length <= max) return line
  const cut = line.slice(0, max).replace(/\s+\S*$/, '')
  return `${cut === '' ? line.slice(0, max - 1) : cut} …`
}

/** The tool list of a request header, comparable as a string. */
const toolsKey = (tools: RequestHeader['tools']): string => JSON.stringify(tools)

function oneLine(text: string, max = 110): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? ''
  const more = text.trim().includes('\n') ? ' …' : ''
  return line.length > max ? `${line.slice(0, max - 1)}…` : line + more
}

/** Renders a session as a readable transcript: prompts, notices, tool calls, plans and reviews. */
export class TranscriptRenderer {
  private readonly out: TranscriptOutput
  private readonly style: Style
  private readonly section: string | undefined
  private readonly present: TranscriptOptions['present']
  private readonly calls = new Map<string, { name: string; input: unknown }>()
  /** The open asks of the session (`question/asked` by id), to label an answer that arrives from elsewhere. */
  private readonly asked = new Map<string, readonly UserQuestion[]>()
  /** The last request header, to say what the next one changed. */
  private lastHeader: RequestHeader | undefined
  private lastPrompt = ''
  /** Lines typed recently (a steered message is logged only when a step takes it). */
  private readonly recentlyTyped: string[] = []
  private readonly live: boolean
  private readonly width: number | undefined
  private readonly placement: 'system' | 'transcript'
  private readonly options: TranscriptOptions
  private readonly indent: string
  private readonly speaker: string
  /** How the guidance is named: the plan section, or (for a helper) the child section. */
  private readonly sectionName: string
  private streaming = false
  /** The column the streamed text has reached, and a word not written yet (it may go on in the next part). */
  private column = 0
  private held = ''

  constructor(options: TranscriptOptions) {
    this.out = options.out
    this.style = options.style
    this.section = options.planSection?.trim()
    this.present = options.present
    this.live = options.live === true
    this.width = options.width
    this.placement = options.placement ?? 'system'
    this.options = options
    const helper = options.role === 'helper'
    this.indent = helper ? HELPER_GUTTER : ''
    this.speaker = helper ? 'helper' : 'assistant'
    this.sectionName = helper ? 'child section' : 'plan section'
  }

  /**
   * A renderer for the transcript of a helper agent (a child session the
   * `explore` tool started) under this one's `explore` call: the same
   * output, style and tool titles, every line behind {@link HELPER_GUTTER},
   * `childSection` as the guidance it reads (SPEC §21). Prints the helper's
   * first line.
   */
  helper(sessionId: string, childSection: string): TranscriptRenderer {
    const width = this.width === undefined ? undefined : Math.max(40, this.width - [...HELPER_GUTTER].length)
    const helper = new TranscriptRenderer({
      ...this.options,
      planSection: childSection,
      role: 'helper',
      live: false,
      ...(width === undefined ? {} : { width }),
    })
    helper.line(this.style.dim(`helper agent, a child of this one (session ${sessionId})`))
    return helper
  }

  /**
   * Shows a model stream part as it arrives (text only), when the renderer
   * is live. With a width, the text is wrapped at spaces, each row indented
   * under the first.
   */
  stream(part: { readonly type: string; readonly delta?: string }): void {
    if (!this.live) return
    if (part.type === 'text-delta' && part.delta !== undefined && part.delta !== '') {
      if (!this.streaming) {
        this.streaming = true
        this.out.write(`  ${this.style.bold(this.style.green('assistant'))} `)
        this.column = STREAM_INDENT.length
        this.held = ''
      }
      this.streamText(printable(part.delta), false)
    } else if ((part.type === 'text-end' || part.type === 'finish' || part.type === 'tool-input-start') && this.streaming) {
      this.streamText('', true)
      this.streaming = false
      this.out.write('\n')
    }
  }

  private streamText(delta: string, end: boolean): void {
    if (this.width === undefined) {
      this.out.write(delta.replace(/\n/g, `\n${STREAM_INDENT}`))
      return
    }
    const tokens = `${this.held}${delta}`.split(/(\s+)/)
    // A word at the end may continue in the next delta: hold it back, unless the text ends here.
    this.held = end ? '' : (tokens.pop() ?? '')
    let text = ''
    for (const token of tokens) {
      if (token === '') continue
      if (/^\s/.test(token)) {
        if (token.includes('\n')) {
          text += `\n${STREAM_INDENT}`.repeat(token.split('\n').length - 1)
          this.column = STREAM_INDENT.length
        } else if (this.column > STREAM_INDENT.length && this.column + token.length < this.width) {
          text += token
          this.column += token.length
        }
        continue
      }
      if (this.column > STREAM_INDENT.length && this.column + [...token].length > this.width) {
        text = `${text.trimEnd()}\n${STREAM_INDENT}`
        this.column = STREAM_INDENT.length
      }
      text += token
      this.column += [...token].length
    }
    if (text !== '') this.out.write(text)
  }

  private line(text = ''): void {
    this.out.write(this.indent === '' ? `${text}\n` : `${this.style.dim(this.indent)}${text}\n`)
  }

  /** The badge as printed, e.g. `[plan: on]`. */
  badge(badge: PlanBadge): string {
    const s = this.style
    switch (badge) {
      case 'on':
        return s.bold(s.magenta('[plan: on]'))
      case 'off':
        return s.dim('[plan: off]')
      case 'pending-on':
        return s.yellow('[plan: pending → on]')
      case 'pending-off':
        return s.yellow('[plan: pending → off]')
    }
  }

  /** The prompt text for readline: badge, then the progress and model of `status` when there are any, and the chevron. */
  promptText(badge: PlanBadge, status: PromptStatus = {}): string {
    const s = this.style
    const extra = [
      status.progress === undefined ? undefined : s.cyan(`plan ${status.progress.done}/${status.progress.total}`),
      status.model === undefined ? undefined : s.dim(`model ${status.model}`),
    ].filter((part) => part !== undefined)
    return `${this.badge(badge)} ${extra.length === 0 ? '' : `${extra.join(s.dim(' · '))} `}${s.bold('›')} `
  }

  /** Echoes a line the user typed (or the script sent), with the badge (and status) it was typed under. */
  prompt(badge: PlanBadge, text: string, status: PromptStatus = {}): void {
    this.line()
    this.line(`${this.promptText(badge, status)}${printableLine(text)}`)
    this.typed(text)
  }

  /** Remembers a typed line, so the user message it becomes is not printed twice. */
  typed(text: string): void {
    this.lastPrompt = text
    this.recentlyTyped.push(text.trim())
    if (this.recentlyTyped.length > 20) this.recentlyTyped.shift()
  }

  /** A slash command's reply (shown to the user only, never to the model). */
  commandResult(result: CommandResult | undefined, line: string): void {
    if (result === undefined) {
      this.line(`  ${this.style.red('✗')} unknown command ${printableLine(line.split(/\s/)[0]!)}; /help lists them`)
      return
    }
    const mark = result.kind === 'success' ? this.style.green('↳') : this.style.red('✗')
    this.hanging(`  ${mark} `, 4, printable(result.text))
  }

  /** A stage title of the scripted showcase. */
  stage(title: string): void {
    this.line()
    this.line(this.style.bold(this.style.blue(`── ${title} ──`)))
  }

  /** A line from the host itself (not the model, not the log). Not wrapped: it may hold a path or a command to copy. */
  info(text: string): void {
    this.line(`  ${this.style.dim(text)}`)
  }

  /** A hint from the host, dimmed; on a terminal wrapped at spaces. */
  hint(text: string): void {
    this.wrapped(text, 4).forEach((row, at) => this.line(`  ${at === 0 ? '' : '  '}${this.style.dim(row)}`))
  }

  /** Something that ended (a turn, the review it held), as a turn's end is shown; on a terminal wrapped at spaces. */
  ended(text: string): void {
    this.hanging(`  ${this.style.yellow('■')} `, 4, text)
  }

  /** A warning or error from the host (control characters escaped: it may quote a logged string); on a terminal wrapped at spaces, continued under its text. */
  warn(text: string): void {
    this.wrapped(printable(text), 4).forEach((row, at) => this.line(at === 0 ? `  ${this.style.yellow('!')} ${row}` : `    ${row}`))
  }

  /**
   * `head` (`width` columns as shown) then `text`; on a terminal filled at
   * spaces, the rows after the first indented by 4.
   */
  private hanging(head: string, width: number, text: string): void {
    if (this.width === undefined) {
      this.line(`${head}${text}`)
      return
    }
    fill(text, this.width - width, this.width - 4).forEach((row, at) => this.line(at === 0 ? `${head}${row}` : `    ${row}`))
  }

  /** `text`'s lines, each filled at spaces to the width less `indent` (unchanged without a width). */
  private wrapped(text: string, indent: number): string[] {
    if (this.width === undefined) return text.split('\n')
    const columns = this.width - indent
    return text.split('\n').flatMap((line) => fill(line, columns, columns))
  }

  /** Renders one appended session event; every string of its data is printed with its control characters escaped. */
  event(logged: SessionEvent): void {
    const s = this.style
    const event = { ...logged, data: printableData(logged.data) } as SessionEvent
    switch (event.type) {
      case 'question/asked':
        this.asked.set(event.data.questionId, event.data.question)
        return
      case 'question/settled': {
        // An answer another process or server sent (an answer inbox): this terminal did not echo it, so say it and who gave it.
        const questions = this.asked.get(event.data.questionId)
        this.asked.delete(event.data.questionId)
        if (event.data.outcome === 'answered' && event.data.submission !== undefined) {
          writeAnswers(this.card, event.data.answer ?? [], questions, {
            by: event.data.by ?? event.data.answer?.find((answer) => answer.by !== undefined)?.by,
          })
        }
        return
      }
      case 'user/message': {
        const source = event.data.source
        const text = event.data.content
          .map((block) => (block.type === 'text' ? block.text : `[image ${block.attachment.name ?? block.attachment.id}]`))
          .join(' ')
        if (source.kind === 'plugin' && source.form === 'notice')
          this.hanging(`  ${s.cyan('ⓘ notice')} ${s.dim('(to the model)')} `, '  ⓘ notice (to the model) '.length, text)
        else if (source.kind === 'plugin' && source.form === 'guidance') {
          const lines = text.trimEnd().split('\n').length
          this.hanging(
            `  ${s.cyan('ⓘ guidance')} ${s.dim('(to the model)')} `,
            '  ⓘ guidance (to the model) '.length,
            `the ${this.sectionName} as a transcript message (${lines} line${lines === 1 ? '' : 's'})`,
          )
        }
        // SPEC §24: coming back to plan mode with a section already logged costs one line.
        else if (source.kind === 'plugin' && source.form === 'guidance-again') {
          this.hanging(
            `  ${s.cyan('ⓘ guidance')} ${s.dim('(to the model)')} `,
            '  ⓘ guidance (to the model) '.length,
            `one line pointing back to the ${this.sectionName} sent earlier: “${text}”`,
          )
        } else if (source.kind === 'plugin' && source.form === 'handoff')
          this.hanging(
            `  ${s.cyan('ⓘ handoff')} ${s.dim('(to the model)')} `,
            '  ⓘ handoff (to the model) '.length,
            handoffMessageLine(text),
          )
        else if (source.kind === 'plugin' && source.form === 'progress')
          this.hanging(
            `  ${s.cyan('ⓘ progress')} ${s.dim('(to the model)')} `,
            '  ⓘ progress (to the model) '.length,
            progressMessageLine(event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')),
          )
        else if (source.kind === 'plugin') this.line(`  ${s.cyan(`ⓘ ${source.plugin}`)} ${text}`)
        else if (this.options.role === 'helper') this.line(`  ${s.dim('asked →')} ${oneLine(text)}`)
        else {
          const typedAt = this.recentlyTyped.indexOf(text.trim())
          if (typedAt >= 0) this.recentlyTyped.splice(typedAt, 1)
          else if (text.trim() === '' || !this.lastPrompt.includes(text.trim())) this.line(`  ${s.dim('user message →')} ${oneLine(text)}`)
        }
        return
      }
      case 'assistant/message': {
        for (const block of event.data.content) {
          if (block.type === 'text' && block.text.trim() !== '') {
            if (!this.live) this.assistantText(block.text)
          } else if (block.type === 'tool-call') this.toolCall(block.toolCallId, block.toolName, block.input)
        }
        return
      }
      case 'tool/result': {
        const text = event.data.content.map((block) => block.text).join('\n')
        if (event.data.toolName === EXIT || event.data.toolName === ENTER) {
          if (!event.data.isError) this.resultLine(s.green('✓'), oneLine(text, 160))
          else if (text.startsWith('Error: The plan is not ready for review:')) {
            // SPEC §20: the checks sent the plan back before any review; each problem is shown.
            this.resultLine(
              s.yellow('↺'),
              text
                .replace(/^Error: /, '')
                .replace(/:\n- /, ': ')
                .replace(/\n- /g, '; '),
            )
          } else this.resultLine(s.yellow('↺'), oneLine(text.replace(/^Error: /, ''), 160))
          return
        }
        if (event.data.toolName === UPDATE_PLAN && !event.data.isError) {
          this.line(`    ${s.dim(`← ${updatePlanResultLine(text)}`)}`)
          return
        }
        // A completion the host's checks refused (SPEC §25): the step and every problem, whole.
        const refused = event.data.toolName === UPDATE_PLAN ? refusedUpdateLine(text) : undefined
        if (refused !== undefined) {
          this.resultLine(s.red('✗'), refused)
          return
        }
        // A refusal (plan-guard's, a path outside the workspace) is shown whole.
        if (event.data.isError) this.resultLine(s.red('✗'), oneLine(text, 240))
        else {
          const lines = text === '' ? 0 : text.split('\n').length
          this.line(`    ${s.dim(`← ${lines === 1 ? oneLine(text) : `${lines} lines`}`)}`)
        }
        return
      }
      case 'turn/end':
        // Both forms of an interrupted turn (reason interrupted, and the error text of older logs) read the same.
        if (isInterruptedTurnEnd(event.data))
          this.ended(`turn ${event.data.turn} ended: interrupted (the process running it ended before the turn did)`)
        else if (event.data.reason !== 'completed') {
          this.line(
            `  ${s.yellow('■')} turn ${event.data.turn} ended: ${event.data.reason}${event.data.error === undefined ? '' : ` (${event.data.error})`}`,
          )
        }
        return
      case 'request/header': {
        const header = event.data
        const previous = this.lastHeader
        this.lastHeader = header
        const has = this.hasSection(header)
        const say = (text: string): void => this.line(`  ${s.dim(`· request header: ${text}`)}`)
        if (header.reason === 'initial') {
          // A fresh session of a handoff (SPEC §18) may start on another model than the session shown before it.
          const model = previous !== undefined && previous.model !== header.model ? `; model ${header.model}` : ''
          // Under 'transcript' the plan section never joins the system prompt: the request stays the same across switches.
          if (has) say(`the system prompt includes the ${this.sectionName}${model}`)
          else if (this.placement === 'transcript') say(`system prompt and tools fixed (plan guidance goes in the transcript)${model}`)
          else if (model !== '') say(`first of this session${model}`)
          return
        }
        if (previous === undefined) {
          say(`changed${has ? ` (the system prompt includes the ${this.sectionName})` : ''}`)
          return
        }
        const changes: string[] = []
        if (this.hasSection(previous) !== has) changes.push(`${this.sectionName} ${has ? 'added to' : 'removed from'} the system prompt`)
        else if (header.system !== previous.system) changes.push('system prompt changed')
        if (toolsKey(header.tools) !== toolsKey(previous.tools)) changes.push('tools changed')
        if (header.model !== previous.model) changes.push(`model changed (${header.model})`)
        say(changes.length === 0 ? 'changed' : changes.join('; '))
        return
      }
      default:
        if ((event.type as string) === 'plan/handoff') {
          // The first event of a session that carries out a plan approved in another one (SPEC §18).
          const data = event.data as { from?: { session?: unknown }; title?: unknown; model?: unknown }
          const model = typeof data.model === 'string' ? `, model ${data.model}` : ''
          this.line(
            `  ${s.magenta('●')} ${s.dim(`plan/handoff logged: “${String(data.title)}” from session ${String(data.from?.session)}${model}`)}`,
          )
        }
        if ((event.type as string) === 'plan/mode') {
          const active = (event.data as { active?: unknown }).active === true
          // A child's plan mode inherited from the agent that started it (SPEC §21).
          const inherited = (event.data as { cause?: unknown }).cause === 'inherit' ? ' (inherited from the agent that started it)' : ''
          this.line(`  ${s.magenta('●')} ${s.dim(`plan/mode logged: ${active ? 'on' : 'off'}${inherited}`)}`)
        }
    }
  }

  /** Whether a request's system prompt carries the plan section. */
  private hasSection(header: RequestHeader): boolean {
    return this.section !== undefined && this.section !== '' && header.system.includes(this.section)
  }

  /**
   * Takes a logged event as already shown, without printing it: a resumed
   * session's last request header, so the next header is described by what
   * it changes.
   */
  known(event: SessionEvent): void {
    if (event.type === 'request/header') this.lastHeader = event.data
  }

  /** A tool result's line; on a terminal wrapped at spaces, continued under its text. */
  private resultLine(mark: string, text: string): void {
    const columns = this.width ?? Number.POSITIVE_INFINITY
    fill(text, columns - 6, columns - 6).forEach((row, at) => this.line(`    ${at === 0 ? mark : ' '} ${row}`))
  }

  private assistantText(text: string): void {
    const s = this.style
    const [first, ...rest] = text.trim().split('\n')
    this.line(`  ${s.bold(s.green(this.speaker))} ${first}`)
    const under = ' '.repeat(this.speaker.length + 3)
    for (const line of rest) this.line(line.trim() === '' ? '' : `${under}${line}`)
  }

  private toolCall(id: string, name: string, input: unknown): void {
    this.calls.set(id, { name, input })
    const s = this.style
    if (name === EXIT) {
      const plan = (input as { plan?: unknown }).plan
      const title = typeof plan === 'string' ? (/^#{1,6}\s+(.*)$/m.exec(plan)?.[1] ?? 'Plan') : 'Plan'
      this.line(`  ${s.magenta('→')} ${s.bold(EXIT)} ${s.dim(`“${title}”`)}`)
      return
    }
    if (name === ENTER) {
      const reason = (input as { reason?: unknown } | undefined)?.reason
      if (typeof reason !== 'string' || reason.trim() === '') {
        this.line(`  ${s.magenta('→')} ${s.bold(ENTER)}`)
        return
      }
      // The question shows the whole reason; the call line names its start, wrapped at spaces on a terminal, continued under it.
      const columns = this.width ?? Number.POSITIVE_INFINITY
      const head = `  → ${ENTER} `
      fill(`“${clipWords(reason, 60)}”`, columns - head.length, columns - head.length).forEach((row, at) =>
        this.line(at === 0 ? `  ${s.magenta('→')} ${s.bold(ENTER)} ${s.dim(row)}` : `${' '.repeat(head.length)}${s.dim(row)}`),
      )
      return
    }
    const presented = this.present?.(name, input)
    const title = presented?.title ?? (name === UPDATE_PLAN ? updatePlanCallTitle(input) : undefined) ?? `${name} ${JSON.stringify(input)}`
    this.line(`  ${s.blue('→')} ${title}`)
  }

  /** How the review cards write: this renderer's lines, style and width. */
  private get card(): CardOutput {
    return { line: (text?: string) => this.line(text), style: this.style, width: this.width }
  }

  /**
   * Shows the questions put to the person (see {@link writeReviewCard}); with
   * `revision`, a plan review shows what changed since the revision the
   * person reviewed before.
   */
  review(questions: readonly UserQuestion[], revision?: EarlierRevision): void {
    for (const question of questions) writeReviewCard(this.card, question, revision)
  }

  /** Echoes the answers the person gave here (see {@link writeAnswers}). */
  answer(answers: readonly UserAnswer[], questions: readonly UserQuestion[] = []): void {
    writeAnswers(this.card, answers, questions)
  }

  /** A multi-line help or summary block. */
  block(text: string): void {
    for (const line of text.split('\n')) this.line(`  ${line}`)
  }

  /** Markdown for the user (e.g. a plan recovered from the log). */
  markdown(text: string): void {
    this.line(renderMarkdown(text, this.style, '    ', this.width))
  }
}
