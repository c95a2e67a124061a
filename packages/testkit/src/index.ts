/**
 * The repository's shared test helpers, one home for what tests would
 * otherwise write again: the whole reference host with a scripted model and
 * a recording logger, small readers of logs and model requests, PostgreSQL
 * per test file, bounded work, child processes read line by line, a plan
 * review to ask, and the check that a README's example is the code a test
 * runs. Private to the workspace; never published. `@planmode/host` is a
 * peer: the tests that use these helpers provide it, so the host's own tests
 * can use them too without a dependency cycle.
 */
import { Context, type Logger } from '@planmode/context'
import {
  createScriptedModel,
  hostPlugin,
  requestSystem,
  type HostAgent,
  type HostConfig,
  type ScriptedModel,
  type ScriptedResponse,
} from '@planmode/host'
import type { Session, SessionEvent } from '@planmode/seams'

export { requestSystem }

export type RecordingLogger = Logger & { lines: { level: string; message: string }[] }

/** A logger that records every call. */
export function recordingLogger(): RecordingLogger {
  const lines: { level: string; message: string }[] = []
  const log = (level: string) => (message: string) => {
    lines.push({ level, message })
  }
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

export interface Host {
  readonly root: Context
  readonly logger: RecordingLogger
  readonly model: ScriptedModel
  /** A new session and an idle agent over it. */
  agent(session?: Session): Promise<HostAgent>
}

/** The whole reference host (in memory unless `dir` is given) with a scripted model. */
export function createHost(script: ScriptedResponse[] = [], config: Partial<HostConfig> = {}): Host {
  const logger = recordingLogger()
  const root = new Context({ logger })
  const model = createScriptedModel(script)
  root.plugin(hostPlugin, { model, retryDelayMs: 0, ...config })
  return {
    root,
    logger,
    model,
    async agent(session) {
      return root.require('agents').create({ session: session ?? (await root.require('sessions').create()) })
    },
  }
}

export function types(session: Session): string[] {
  return session.events.map((event) => event.type)
}

export function eventsOf<T extends SessionEvent['type']>(session: Session, type: T): SessionEvent<T>[] {
  return session.events.filter((event) => event.type === type) as unknown as SessionEvent<T>[]
}

/** A model request as the scripted model recorded it. */
export type ModelRequest = ScriptedModel['requests'][number]

/** The text of every user message of a model request, in order. */
export function userTexts(request: ModelRequest): string[] {
  return request.prompt
    .filter((message) => message.role === 'user')
    .map((message: ModelRequest['prompt'][number]) =>
      (message.content as readonly { type: string; text?: string }[])
        .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
        .join(''),
    )
}

export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

export const ENTER_NOTICE = 'The user switched this session to plan mode.'
export const LEAVE_NOTICE = 'The user switched this session back to the default mode.'

export {
  PG_URL_ENV,
  dropSchema,
  freshSchemaName,
  pgTestUrl,
  resolvePostgres,
  startEmbeddedPostgres,
  type EmbeddedPostgresOptions,
  type PgServer,
} from './postgres.js'
export { assertBuilt } from './built.js'
export { LOAD_FACTOR_ENV, loadFactor, machineLoad, scaledMs } from './load.js'
export { boundedWork, StuckWorkError, type BoundedWorkOptions, type LaneOptions, type Work, type WorkLane } from './work.js'
export { runChild, startChild, stopChildren, type ChildExit, type ChildOptions, type StartedChild } from './child-process.js'
export { REVIEW_QUESTION } from './review-question.js'
export { readmeMirror, type ReadmeMirror } from './readme-mirror.js'
