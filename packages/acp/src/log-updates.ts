import type { PlanEntry, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk'
import { planTitle } from '@planmode/plan-core'
import {
  initialPlanProgress,
  planSteps,
  stepPlanProgress,
  viewPlanProgress,
  type PlanProgressState,
  type PlanProgressStep,
} from '@planmode/plan-progress'
import { ENTER_PLAN_MODE, EXIT_PLAN_MODE, type PlanReviewEventData } from '@planmode/plan-tool'
import type { QuestionAnswerer, QuestionSettled, SessionEvent, UserQuestion } from '@planmode/seams'
import type {} from './acp-events.js'
import { configOptions, modeIdOf } from './modes.js'
import type { ToolLook } from './tool-kinds.js'

/** A tool call the log holds: what the client was shown, and whether its result arrived. */
interface LoggedCall {
  readonly name: string
  readonly input: unknown
  done: boolean
}

/** The plan entries of a plan under review: one pending entry per step, or one with the plan's title when it has none. */
export function reviewEntries(plan: string): PlanEntry[] {
  const steps = planSteps(plan)
  if (steps.length === 0) return [{ content: planTitle(plan), priority: 'medium', status: 'pending' }]
  return steps.map((step) => ({ content: step.text, priority: 'medium', status: 'pending' }))
}

/** The plan entries of a tracked plan (SPEC §23): `done` and `skipped` are `completed`. */
function progressEntries(steps: readonly PlanProgressStep[]): PlanEntry[] {
  return steps.map((step) => ({
    content: step.text,
    priority: 'medium',
    status: step.status === 'done' || step.status === 'skipped' ? 'completed' : step.status,
  }))
}

const text = (value: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text: value } })

/** `by Ada (ada)`, `by ada`, or nothing; `from another process` when a submission carried the answer. */
function answeredBy(by: QuestionAnswerer | undefined, settled: QuestionSettled | undefined): string {
  const who = by ?? settled?.by
  const name = who === undefined ? '' : ` by ${who.name !== undefined && who.name !== who.id ? `${who.name} (${who.id})` : who.id}`
  return settled?.submission !== undefined ? `${name} (answered from another process)` : name
}

/** What a review's tool call says once the person decided: the decision, who decided, the feedback. */
export function reviewText(record: PlanReviewEventData, settled: QuestionSettled | undefined): string {
  const by = answeredBy(record.by, settled)
  const lines: string[] = []
  switch (record.outcome) {
    case 'approved': {
      const handoff = record.handoff
      const how = handoff?.fresh === true ? ' into a fresh session' : handoff?.model !== undefined ? ` with ${handoff.model}` : ''
      lines.push(`Approved${how}${by}.${record.unattended === true ? ' (unattended: nobody was asked)' : ''}`)
      if (record.plan !== undefined) lines.push('', 'The approved version:', '', record.plan)
      break
    }
    case 'keep-planning':
      lines.push(`Keep planning${by}.`)
      break
    case 'stopped':
      lines.push(`Planning stopped without approval${by}.`)
      break
    case 'dismissed':
      lines.push(`Review dismissed${by}: the agent stays in plan mode and waits for your message.`)
      break
  }
  if (record.feedback !== undefined) lines.push(`Feedback: ${record.feedback}`)
  for (const comment of record.comments ?? []) lines.push(`- line ${comment.line}: ${comment.text}`)
  return lines.join('\n')
}

/** The intent kind of an ask's first question, if any. */
function intentOf(questions: readonly UserQuestion[]): string | undefined {
  return questions[0]?.intent?.kind
}

/**
 * Turns a session's log, event by event, into the `session/update`s a
 * client sees: the same fold serves the live feed and a `session/load`
 * replay, so a replay is what a client attached from the start was sent
 * (less what only happens live: a call's `in_progress`, the permission
 * requests themselves).
 *
 * - what the person typed (`user/message` from the user, `command/run`) is
 *   a user message; a command's reply (`command/done`'s text) and the
 *   model's text are agent messages, its reasoning agent thoughts;
 * - each tool call is a `tool_call` (`pending`), its `tool/result` a
 *   `tool_call_update` (`completed` or `failed`); a review's call is
 *   `completed` for every outcome a person chose, its content the decision;
 * - every `plan/mode` is a `current_mode_update` and a `config_option_update`;
 * - a plan under review (its `question/asked`) and every change of the
 *   tracked plan (plan-progress's fold) is a `plan`.
 */
