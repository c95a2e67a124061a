import { randomUUID } from 'node:crypto'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import { basePrompt, composePlanHost } from '@planmode/demo/compose-host'
import { WORKSPACE_EVENT } from '@planmode/demo/workspace-event'
import type { HostAgent, HostSession } from '@planmode/host'
import type { CommandResult, ImageAttachment, ProjectionSnapshot, SessionEvent, ToolPresentation, UserContentBlock, UserMessage } from '@planmode/seams'
import { SessionQuestions, type PendingQuestion, type QuestionOutcome } from './questions.js'

/** Options of {@link WebHost.start}. */
export interface WebHostOptions {
  /** Where the JSONL session logs go. */
  readonly sessionDir: string
  /** The folder the workspace tools work in. */
  readonly workspace: string
  /** The model every agent talks to. */
  readonly model: LanguageModelV3
  /** The plan-policy section. */
  readonly section: string
  /** plan-policy's `placement` (SPEC §13). */
  readonly placement?: 'system' | 'transcript'
  /** Compose `@planmode/plan-guard` (SPEC §14). */
  readonly guard?: boolean
  /** Steps per turn (default 24). */
  readonly maxSteps?: number
  /** Where the host's warnings go (default: the console). */
  readonly logger?: Logger
}

/** How a UI may show the tool calls of an `assistant/message` or the outcome of a `tool/result`. */
export interface EventPresentation {
  /** `presentCall` of each tool call of an `assistant/message`, by `toolCallId`. */
  readonly calls?: Readonly<Record<string, ToolPresentation>>
  /** `presentResult` of a `tool/result`. */
  readonly result?: ToolPresentation
}

/** What an open session tells its listeners (the SSE streams). */
export type SessionFeedItem =
  | { readonly kind: 'append'; readonly event: SessionEvent; readonly presentation?: EventPresentation }
  | { readonly kind: 'frame'; readonly snapshot: ProjectionSnapshot }
  | { readonly kind: 'delta'; readonly turn: number; readonly step: number; readonly text: string }
  | { readonly kind: 'question'; readonly question: PendingQuestion }
  | { readonly kind: 'question-closed'; readonly id: string; readonly outcome: QuestionOutcome }

/** One image as posted: base64 bytes and an `image/*` media type. */
export interface PostedImage {
  /** `image/png`, `image/jpeg`, … */
  readonly mediaType: string
  /** The bytes, base64. */
  readonly data: string
  /** The file name, when the browser knew it. */
  readonly name?: string
}

/** A session the server holds open, with its agent and its feed. */
export class OpenSession {
  /** The questions waiting for a tab. */
  readonly questions: SessionQuestions
  private readonly listeners = new Set<(item: SessionFeedItem) => void>()
  /** The JSON of the projection values last sent in a frame. */
  private lastValues: string
  /** The text streamed so far for the current step. */
  private streaming: { turn: number; step: number; text: string } | undefined

  /** Wraps a session the host opened and its agent (see {@link WebHost.openSession}). */
  constructor(
    private readonly host: WebHost,
    readonly session: HostSession,
    readonly agent: HostAgent,
  ) {
    this.questions = new SessionQuestions(session.id, {
      opened: (question) => this.emit({ kind: 'question', question }),
      closed: (id, outcome) => this.emit({ kind: 'question-closed', id, outcome }),
    })
    this.lastValues = JSON.stringify(this.snapshot().values)
  }

  /** The session id. */
  get id(): string {
    return this.session.id
  }

  /** Whether a turn runs. */
  get running(): boolean {
    return this.agent.status === 'running'
  }

  /** Every projection value as of the last event. */
  snapshot(): ProjectionSnapshot {
    return this.host.ctx.require('sessionProjections').snapshot(this.session)
  }

