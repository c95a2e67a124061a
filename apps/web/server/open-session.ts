import type { Logger } from '@planmode/context'
import type { HostAgent } from '@planmode/host'
import { SessionLogError, type HostSession } from '@planmode/store'
import type {
  CommandRegistry,
  CommandResult,
  ProjectionSnapshot,
  Session,
  SessionEvent,
  SessionProjectionRegistry,
  UserContentBlock,
  UserMessage,
} from '@planmode/seams'
import type { FollowerSession } from '@planmode/store-postgres'
import { NotLeaseHolderError } from './not-lease-holder-error.js'
import { attachments, type PostedImage } from './posted-images.js'
import { SessionQuestions, type PendingQuestion, type QuestionOutcome, type SettleResult } from './question-broker.js'
import { REVIEW_COMMENT_EVENT, REVIEW_COMMENT_REMOVED_EVENT, type SharedComment } from './review-comments.js'
import type { EventPresentation, SessionAccess, SessionFeedItem, SessionRole } from './session-feed.js'
import { shareComment } from './shared-comments.js'
import type { RequestUser } from './users.js'

/** What the leases of sessions in PostgreSQL hear from an open session: whether streams watch it, and that its writer lost the lease. */
export interface LeaseWatch {
  /** A stream subscribed to `entry`: it stays open. */
  watched(entry: OpenSession): void
  /** A stream of `entry` ended: a follower nobody watches is closed after a grace. */
  unwatched(entry: OpenSession): void
  /** The writer of `entry` lost its lease (`agent` noticed): it follows the session from now on. */
  leaseLost(entry: OpenSession, agent: HostAgent | undefined): Promise<void>
}

/** What every open session uses of the host: the projections, the commands, the tools' cards, the logger and, with PostgreSQL, the leases. */
export interface FeedServices {
  /** The projection registry (the frames and snapshots). */
  readonly projections: SessionProjectionRegistry
  /** The command registry (`/plan` and the others). */
  readonly commands: CommandRegistry
  /** How a UI may show the tool calls or result of an event. */
  readonly present: (event: SessionEvent) => EventPresentation | undefined
  /** Where a failed listener or prompt is told. */
  readonly logger: Logger
  /** The leases, when the sessions live in PostgreSQL. */
  readonly leases?: LeaseWatch
}

/** Whether the events leave a turn open (a `turn/start` after the last `turn/end`). */
function openTurn(events: readonly SessionEvent[]): boolean {
  for (let index = events.length - 1; index >= 0; index--) {
    const type = events[index]!.type
    if (type === 'turn/end') return false
    if (type === 'turn/start') return true
  }
  return false
}

/**
 * A session the server holds open and its feed: as its writer (with its
 * agent), or as a read-only follower of the server that holds its lease
 * (no agent; the log grows as the writer commits). A follower becomes the
 * writer in place ({@link OpenSession.become}) when this server takes the
 * session over, so its streams carry on.
 */
export class OpenSession {
  /** The questions this server's provider waits on (a follower has none: they wait in the writer's memory; its tabs see them from the log). */
  readonly questions: SessionQuestions
  /** The asks the log leaves open as of the last frame (the `questions` projection), by `questionId`. */
  private shownQuestions = new Map<string, PendingQuestion>()
  /** The JSON of the comments shared on each shown question as of the last frame (the `reviewComments` projection). */
  private shownComments = new Map<string, string>()
  private readonly listeners = new Set<(item: SessionFeedItem) => void>()
  /** The JSON of the projection values last sent in a frame. */
  private lastValues: string
  /** The text streamed so far for the current step. */
  private streaming: { turn: number; step: number; text: string } | undefined
  /** The seq of the last event sent to the feed. */
  private lastSeq: number
  private current: Session
  private currentAgent: HostAgent | undefined
  private holderName: string | null
  private holderUnknown = false

  /** Wraps a session the registry opened: with its agent as the writer, without one as a follower. */
  constructor(
    private readonly services: FeedServices,
    session: HostSession | FollowerSession,
    agent: HostAgent | undefined,
    holder: string | null,
    holderUnknown = false,
  ) {
    this.current = session
    this.currentAgent = agent
    this.holderName = holder
    this.holderUnknown = holderUnknown && agent === undefined
    this.lastSeq = session.events.at(-1)?.seq ?? -1
    this.questions = new SessionQuestions(session.id)
    const snapshot = this.snapshot()
    this.lastValues = JSON.stringify(snapshot.values)
    this.shownQuestions = this.openAsks(snapshot)
    this.shownComments = this.commentsShown(snapshot)
  }