export class LogUpdates {
  private readonly calls = new Map<string, LoggedCall>()
  /** questionId → the tool call that asked it. */
  private readonly asked = new Map<string, string>()
  /** toolCallId → how its question was settled. */
  private readonly settlements = new Map<string, QuestionSettled>()
  private readonly reviews = new Map<string, PlanReviewEventData>()
  private progress: PlanProgressState = initialPlanProgress()
  private sentPlan: string | undefined
  private tracking = false
  private active = false

  constructor(private readonly look: (name: string, input: unknown) => ToolLook) {}

  /** The logged plan state as of the last event folded. */
  get mode(): boolean {
    return this.active
  }

  /** The tool call that asked question `questionId`, once its `question/asked` was folded. */
  callOf(questionId: string): string | undefined {
    return this.asked.get(questionId)
  }

  /** The latest tool call whose result is not logged yet. */
  openCall(): string | undefined {
    return [...this.calls].reverse().find(([, call]) => !call.done)?.[0]
  }

  /** The updates of every event of `events`, in order. */
  all(events: readonly SessionEvent[]): SessionUpdate[] {
    return events.flatMap((event) => this.next(event))
  }

  /** The updates `event` means for a client, and folds it. */
  next(event: SessionEvent): SessionUpdate[] {
    const updates = this.updatesOf(event)
    const progressed = stepPlanProgress(this.progress, event)
    if (progressed !== this.progress) {
      this.progress = progressed
      const view = viewPlanProgress(progressed)
      const entries =
        view.plan === null
          ? []
          : view.steps.length === 0
            ? [{ content: view.plan.title, priority: 'medium' as const, status: 'pending' as const }]
            : progressEntries(view.steps)
      // A tracked plan that ends (plan mode entered again) clears the client's plan; no tracked plan leaves the one under review.
      if (view.plan !== null || this.tracking) this.plan(entries, updates)
      this.tracking = view.plan !== null
    }
    return updates
  }

  private plan(entries: PlanEntry[], updates: SessionUpdate[]): void {
    const key = JSON.stringify(entries)
    if (key === this.sentPlan) return
    this.sentPlan = key
    updates.push({ sessionUpdate: 'plan', entries })
  }

