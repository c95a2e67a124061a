import { type ReactNode, useCallback, useEffect, useLayoutEffect, useMemo, useRef } from 'react'
import { planTitle } from '../markdown.js'
import type { DeltaFrame, PresentationWire, SessionEvent, ToolPresentation } from '../wire.js'
import { openTurnOf, turnEndLine, turnEndReason } from '../turn-end.js'
import { handoffWords } from '../handoff-follow.js'
import { helperReport, HelperWork } from './HelperWork.js'
import { Markdown } from './Markdown.js'
import { HandedOffRow, HandoffFromRow, isPlanMessage, PluginMessageRow } from './PlanHandoffRows.js'

type ToolCall = { readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
type ToolResultData = Extract<SessionEvent, { type: 'tool/result' }>['data']
type Block = Extract<SessionEvent, { type: 'assistant/message' }>['data']['content'][number]
type UserBlock = Extract<SessionEvent, { type: 'user/message' }>['data']['content'][number]

const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/

/** How close to the top of the transcript, in px, the reader gets before the earlier page loads. */
const NEAR_TOP_PX = 600

const isPresentation = (value: unknown): value is ToolPresentation =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ToolPresentation).title === 'string' &&
  Array.isArray((value as ToolPresentation).content)

/** The server's presentation of a call (by `toolCallId`) or of a result. */
function pick(wire: PresentationWire | undefined, toolCallId: string | null): ToolPresentation | undefined {
  const found = toolCallId === null ? wire?.result : wire?.calls?.[toolCallId]
  return isPresentation(found) ? found : undefined
}

/** What a call shows when the server sent no presentation (e.g. a tail loaded on reload). */
function fallbackCall(call: ToolCall): ToolPresentation {
  const input = (call.input ?? {}) as Record<string, unknown>
  if (call.toolName === 'exit_plan_mode' && typeof input.plan === 'string')
    return { card: 'generic', title: planTitle(input.plan), kind: 'other', content: [{ type: 'text', text: input.plan }] }
  if (call.toolName === 'enter_plan_mode')
    return {
      card: 'generic',
      title: 'Enter plan mode?',
      kind: 'other',
      content: typeof input.reason === 'string' ? [{ type: 'text', text: input.reason }] : [],
    }
  return {
    card: 'generic',
    title: call.toolName,
    kind: 'other',
    content: [{ type: 'text', text: '```json\n' + JSON.stringify(call.input, null, 2) + '\n```' }],
  }
}

const textOf = (blocks: readonly { type: string; text?: string }[]): string =>
  blocks
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n\n')

type Settled = Extract<SessionEvent, { type: 'question/settled' }>['data']

/** What an answer chose, in words: the selected labels and the typed text. */
function answerWords(answers: Settled['answer']): string {
  const parts = (answers ?? []).flatMap((answer) => [
    ...answer.selected,
    ...(answer.custom === undefined || answer.custom.trim() === '' ? [] : [`“${answer.custom.trim()}”`]),
  ])
  return parts.length === 0 ? '(nothing chosen)' : parts.join(', ')
}

/** ` by Rita`, and ` (sent from another process)` for an answer another server or the `planmode` command sent. */
function AnsweredBy({ by, remote }: { by: Settled['by']; remote: boolean }) {
  if (by === undefined && !remote) return null
  const name = by === undefined ? undefined : by.name !== undefined && by.name !== '' ? by.name : by.id
  return (
    <span className="answered-by" data-testid="answered-by" data-by={by?.id ?? ''} data-remote={String(remote)}>
      {name === undefined ? '' : ` by ${name}`}
      {remote ? ' (sent from another process)' : ''}
    </span>
  )
}

const REVIEW_STATUS: Record<string, string> = {
  approved: 'approved',
  'keep-planning': 'kept planning',
  stopped: 'stopped',
  dismissed: 'dismissed',
}