  /**
   * The questions open in the log, oldest first, as the tabs get them: the
   * `questions` projection's open asks (the same on every server at the same
   * seq), each with the comments shared on it (the log's `reviewComments`).
   */
  pending(): PendingQuestion[] {
    const shared = this.snapshot().values.reviewComments ?? {}
    return [...this.shownQuestions.values()].map((question) => {
      const comments = Object.hasOwn(shared, question.id) ? shared[question.id]! : []
      return comments.length === 0 ? question : { ...question, comments }
    })
  }

  /** The comments shared on open question `questionId` as of the last event this server holds, oldest first. */
  commentsOf(questionId: string): readonly SharedComment[] {
    const shared = this.snapshot().values.reviewComments ?? {}
    return Object.hasOwn(shared, questionId) ? shared[questionId]! : []
  }

  /** A follower reads what the writer committed since its last event (comments shared a moment ago included); a writer has it all. */
  async catchUp(): Promise<void> {
    const follower = this.current as Partial<FollowerSession>
    if (this.currentAgent === undefined && typeof follower.catchUp === 'function') await follower.catchUp()
  }

  /** The JSON of the comments of every shown question in `snapshot`. */
  private commentsShown(snapshot: ProjectionSnapshot): Map<string, string> {
    const shared = snapshot.values.reviewComments ?? {}
    return new Map([...this.shownQuestions.keys()].map((id) => [id, JSON.stringify(Object.hasOwn(shared, id) ? shared[id] : [])]))
  }

  /**
   * The asks of `snapshot` the tabs are shown: every open one while some
   * process writes the session (this server, a lease holder, or one that
   * could not be read); none on a follower nobody writes — their asker is
   * gone, and the next writer settles them `interrupted`.
   */
  private openAsks(snapshot: ProjectionSnapshot): Map<string, PendingQuestion> {
    const open = new Map<string, PendingQuestion>()
    if (this.currentAgent === undefined && this.holderName === null && !this.holderUnknown) return open
    for (const ask of snapshot.values.questions?.open ?? [])
      open.set(ask.questionId, { id: ask.questionId, sessionId: this.id, request: { questions: ask.question } })
    return open
  }

  /** How the log settled ask `questionId`, as the tabs' `question-closed` says it. */
  private closedAs(questionId: string): QuestionOutcome {
    const events = this.current.events
    for (let index = events.length - 1; index >= 0; index--) {
      const event = events[index]!
      if (event.type === 'question/settled' && event.data.questionId === questionId) {
        if (event.data.outcome === 'answered') return 'answered'
        break
      }
    }
    return this.questions.outcomeOf(questionId) === 'dismissed' ? 'dismissed' : 'aborted'
  }

  /** The session id. */
  get id(): string {
    return this.current.id
  }

  /** The session: the writer's, or the follower's read-only view. */
  get session(): Session {
    return this.current
  }

  /** The agent, while this server writes the session. */
  get agent(): HostAgent | undefined {
    return this.currentAgent
  }

  /** `writer` or `follower`. */
  get role(): SessionRole {
    return this.currentAgent === undefined ? 'follower' : 'writer'
  }

  /** This server's part and the lease holder. */
  access(): SessionAccess {
    return {
      role: this.role,
      holder: this.holderName,
      ...(this.holderUnknown && this.role === 'follower' ? { holderUnknown: true as const } : {}),
    }
  }

  /** The number of listeners (open streams). */
  get watched(): number {
    return this.listeners.size
  }

  /**
   * Whether a turn runs: the agent's status for a writer; for a follower,
   * whether the log leaves a turn open while some server holds the lease.
   */
  get running(): boolean {
    if (this.currentAgent !== undefined) return this.currentAgent.status === 'running'
    return (this.holderName !== null || this.holderUnknown) && openTurn(this.current.events)
  }

  /** Resolves once every append the writer started has settled (at once for a follower, which appends nothing). */
  settled(): Promise<void> {
    return this.currentAgent === undefined ? Promise.resolve() : (this.current as HostSession).settled()
  }

  /** The writer's agent; a follower throws {@link NotLeaseHolderError} (the registry's `writable` never returns one). */
  writer(): HostAgent {
    if (this.currentAgent === undefined) throw new NotLeaseHolderError(this.id, this.holderName)
    return this.currentAgent
  }

  /** A follower learnt who holds the lease now (`null`: nobody; `unknown`: the lease could not be read); tells the streams when it changed. */
  noteHolder(holder: string | null, unknown = false): void {
    if (this.currentAgent !== undefined || (holder === this.holderName && unknown === this.holderUnknown)) return
    this.holderName = holder
    this.holderUnknown = unknown
    this.emit({ kind: 'role', access: this.access() })
    this.syncQuestions()
  }

