/**
 * The plan as a file (SPEC §19): the latest plan revision of each session
 * in `<dir>/<session id>.md`, with a small front matter (session, rev,
 * status, title, progress), rewritten atomically whenever the session's
 * `planHistory` or `planProgress` projection changes. The model reads
 * nothing from it.
 *
 * @packageDocumentation
 */
export { resolveConfig } from './config.js'
export type { PlanFileConfig, ResolvedPlanFileConfig } from './config.js'
export { planFileText } from './plan-file-text.js'
export type { PlanFileContent } from './plan-file-text.js'
export { planFilePlugin } from './plugin.js'
export type { PlanFileService } from './plugin.js'