function ToolCard({
  call,
  presentation,
  result,
  resultPresentation,
  review,
  turnEnded,
}: {
  call: ToolCall
  presentation: ToolPresentation | undefined
  result: ToolResultData | undefined
  resultPresentation: ToolPresentation | undefined
  /** The `plan/review` outcome of an `exit_plan_mode` call, when recorded. */
  review: string | undefined
  /** Whether the call's turn has ended (a call without a result then never got one: its process died mid-call). */
  turnEnded: boolean
}) {
  const shown = presentation ?? fallbackCall(call)
  const pending = turnEnded ? 'interrupted' : call.toolName === 'exit_plan_mode' ? 'in review' : 'running'
  const status = review !== undefined ? review : result === undefined ? pending : result.isError ? 'failed' : 'done'
  const body = textOf(shown.content)
  // a presentation is markdown; a raw result is shown as text
  const resultBody =
    resultPresentation !== undefined ? textOf(resultPresentation.content) : result !== undefined ? textOf(result.content) : ''
  const label = REVIEW_STATUS[status] ?? status
  const helper = helperReport(call.toolName, result)
  return (
    <article
      className={`tool-card tool-${result?.isError === true && review === undefined ? 'failed' : 'ok'}`}
      data-testid="tool-card"
      data-tool={call.toolName}
      data-status={status}
      aria-label={`Tool ${call.toolName}: ${shown.title}`}
    >
      <header className="tool-head">
        <span className={`tool-kind kind-${shown.kind ?? 'other'}`} aria-hidden="true">
          {shown.kind === 'read' ? '◎' : shown.kind === 'edit' ? '✎' : shown.kind === 'execute' ? '▶' : '◆'}
        </span>
        <span className="tool-title" data-testid="tool-card-title">
          {shown.title}
        </span>
        <span className="tool-name">{call.toolName}</span>
        <span className={`tool-status status-${status.replace(' ', '-')}`} data-testid="tool-card-status" data-status={status}>
          {label}
        </span>
      </header>
      {body !== '' && (
        <details className="tool-body" open={call.toolName === 'exit_plan_mode' ? false : undefined}>
          <summary>{call.toolName === 'exit_plan_mode' ? 'Plan' : 'Call'}</summary>
          <Markdown text={body} testId="tool-card-body" />
        </details>
      )}
      {helper !== undefined && <HelperWork report={helper} />}
      {helper === undefined && result !== undefined && resultBody !== '' && (
        <div className="tool-result" data-testid="tool-card-result">
          {review !== undefined ? (
            // A review's answer is the user's decision, not a failure: what the model was told, without the loop's "Error:".
            <>
              <span className="result-label">The model was told: </span>
              <span className="pre review-told">{textOf(result.content).replace(/^Error: /, '')}</span>
            </>
          ) : resultPresentation !== undefined ? (
            <>
              {resultPresentation.title !== shown.title && <strong>{resultPresentation.title}: </strong>}
              <Markdown text={resultBody} />
            </>
          ) : (
            <pre className="raw-result">{resultBody}</pre>
          )}
        </div>
      )}
    </article>
  )
}

function UserImages({ blocks }: { blocks: readonly UserBlock[] }) {
  const images = blocks.filter((block): block is Extract<UserBlock, { type: 'image' }> => block.type === 'image')
  if (images.length === 0) return null
  return (
    <div className="message-images">
      {images.map((block, index) =>
        IMAGE_TYPES.test(block.attachment.mediaType) ? (
          <img
            key={index}
            data-testid="message-image"
            src={`data:${block.attachment.mediaType};base64,${block.attachment.data}`}
            alt={block.attachment.name ?? `attached image ${index + 1}`}
          />
        ) : (
          <span key={index} className="attachment">
            {block.attachment.name ?? block.attachment.mediaType}
          </span>
        ),
      )}
    </div>
  )
}

/**
 * The session's transcript: user messages, plan-mode notices and guidance
 * (each shown distinctly), assistant text (streamed text until the logged
 * message replaces it), tool cards, commands and their replies, plan-mode
 * switches and review outcomes.
 */