  /**
   * This server took the session over: `session` is its writer now and
   * `agent` its agent. The events the follower had not seen yet go to the
   * streams, then a frame when a value changed, then the new role.
   */
  become(session: HostSession, agent: HostAgent, holder: string): void {
    this.current = session
    this.currentAgent = agent
    this.holderName = holder
    this.holderUnknown = false
    this.streaming = undefined
    for (const event of session.events) if (event.seq > this.lastSeq) this.push(event)
    this.sendFrameIfChanged()
    this.emit({ kind: 'role', access: this.access() })
    this.syncQuestions()
  }

  /**
   * This server lost the session's lease (another server took it, or the
   * lease connection died): `follower` is its read-only view now. The streams
   * get the new role, then the events of the new writer they had not seen,
   * then a frame when a value changed.
   */
  demote(follower: FollowerSession, holder: string | null, holderUnknown: boolean): void {
    this.current = follower
    this.currentAgent = undefined
    this.holderName = holder
    this.holderUnknown = holderUnknown
    this.streaming = undefined
    this.emit({ kind: 'role', access: this.access() })
    for (const event of follower.events) if (event.seq > this.lastSeq) this.push(event)
    this.sendFrameIfChanged()
    this.syncQuestions()
  }

  /** Every projection value as of the last event. */
  snapshot(): ProjectionSnapshot {
    return this.services.projections.snapshot(this.session)
  }

  /** How a UI may show the tool calls or result of `event` (`presentCall` / `presentResult` of the registered tool). */
  present(event: SessionEvent): EventPresentation | undefined {
    return this.services.present(event)
  }

  /** Subscribes to the feed; returns the unsubscribe. */
  subscribe(listener: (item: SessionFeedItem) => void): () => void {
    this.listeners.add(listener)
    this.services.leases?.watched(this)
    return () => {
      if (this.listeners.delete(listener)) this.services.leases?.unwatched(this)
    }
  }

  /** The streamed text of the step the model is answering now (until its `assistant/message` is logged). */
  partial(): { readonly turn: number; readonly step: number; readonly text: string } | undefined {
    return this.streaming === undefined ? undefined : { ...this.streaming }
  }

  /**
   * Called by the host for each appended event of `session`: an `append`
   * item, then a `frame` when a projection value changed. Events of another
   * session object (the follower this server just replaced) and events
   * already sent are skipped.
   */
  appended(session: Session, event: SessionEvent): void {
    if (session !== this.current || event.seq <= this.lastSeq) return
    this.push(event)
    this.sendFrameIfChanged()
  }

  private push(event: SessionEvent): void {
    this.lastSeq = event.seq
    if (event.type === 'assistant/message' || event.type === 'step/start' || event.type === 'step/end' || event.type === 'turn/end')
      this.streaming = undefined
    const presentation = this.services.present(event)
    this.emit({ kind: 'append', event, ...(presentation === undefined ? {} : { presentation }) })
  }

  /** A frame when a value changed, then the questions the log opened (`question`) and settled (`question-closed`) since the last frame. */
  private sendFrameIfChanged(): void {
    const snapshot = this.snapshot()
    const values = JSON.stringify(snapshot.values)
    if (values === this.lastValues) return
    this.lastValues = values
    this.emit({ kind: 'frame', snapshot })
    this.syncQuestions(snapshot)
  }

  /**
   * Tells the streams which shown questions closed (`question-closed`),
   * which opened (`question`, with their comments) and whose shared comments
   * changed (`question-comments`) since they were last told.
   */
  private syncQuestions(snapshot: ProjectionSnapshot = this.snapshot()): void {
    const before = this.shownQuestions
    const commentsBefore = this.shownComments
    const now = this.openAsks(snapshot)
    this.shownQuestions = now
    this.shownComments = this.commentsShown(snapshot)
    const shared = snapshot.values.reviewComments ?? {}
    const commentsOf = (id: string): readonly SharedComment[] => (Object.hasOwn(shared, id) ? shared[id]! : [])
    for (const id of before.keys()) if (!now.has(id)) this.emit({ kind: 'question-closed', id, outcome: this.closedAs(id) })
    for (const [id, question] of now) {
      const comments = commentsOf(id)
      if (!before.has(id)) this.emit({ kind: 'question', question: comments.length === 0 ? question : { ...question, comments } })
      else if (commentsBefore.get(id) !== this.shownComments.get(id)) this.emit({ kind: 'question-comments', id, comments })
    }
  }

