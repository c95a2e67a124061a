import { Context, type Fiber, type Logger } from '@planmode/context'
import {
  commandsPlugin,
  sessionInvariantsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin, type PlanPolicyPlacement } from '@planmode/plan-policy'
import { planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin, type PlanToolConfig } from '@planmode/plan-tool'
import type { AskRequest, Session, SessionEvent, UserAnswer } from '@planmode/seams'

/** The guidance text the tests configure (short, so assertions can look for it). */
export const SECTION = 'PLAN MODE: explore read-only, then present a plan with exit_plan_mode.'

export type RecordingLogger = Logger & { lines: { level: string; message: string }[] }

export function recordingLogger(): RecordingLogger {
  const lines: { level: string; message: string }[] = []
  const log = (level: string) => (message: string) => {
    lines.push({ level, message })
  }
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

/** An answer the test's question provider gives, or a function of the ask. */
export type Answer = readonly UserAnswer[] | ((request: AskRequest) => readonly UserAnswer[] | Promise<readonly UserAnswer[]>)

export interface Composition {
  readonly ctx: Context
  readonly logger: RecordingLogger
  /** Every ask the provider received. */
  readonly asks: AskRequest[]
  /** Answers still to give, in order. */
  readonly answers: Answer[]
  /** Fibers of the layers a test disposes. */
  readonly fibers: { readonly planCore: Fiber; readonly tools: Fiber; readonly systemPrompt: Fiber }
  session(id?: string): Promise<Session>
  open(id: string): Promise<Session>
}

/**
 * The host's runtime plugins (no agent loop: the AI SDK runs the loop) and
 * every plan layer, with a scripted question provider.
 */
export function compose(
  options: { dir?: string; placement?: PlanPolicyPlacement; answers?: Answer[]; planTool?: PlanToolConfig } = {},
): Composition {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  ctx.plugin(sessionInvariantsPlugin)
  ctx.plugin(sessionStorePlugin, options.dir === undefined ? {} : { dir: options.dir })
  const tools = ctx.plugin(toolsPlugin)
  const systemPrompt = ctx.plugin(systemPromptPlugin)
  ctx.plugin(commandsPlugin)
  ctx.plugin(userQuestionsPlugin)
  ctx.plugin(sessionProjectionsPlugin)
  const planCore = ctx.plugin(planCorePlugin)
  ctx.plugin(planPolicyPlugin, options.placement === undefined ? { section: SECTION } : { section: SECTION, placement: options.placement })
  ctx.plugin(planCommandsPlugin)
  ctx.plugin(planToolPlugin, options.planTool)
  ctx.plugin(planProjectionPlugin)
  const asks: AskRequest[] = []
  const answers: Answer[] = [...(options.answers ?? [])]
  ctx.require('userQuestions').registerProvider({
    async ask(request) {
      asks.push(request)
      const answer = answers.shift()
      if (answer === undefined) throw new Error('test provider: no answer left')
      return typeof answer === 'function' ? answer(request) : answer
    },
  })
  return {
    ctx,
    logger,
    asks,
    answers,
    fibers: { planCore, tools, systemPrompt },
    session: (id) => ctx.require('sessions').create(id === undefined ? {} : { id }),
    open: (id) => ctx.require('sessions').open(id),
  }
}

export const APPROVE: Answer = [{ id: 'plan-review', selected: ['Approve'] }]
export const ENTER: Answer = [{ id: 'plan-enter', selected: ['Enter plan mode'] }]

export const PLAN = '# Add a --verbose flag\n\n1. Parse the flag in cli.ts.\n2. Thread it to the logger.'

/** Event types of a log, in order. */
export function types(session: Session): string[] {
  return session.events.map((event) => event.type)
}

export function eventsOf<T extends SessionEvent['type']>(session: Session, type: T): SessionEvent<T>[] {
  return session.events.filter((event) => event.type === type) as unknown as SessionEvent<T>[]
}

/** Index of the first event matching `test` at or after `from`; -1 when none. */
export function indexOf(session: Session, test: (event: SessionEvent) => boolean, from = 0): number {
  return session.events.findIndex((event, index) => index >= from && test(event))
}

/** The texts of the notices in a log, in order. */
export function noticeTexts(session: Session): string[] {
  return eventsOf(session, 'user/message')
    .filter((event) => event.data.source.kind === 'plugin' && event.data.source.form === 'notice')
    .map((event) => event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
}

export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}
