import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import { resolveConfig, type PlanFileConfig } from './config.js'
import { PlanFileWriter } from './plan-file-writer.js'
import { planFileContentOf } from './projection-values.js'

/**
 * Service `planFile`, provided while {@link planFilePlugin} is applied.
 *
 * @public
 */
export interface PlanFileService {
  /** The folder of the plan files: the config's `dir`, resolved to an absolute path at load. */
  readonly dir: string
  /** The file of session `sessionId`: `<dir>/<sessionId>.md` (the id used as it is). */
  pathOf(sessionId: string): string
  /**
   * Resolves once no write is running or due: every change so far is on
   * disk, or its failure has been logged. Call it before disposing the
   * plugin (or the host) when the last plan must reach its file; disposal
   * itself drops the writes that are due. Never rejects.
   */
  settled(): Promise<void>
}

declare module '@planmode/context' {
  interface Services {
    /** The plan files of the sessions, from `@planmode/plan-file`. */
    planFile: PlanFileService
  }
}

/** The keys whose changes rewrite a session's file. */
const WATCHED: ReadonlySet<string> = new Set(['planHistory', 'planProgress'])

const NO_HISTORY =
  '@planmode/plan-file requires the planHistory projection unit: load planHistoryPlugin (from @planmode/plan-projection) before planFilePlugin'

/**
 * The plan-file plugin (SPEC §19): keeps the latest plan of each session in
 * `<dir>/<session id>.md`, rewritten whenever the session's `planHistory`
 * or (when a `planProgress` unit is registered) `planProgress` value
 * changes. The file is front matter (`session`, `rev`, `status`, `title`,
 * and `progress` when the progress layer tracks that revision) and the
 * latest revision's text, its approved edit when there is one; see
 * {@link planFileText}. Each write goes to a temporary file in `dir` that is
 * renamed over the target, so a reader never sees a part; the writes of one
 * session are serialised and the last change wins. A session with no
 * revision has no file.
 *
 * A failed write calls `logger.warn` once and never throws into the host;
 * the next change writes again. Disposing the plugin stops writing (writes
 * that are due are dropped; await {@link PlanFileService.settled} first to
 * keep them) and leaves the files where they are.
 *
 * Requires `planMode` (a `MissingServiceError` naming it otherwise) and the
 * `planHistory` unit: loading it while the `sessionProjections` registry
 * has no `planHistory` key throws an error naming `planHistoryPlugin`.
 * `dir` is created at load (a failure throws to the caller). Once loaded,
 * it follows `planMode` like every plan layer, and follows the
 * `sessionProjections` registry (a registry that returns is listened to
 * again). Provides service `planFile`; one plugin per context.
 *
 * @example
 * ```ts
 * root.plugin(planCorePlugin)
 * root.plugin(planHistoryPlugin)
 * root.plugin(planFilePlugin, { dir: '.planmode/plans' })
 * ```
 *
 * @public
 */
export const planFilePlugin: Plugin<PlanFileConfig> = {
  name: '@planmode/plan-file',
  requires: ['planMode'],
  apply(ctx, config) {
    const dir = resolve(resolveConfig(config).dir)
    const projections = ctx.get('sessionProjections')
    if (projections === undefined) {
      throw new Error(`${NO_HISTORY}; there is no sessionProjections registry to hold it (compose the host's first)`)
    }
    if (!projections.keys().includes('planHistory')) throw new Error(NO_HISTORY)
    let registry = projections
    const writer = new PlanFileWriter(
      dir,
      (session) => planFileContentOf(session.id, registry.snapshot(session).values),
      (message, error) => ctx.logger.warn(message, error),
    )
    // Provided first: a second plan-file in the context fails here, before it touches the disk.
    ctx.provide('planFile', {
      dir,
      pathOf: (sessionId) => writer.pathOf(sessionId),
      settled: () => writer.settled(),
    })
    try {
      mkdirSync(dir, { recursive: true })
    } catch (error) {
      throw new Error(`@planmode/plan-file: cannot create the plan folder ${dir}: ${(error as Error).message}`, { cause: error })
    }
    ctx.effect(() => writer.stop())
    ctx.inject(['sessionProjections'], (child) => {
      registry = child.require('sessionProjections')
      child.effect(
        registry.onChange((change) => {
          if (WATCHED.has(change.key)) writer.changed(change.session)
        }),
      )
    })
  },
}