  /** Subscribes to the feed; returns the unsubscribe. */
  subscribe(listener: (item: SessionFeedItem) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** The streamed text of the step the model is answering now (until its `assistant/message` is logged). */
  partial(): { readonly turn: number; readonly step: number; readonly text: string } | undefined {
    return this.streaming === undefined ? undefined : { ...this.streaming }
  }

  /** Called by the host for each appended event: an `append` item, then a `frame` when a projection value changed. */
  appended(event: SessionEvent): void {
    if (event.type === 'assistant/message' || event.type === 'step/start' || event.type === 'step/end' || event.type === 'turn/end') this.streaming = undefined
    const presentation = this.host.present(event)
    this.emit({ kind: 'append', event, ...(presentation === undefined ? {} : { presentation }) })
    const snapshot = this.snapshot()
    const values = JSON.stringify(snapshot.values)
    if (values !== this.lastValues) {
      this.lastValues = values
      this.emit({ kind: 'frame', snapshot })
    }
  }

  /** Called by the host for each streamed text part of this session's agent. */
  delta(turn: number, step: number, text: string): void {
    if (this.streaming?.turn === turn && this.streaming.step === step) this.streaming.text += text
    else this.streaming = { turn, step, text }
    this.emit({ kind: 'delta', turn, step, text })
  }

  /** Starts a turn with the message, or steers it into the running one. */
  prompt(text: string, images: readonly PostedImage[]): { steered: boolean } {
    const message: UserMessage = { content: [...attachments(images).map((attachment): UserContentBlock => ({ type: 'image', attachment })), ...(text === '' ? [] : [{ type: 'text' as const, text }])], source: { kind: 'user' } }
    if (this.agent.status === 'running') {
      this.agent.steer(message)
      return { steered: true }
    }
    this.agent.prompt(message).catch((error: unknown) => {
      // BUSY when a follow-up got in first: steer instead, so the message is not lost.
      if (!this.agent.disposed) this.agent.steer(message)
      else this.host.logger.warn(`session ${this.id}: prompt failed: ${error instanceof Error ? error.message : String(error)}`)
    })
    return { steered: false }
  }

  /** Runs a slash command line; `undefined` for an unknown command (nothing logged). */
  command(line: string, images: readonly PostedImage[]): Promise<CommandResult | undefined> {
    return this.host.ctx.require('commands').execute({ agent: this.agent, line, attachments: attachments(images) })
  }

  private emit(item: SessionFeedItem): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(item)
      } catch (error) {
        this.host.logger.warn(`session ${this.id}: a feed listener failed: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }

  /** Ends every listener's interest (the server is closing). */
  detachAll(): void {
    this.listeners.clear()
  }
}

function attachments(images: readonly PostedImage[]): ImageAttachment[] {
  return images.map((image) => ({ id: `img_${randomUUID()}`, mediaType: image.mediaType, data: image.data, ...(image.name === undefined ? {} : { name: image.name }) }))
}

/**
 * The server's host: one context with the reference host, every plan layer
 * (plan-guard with `guard`), the demo's workspace tools and a user-questions
 * provider that waits for a browser tab. Sessions are opened on demand and
 * kept open, one agent each, until {@link WebHost.close}.
 */
export class WebHost {
  /** The context every plugin is composed in. */
  readonly ctx: Context
  /** The host's logger. */
  readonly logger: Logger
  private readonly open = new Map<string, OpenSession>()
  private readonly opening = new Map<string, Promise<OpenSession>>()
  private readonly byAgent = new Map<HostAgent, OpenSession>()
  private closed = false

  private constructor(private readonly options: WebHostOptions) {
    this.logger = options.logger ?? { debug() {}, info() {}, warn: (message) => console.warn(message), error: (message, ...rest) => console.error(message, ...rest) }
    this.ctx = new Context({ logger: this.logger })
  }

  /** Composes the host. */
  static start(options: WebHostOptions): WebHost {
    const host = new WebHost(options)
    host.compose()
    return host
  }

  private compose(): void {
    const { ctx, options } = this
    try {
      // The reference host, every plan layer, plan-guard when asked for, and the workspace tools: as `pnpm start`.
      composePlanHost(ctx, options)
      ctx.plugin({
        name: '@planmode/web/base-prompt',
        requires: ['systemPrompt'],
        apply: (child) => {
          child.effect(child.require('systemPrompt').section({ name: 'web:base', order: 10, text: basePrompt(options.workspace) }))
        },
      })
      ctx.plugin({
        name: '@planmode/web/browser-questions',
        requires: ['userQuestions'],
        apply: (child) => {
          child.effect(
            child.require('userQuestions').registerProvider({
              ask: ({ agent, questions, signal }) => {
                const open = [...this.open.values()].find((entry) => entry.agent === agent || entry.session === agent.session)
                if (open === undefined) return Promise.reject(new Error(`no browser session is open for agent ${agent.id}`))
                return open.questions.ask(questions, signal)
              },
            }),
          )
        },
      })
    } catch (error) {
      ctx.dispose()
      throw error
    }
    ctx.on('session/event', ({ session, event }) => {
      this.open.get(session.id)?.appended(event)
    })
    ctx.on('agent/stream', ({ agent, turn, step, part }) => {
      if (part.type === 'text-delta') this.byAgent.get(agent)?.delta(turn, step, part.delta)
    })
  }

  /** The session store. */
  get sessions() {
    return this.ctx.require('sessions')
  }

  /** The sessions held open, by id. */
  loaded(): readonly OpenSession[] {
    return [...this.open.values()]
  }

  /** The open session `id`, if it is open. */
  get(id: string): OpenSession | undefined {
    return this.open.get(id)
  }

  /** Creates a session (logging the workspace folder) and opens it. */
  async create(): Promise<OpenSession> {
    this.refuseClosed()
    const session = await this.sessions.create()
    await session.append(WORKSPACE_EVENT, { root: this.options.workspace })
    return this.adopt(session)
  }

  /** Opens session `id` from the store (once; later calls return the same). Rejects with the store's `SessionLogError`. */
  openSession(id: string): Promise<OpenSession> {
    this.refuseClosed()
    const known = this.open.get(id)
    if (known !== undefined) return Promise.resolve(known)
    let pending = this.opening.get(id)
    if (pending === undefined) {
      pending = (async () => {
        const session = await this.sessions.open(id)
        const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
        if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== this.options.workspace) {
          await session.append(WORKSPACE_EVENT, { root: this.options.workspace })
        }
        return this.adopt(session)
      })().finally(() => this.opening.delete(id))
      this.opening.set(id, pending)
    }
    return pending
  }

  private adopt(session: HostSession): OpenSession {
    const agent = this.ctx.require('agents').create({ session })
    const open = new OpenSession(this, session, agent)
    this.open.set(session.id, open)
    this.byAgent.set(agent, open)
    return open
  }

  /** How a UI may show the tool calls or result of `event` (`presentCall` / `presentResult` of the registered tool). */
  present(event: SessionEvent): EventPresentation | undefined {
    const tools = this.ctx.get('tools')
    if (tools === undefined) return undefined
    if (event.type === 'assistant/message') {
      const calls: Record<string, ToolPresentation> = {}
      for (const block of event.data.content) {
        if (block.type !== 'tool-call') continue
        try {
          const shown = tools.get(block.toolName)?.presentCall?.(block.input as never)
          if (shown !== undefined) calls[block.toolCallId] = shown
        } catch (error) {
          this.logger.debug(`presentCall of ${block.toolName} failed: ${String(error)}`)
        }
      }
      return Object.keys(calls).length === 0 ? undefined : { calls }
    }
    if (event.type === 'tool/result') {
      try {
        const { isError, content, value } = event.data
        const shown = tools.get(event.data.toolName)?.presentResult?.({ isError, content, ...(value === undefined ? {} : { value }) })
        return shown === undefined ? undefined : { result: shown }
      } catch (error) {
        this.logger.debug(`presentResult of ${event.data.toolName} failed: ${String(error)}`)
      }
    }
    return undefined
  }

  private refuseClosed(): void {
    if (this.closed) throw new Error('the server is closing')
  }

  /** Cancels running turns (open questions are aborted), waits for the logs, closes every session and disposes the context. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await Promise.allSettled([...this.opening.values()])
    const open = [...this.open.values()]
    await Promise.allSettled(
      open.map(async (entry) => {
        // The tabs still hear the end: the aborted question and the cancelled turn.
        if (entry.agent.status === 'running') await entry.agent.cancel()
        await entry.agent.idle()
        entry.agent.dispose()
        await entry.session.settled()
        entry.detachAll()
        await this.sessions.close(entry.session)
      }),
    )
    this.open.clear()
    this.byAgent.clear()
    this.ctx.dispose()
  }
}