export function Transcript({
  events,
  earlier,
  paging,
  pagingError,
  onLoadEarlier,
  openTurnOver = false,
  presentations,
  streaming,
  after,
  reveal,
}: {
  events: readonly SessionEvent[]
  /** How many events of the log come before the first one held. */
  earlier: number
  /** Whether earlier events are being loaded, or their last load failed. */
  paging: 'idle' | 'loading' | 'error'
  pagingError: string | null
  /** Loads the page before the first event held (called as the reader nears the top). */
  onLoadEarlier: () => void
  /** The turn the events leave open is over (the server running it is gone), though no `turn/end` says so yet. */
  openTurnOver?: boolean
  presentations: ReadonlyMap<number, PresentationWire>
  streaming: readonly DeltaFrame[]
  /** What follows the transcript in the same scrolling column (the questions waiting for an answer): read in one scroll, not a box of its own. */
  after?: ReactNode
  /**
   * The `data-reveal` value of an element of `after` to bring to the top of
   * the view when it appears (a plan review, to be read from its start);
   * while it is there the view does not follow the end, and once it goes the
   * view follows the end again.
   */
  reveal?: string
}) {
  const { results, commands, calls, reviews, ended, openTurn, answeredBy, reviewAsks } = useMemo(() => {
    const results = new Map<string, { data: ToolResultData; seq: number }>()
    const ended = new Set<number>()
    const commands = new Map<string, Extract<SessionEvent, { type: 'command/done' }>['data']>()
    const calls = new Set<string>()
    const reviews = new Map<string, string>()
    // Who answered each review (the settlement logged just before its plan/review), and which asks are plan reviews.
    const answeredBy = new Map<number, Settled>()
    const reviewAsks = new Set<string>()
    let lastSettled: Settled | undefined
    for (const event of events) {
      if (event.type === 'plan/review' && !reviews.has(event.data.toolCallId)) reviews.set(event.data.toolCallId, event.data.outcome)
      if (event.type === 'question/asked' && event.data.question.some((question) => question.intent?.kind === 'plan-review'))
        reviewAsks.add(event.data.questionId)
      else if (event.type === 'question/settled') lastSettled = event.data
      else if (event.type === 'plan/review' && lastSettled?.outcome === 'answered') answeredBy.set(event.seq, lastSettled)
      if (event.type === 'tool/result') results.set(event.data.toolCallId, { data: event.data, seq: event.seq })
      else if (event.type === 'turn/end') ended.add(event.data.turn)
      else if (event.type === 'command/done') commands.set(event.data.commandId, event.data)
      else if (event.type === 'assistant/message')
        for (const block of event.data.content) if (block.type === 'tool-call') calls.add(block.toolCallId)
    }
    return { results, commands, calls, reviews, ended, openTurn: openTurnOf(events), answeredBy, reviewAsks }
  }, [events])

  // Follow the end of the transcript while the reader is there (also when the panel below grows or shrinks).
  const scroller = useRef<HTMLDivElement>(null)
  const content = useRef<HTMLDivElement>(null)
  const below = useRef<HTMLDivElement>(null)
  const pinned = useRef(true)
  /** A revealed element (`reveal`) is open: the view does not go back to following the end until it closes. */
  const holding = useRef(false)
  // Near the top with earlier events in the log: load the page before (the latest props, read from the scroll handler).
  const paged = useRef({ earlier, paging, onLoadEarlier })
  paged.current = { earlier, paging, onLoadEarlier }
  const nearTop = useCallback(() => {
    const element = scroller.current
    const { earlier, paging, onLoadEarlier } = paged.current
    if (element !== null && earlier > 0 && paging === 'idle' && element.scrollTop < NEAR_TOP_PX) onLoadEarlier()
  }, [])
  useEffect(() => {
    const element = scroller.current
    if (element === null) return
    // only the reader scrolling up lets go of the end (a panel appearing below shrinks the view without that)
    let last = element.scrollTop
    const onScroll = () => {
      // While a revealed review is open the view stays where it was put (or where the reader takes it).
      if (!holding.current && element.scrollHeight - element.scrollTop - element.clientHeight < 80) pinned.current = true
      else if (element.scrollTop < last) pinned.current = false
      last = element.scrollTop
      nearTop()
    }
    element.addEventListener('scroll', onScroll, { passive: true })
    const observer = new ResizeObserver(() => {
      if (pinned.current) element.scrollTop = element.scrollHeight
    })
    observer.observe(element)
    if (content.current !== null) observer.observe(content.current)
    if (below.current !== null) observer.observe(below.current)
    return () => {
      element.removeEventListener('scroll', onScroll)
      observer.disconnect()
    }
  }, [])
  // Events put in front (an earlier page): what the reader sees stays where it was. Measured during the render, before the DOM changes.
  const firstHeld = events[0]?.seq
  const shownFirst = useRef(firstHeld)
  const before = useRef<{ first: number; height: number; top: number } | null>(null)
  if (firstHeld !== shownFirst.current) {
    const element = scroller.current
    before.current =
      element !== null && shownFirst.current !== undefined
        ? { first: shownFirst.current, height: element.scrollHeight, top: element.scrollTop }
        : null
    shownFirst.current = firstHeld
  }
  useLayoutEffect(() => {
    const element = scroller.current
    const measured = before.current
    before.current = null
    if (element === null) return
    if (pinned.current) element.scrollTop = element.scrollHeight
    else if (measured !== null && firstHeld !== undefined && firstHeld < measured.first)
      element.scrollTop = measured.top + (element.scrollHeight - measured.height)
  }, [events, streaming, firstHeld])
  // A review appearing is read from its start: its top comes to the top of the view, which stops following the end
  // (before any resize observer could pull it down again); when it goes, the view follows the end again.
  useLayoutEffect(() => {
    const element = scroller.current
    if (element === null) return
    if (reveal === undefined) {
      if (!holding.current) return
      holding.current = false
      pinned.current = true
      element.scrollTop = element.scrollHeight
      return
    }
    const target = element.querySelector<HTMLElement>(`[data-reveal="${CSS.escape(reveal)}"]`)
    if (target === null) return
    holding.current = true
    pinned.current = false
    element.scrollTop += target.getBoundingClientRect().top - element.getBoundingClientRect().top - 8
  }, [reveal])
  // A page that did not fill the view above the reader: load the next one (also when the whole tail fits the view).
  useEffect(() => {
    if (paging === 'idle') nearTop()
  }, [firstHeld, earlier, paging, nearTop])

  // A performance mark when the first loaded events are on screen (the next frame after their commit), for the web bench.
  const marked = useRef(false)
  useEffect(() => {
    if (marked.current || events.length === 0) return
    marked.current = true
    const count = events.length
    requestAnimationFrame(() => performance.mark('planmode:transcript-painted', { detail: { events: count } }))
  }, [events])

  // The rows change only with the events, not with streamed text: memoized, so a delta re-renders only the streaming part.
  const rows = useMemo(() => {
    const rows: ReactNode[] = []
    for (const event of events) {
      const key = event.seq
      switch (event.type) {
        case 'user/message': {
          const { source, content } = event.data
          const text = textOf(content)
          if (source.kind === 'plugin' && source.form === 'notice') {
            rows.push(
              <div key={key} className="notice" data-testid="notice" data-seq={key} role="note">
                <span className="notice-label">{source.summary ?? 'Notice'}</span>
                <details>
                  <summary>what the model was told</summary>
                  <p className="pre">{text}</p>
                </details>
              </div>,
            )
          } else if (source.kind === 'plugin' && source.form === 'guidance') {
            rows.push(
              <details key={key} className="guidance" data-testid="guidance" data-seq={key}>
                <summary>Plan-mode guidance sent to the model</summary>
                <Markdown text={text} />
              </details>,
            )
          } else if (source.kind === 'plugin' && isPlanMessage(source.form)) {
            rows.push(<PluginMessageRow key={key} seq={key} form={source.form!} text={text} />)
          } else {
            const from = source.kind === 'plugin' ? `${source.plugin}` : 'You'
            rows.push(
              <div
                key={key}
                className={`message user ${source.kind === 'plugin' ? 'from-plugin' : ''}`}
                data-testid="user-message"
                data-seq={key}
              >
                <div className="who">{from}</div>
                <UserImages blocks={content} />
                {text !== '' && (
                  <p className="pre" data-testid="user-message-text">
                    {text}
                  </p>
                )}
              </div>,
            )
          }
          break
        }
        case 'assistant/message': {
          const parts: ReactNode[] = []
          event.data.content.forEach((block: Block, index) => {
            if (block.type === 'text' && block.text.trim() !== '')
              parts.push(<Markdown key={index} text={block.text} testId="assistant-text" />)
            else if (block.type === 'reasoning' && block.text.trim() !== '')
              parts.push(
                <details key={index} className="reasoning" data-testid="reasoning">
                  <summary>Reasoning</summary>
                  <p className="pre">{block.text}</p>
                </details>,
              )
            else if (block.type === 'tool-call') {
              const result = results.get(block.toolCallId)
              parts.push(
                <ToolCard
                  key={index}
                  call={block}
                  presentation={pick(presentations.get(event.seq), block.toolCallId)}
                  result={result?.data}
                  resultPresentation={result === undefined ? undefined : pick(presentations.get(result.seq), null)}
                  review={block.toolName === 'exit_plan_mode' ? reviews.get(block.toolCallId) : undefined}
                  turnEnded={ended.has(event.data.turn) || (openTurnOver && event.data.turn === openTurn)}
                />,
              )
            }
          })
          if (parts.length > 0)
            rows.push(
              <div key={key} className="message assistant" data-testid="assistant-message" data-seq={key}>
                <div className="who">Assistant</div>
                {parts}
              </div>,
            )
          break
        }
        case 'tool/result':
          if (!calls.has(event.data.toolCallId))
            rows.push(
              <div key={key} className="tool-card orphan" data-testid="tool-result" data-seq={key}>
                <strong>{event.data.toolName}</strong> {event.data.isError ? 'failed' : 'returned'}:{' '}
                <span className="pre">{textOf(event.data.content)}</span>
              </div>,
            )
          break
        case 'command/run': {
          const done = commands.get(event.data.commandId)
          rows.push(
            <div key={key} className={`command ${done?.kind === 'error' ? 'command-error' : ''}`} data-testid="command" data-seq={key}>
              <code data-testid="command-line">
                /{event.data.name}
                {event.data.args.trim() !== '' ? ` ${event.data.args.trim()}` : ''}
              </code>
              {done?.text !== undefined && <span data-testid="command-reply"> → {done.text}</span>}
            </div>,
          )
          break
        }
        case 'plan/mode':
          rows.push(
            <div
              key={key}
              className={`mode-switch ${event.data.active ? 'on' : 'off'}`}
              data-testid="plan-mode-switch"
              data-active={String(event.data.active)}
              data-seq={key}
              role="separator"
            >
              <span>Plan mode {event.data.active ? 'on' : 'off'}</span>
            </div>,
          )
          break
        case 'plan/review':
          rows.push(
            <div
              key={key}
              className={`review-outcome outcome-${event.data.outcome}`}
              data-testid="review-outcome"
              data-outcome={event.data.outcome}
              data-seq={key}
            >
              Plan review: {event.data.outcome}
              <AnsweredBy by={event.data.by ?? answeredBy.get(key)?.by} remote={answeredBy.get(key)?.submission !== undefined} />
              {event.data.plan !== undefined && ' (edited)'}
              {event.data.feedback !== undefined && <> — “{event.data.feedback}”</>}
              {event.data.comments !== undefined &&
                ` · ${event.data.comments.length} comment${event.data.comments.length === 1 ? '' : 's'}`}
              {handoffWords(event.data.handoff)}
            </div>,
          )
          break
        case 'question/settled':
          // A plan review's answer is its plan/review row; any other answered question says what was chosen, and by whom.
          if (event.data.outcome === 'answered' && !reviewAsks.has(event.data.questionId))
            rows.push(
              <div
                key={key}
                className="review-outcome question-answered"
                data-testid="question-answered"
                data-seq={key}
                data-remote={String(event.data.submission !== undefined)}
              >
                Answered: {answerWords(event.data.answer)}
                <AnsweredBy by={event.data.by} remote={event.data.submission !== undefined} />
              </div>,
            )
          break
        case 'web/handed-off':
          rows.push(<HandedOffRow key={key} seq={key} session={event.data.session} />)
          break
        case 'plan/handoff':
          rows.push(<HandoffFromRow key={key} seq={key} data={event.data} />)
          break
        case 'turn/end': {
          const line = turnEndLine(event.data)
          if (line !== null)
            rows.push(
              <div
                key={key}
                className={`turn-end reason-${turnEndReason(event.data)}`}
                data-testid="turn-end"
                data-reason={turnEndReason(event.data)}
                data-logged-reason={event.data.reason}
                data-seq={key}
              >
                {line}
              </div>,
            )
          break
        }
        default:
          break
      }
    }
    if (openTurnOver && openTurn !== undefined)
      rows.push(
        <div key="open-turn-over" className="turn-end reason-interrupted" data-testid="turn-over" data-turn={openTurn}>
          Turn {openTurn} was interrupted: the server running it is gone (the log does not say so yet; the next server to write this session
          closes it).
        </div>,
      )
    return rows
  }, [events, presentations, results, commands, calls, reviews, ended, openTurnOver, openTurn, answeredBy, reviewAsks])

  return (
    <div className="transcript" ref={scroller} data-testid="transcript">
      <div className="transcript-content" ref={content} role="log" aria-label="Transcript" aria-live="polite" aria-relevant="additions">
        {earlier > 0 && (
          <p className="earlier" data-testid="earlier-events" data-earlier={earlier} data-paging={paging}>
            {paging === 'loading' ? (
              <>Loading earlier events…</>
            ) : (
              <>
                {earlier} earlier event{earlier === 1 ? '' : 's'}{' '}
                {paging === 'error' && <span role="alert">could not be loaded ({pagingError}) </span>}
                <button type="button" className="link" data-testid="load-earlier" onClick={onLoadEarlier}>
                  {paging === 'error' ? 'Try again' : 'Load earlier'}
                </button>
              </>
            )}
          </p>
        )}
        {rows.length === 0 && streaming.length === 0 && <p className="empty">No messages yet. Type below, or start with /plan.</p>}
        {rows}
        {streaming.map((delta) => (
          <div
            key={`delta-${delta.turn}-${delta.step}`}
            className="message assistant streaming"
            data-testid="assistant-streaming"
            aria-busy="true"
          >
            <div className="who">Assistant</div>
            <p className="pre">{delta.text}</p>
          </div>
        ))}
      </div>
      {after !== undefined && <div ref={below}>{after}</div>}
    </div>
  )
}