  private updatesOf(event: SessionEvent): SessionUpdate[] {
    const messageId = (prefix: string): string => `${prefix}${event.seq}`
    switch (event.type) {
      case 'user/message': {
        if (event.data.source.kind !== 'user') return []
        const id = messageId('u')
        return event.data.content.map((block): SessionUpdate =>
          block.type === 'text'
            ? { sessionUpdate: 'user_message_chunk', messageId: id, content: { type: 'text', text: block.text } }
            : {
                sessionUpdate: 'user_message_chunk',
                messageId: id,
                content: { type: 'image', data: block.attachment.data, mimeType: block.attachment.mediaType },
              },
        )
      }
      case 'command/run':
        if (event.data.source.kind !== 'user') return []
        return [
          {
            sessionUpdate: 'user_message_chunk',
            messageId: messageId('c'),
            content: { type: 'text', text: `/${event.data.name}${event.data.args}` },
          },
        ]
      case 'command/done':
        if (event.data.text === undefined || event.data.text === '') return []
        return [{ sessionUpdate: 'agent_message_chunk', messageId: messageId('r'), content: { type: 'text', text: event.data.text } }]
      case 'assistant/message': {
        const id = messageId('a')
        const updates: SessionUpdate[] = []
        for (const block of event.data.content) {
          if (block.type === 'text' && block.text !== '')
            updates.push({ sessionUpdate: 'agent_message_chunk', messageId: id, content: { type: 'text', text: block.text } })
          else if (block.type === 'reasoning' && block.text !== '')
            updates.push({ sessionUpdate: 'agent_thought_chunk', messageId: id, content: { type: 'text', text: block.text } })
          else if (block.type === 'tool-call') {
            this.calls.set(block.toolCallId, { name: block.toolName, input: block.input, done: false })
            const look = this.look(block.toolName, block.input)
            updates.push({
              sessionUpdate: 'tool_call',
              toolCallId: block.toolCallId,
              title: look.title,
              kind: look.kind,
              status: 'pending',
              rawInput: block.input,
            })
          }
        }
        return updates
      }
      case 'question/asked': {
        const kind = intentOf(event.data.question)
        const tool = kind === 'plan-review' ? EXIT_PLAN_MODE : kind === 'plan-enter' ? ENTER_PLAN_MODE : undefined
        const call = [...this.calls].reverse().find(([, logged]) => !logged.done && (tool === undefined || logged.name === tool))
        if (call !== undefined) this.asked.set(event.data.questionId, call[0])
        const plan = kind === 'plan-review' ? event.data.question[0]?.detail : undefined
        const updates: SessionUpdate[] = []
        if (plan !== undefined) this.plan(reviewEntries(plan), updates)
        return updates
      }
      case 'question/settled': {
        const call = this.asked.get(event.data.questionId)
        if (call !== undefined) this.settlements.set(call, event.data)
        return []
      }
      case 'plan/review':
        this.reviews.set(event.data.toolCallId, event.data)
        return []
      case 'tool/result':
        return [this.result(event)]
      case 'plan/mode':
        this.active = event.data.active
        return [
          { sessionUpdate: 'current_mode_update', currentModeId: modeIdOf(event.data.active) },
          { sessionUpdate: 'config_option_update', configOptions: configOptions(event.data.active) },
        ]
      case 'acp/fresh-session':
        return [
          {
            sessionUpdate: 'agent_message_chunk',
            messageId: messageId('h'),
            content: {
              type: 'text',
              text: `The approved plan is carried out in a fresh session: ${event.data.session}. Load that session to follow it; this one stops here.`,
            },
          },
        ]
      case 'turn/end': {
        // A call the turn left without a result (cancelled, interrupted, failed) is over for the client too.
        const unfinished: SessionUpdate[] = []
        for (const [toolCallId, call] of this.calls) {
          if (call.done) continue
          call.done = true
          unfinished.push({
            sessionUpdate: 'tool_call_update',
            toolCallId,
            status: 'failed',
            content: [text('The turn ended before this call finished.')],
          })
        }
        const why =
          event.data.reason === 'error'
            ? `The turn ended with an error: ${event.data.error ?? 'unknown error'}`
            : event.data.reason === 'interrupted'
              ? 'The turn was interrupted: the process running it ended before it did.'
              : undefined
        return why === undefined
          ? unfinished
          : [...unfinished, { sessionUpdate: 'agent_message_chunk', messageId: messageId('e'), content: { type: 'text', text: why } }]
      }
      default:
        return []
    }
  }

  private result(event: SessionEvent<'tool/result'>): SessionUpdate {
    const { toolCallId, isError, value } = event.data
    const call = this.calls.get(toolCallId)
    if (call !== undefined) call.done = true
    const resultText = event.data.content.map((block) => block.text).join('\n')
    const record = this.reviews.get(toolCallId)
    const settled = this.settlements.get(toolCallId)
    let status: 'completed' | 'failed' = isError ? 'failed' : 'completed'
    let shown = resultText
    if (record !== undefined) {
      // Whatever the person chose is a completed review, even where plan-tool tells the model with an error result.
      status = 'completed'
      shown = reviewText(record, settled)
    } else if (
      settled !== undefined &&
      (settled.outcome === 'answered' || settled.outcome === 'cancelled') &&
      call?.name === ENTER_PLAN_MODE
    ) {
      status = 'completed'
      shown = `${resultText}${answeredBy(undefined, settled) === '' ? '' : `\n(answered${answeredBy(undefined, settled)})`}`
    }
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status,
      content: shown === '' ? [] : [text(shown)],
      ...(value === undefined ? {} : { rawOutput: value }),
    }
  }
}