  /** Called by the host for each streamed text part of this session's agent. */
  delta(turn: number, step: number, text: string): void {
    if (this.streaming?.turn === turn && this.streaming.step === step) this.streaming.text += text
    else this.streaming = { turn, step, text }
    this.emit({ kind: 'delta', turn, step, text })
  }

  /** Starts a turn with the message, or steers it into the running one (the writer only). */
  prompt(text: string, images: readonly PostedImage[]): { steered: boolean } {
    const agent = this.writer()
    const message: UserMessage = {
      content: [
        ...attachments(images).map((attachment): UserContentBlock => ({ type: 'image', attachment })),
        ...(text === '' ? [] : [{ type: 'text' as const, text }]),
      ],
      source: { kind: 'user' },
    }
    if (agent.status === 'running') {
      agent.steer(message)
      return { steered: true }
    }
    agent.prompt(message).catch((error: unknown) => {
      // The lease went while the turn started: this server follows the session from now on.
      if (SessionLogError.isInstance(error) && error.code === 'LEASE_LOST') void this.services.leases?.leaseLost(this, agent)
      // BUSY when a follow-up got in first: steer instead, so the message is not lost.
      else if (!agent.disposed) agent.steer(message)
      else this.services.logger.warn(`session ${this.id}: prompt failed: ${error instanceof Error ? error.message : String(error)}`)
    })
    return { steered: false }
  }

  /** Runs a slash command line (the writer only); `undefined` for an unknown command (nothing logged). */
  command(line: string, images: readonly PostedImage[]): Promise<CommandResult | undefined> {
    return this.services.commands.execute({ agent: this.writer(), line, attachments: attachments(images) })
  }

  /**
   * Shares a comment `raw` (`{ line, text }`) from `user` on the open plan
   * review `questionId` (the writer only): checked against the logged
   * question (`shareComment`: a 400 when it is wrong), then appended as
   * `web/review-comment`, so every tab of every server gets it from the log,
   * and the answer carries it with its author.
   */
  async comment(questionId: string, raw: unknown, user: RequestUser): Promise<SettleResult & { readonly comment?: SharedComment }> {
    const session = this.writerSession()
    const question = this.shownQuestions.get(questionId)
    if (question === undefined) return this.notOpen(questionId)
    const shared = shareComment(question.request.questions, this.commentsOf(questionId), raw, user)
    if (typeof shared === 'string') return { ok: false, status: 400, error: shared }
    await session.append(REVIEW_COMMENT_EVENT, { questionId, comment: shared })
    return { ok: true, comment: shared }
  }

  /** Removes shared comment `commentId` of the open question `questionId` (the writer only): its author may, and any owner. Logged as `web/review-comment-removed`. */
  async uncomment(questionId: string, commentId: string, user: RequestUser): Promise<SettleResult> {
    const session = this.writerSession()
    if (!this.shownQuestions.has(questionId)) return this.notOpen(questionId)
    const comment = this.commentsOf(questionId).find((held) => held.id === commentId)
    if (comment === undefined) return { ok: false, status: 404, error: `no comment ${JSON.stringify(commentId)} on question ${questionId}` }
    if (user.role !== 'owner' && comment.by?.id !== user.by?.id) {
      return {
        ok: false,
        status: 403,
        error: `only its author (${comment.by?.name ?? 'someone else'}) or an owner can remove that comment`,
        code: 'OWNERS_ONLY',
      }
    }
    await session.append(REVIEW_COMMENT_REMOVED_EVENT, { questionId, commentId, ...(user.by === undefined ? {} : { by: user.by }) })
    return { ok: true }
  }

  /** The refusal for a question that is not open: 409 when the log settled it, else 404. */
  private notOpen(questionId: string): SettleResult {
    const asked = this.current.events.some((event) => event.type === 'question/asked' && event.data.questionId === questionId)
    return asked
      ? { ok: false, status: 409, error: `question ${questionId} is already closed` }
      : { ok: false, status: 404, error: `no question ${questionId} in session ${this.id}` }
  }

  /** The session this server writes; a follower throws {@link NotLeaseHolderError}. */
  private writerSession(): HostSession {
    this.writer()
    return this.current as HostSession
  }

  /** Cancels the running turn (the writer only); resolves with whether one was running. */
  async cancel(): Promise<boolean> {
    const agent = this.writer()
    const running = agent.status === 'running'
    await agent.cancel()
    return running
  }

  private emit(item: SessionFeedItem): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(item)
      } catch (error) {
        this.services.logger.warn(`session ${this.id}: a feed listener failed: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }

  /** Ends every listener's interest (the server is closing). */
  detachAll(): void {
    this.listeners.clear()
  }
}
