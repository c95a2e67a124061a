import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Context, Plugin } from '@planmode/context'
import {
  agentsPlugin,
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
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { planGuardPlugin } from '@planmode/plan-guard'
import { planPolicyPlugin, type PlanPolicyPlacement } from '@planmode/plan-policy'
import { planFilePlugin } from '@planmode/plan-file'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import type { AssemblyInput } from '@planmode/seams'
import { HELPER_PROMPT_OPENING } from '../model/helper.js'
import { workspaceToolsPlugin } from '../workspace/workspace-tools.js'

/**
 * The base system prompt (order 10) of the terminal host and the web server:
 * who the agent is and where its tools work. With `helper`, the prompt of a
 * helper agent that `explore` started (a child agent): it answers one
 * question and reports back.
 */
export const basePrompt = (workspace: string, helper = false): string =>
  helper
    ? [
        `${HELPER_PROMPT_OPENING}: another agent started you to answer one question about a project workspace.`,
        `The workspace root is ${workspace}; every tool path is relative to it.`,
        'Look around with list_files, read_file and search, then answer with what you found: the files and facts that matter, concisely.',
        'You cannot ask the user anything: the agent that started you reads your last message.',
      ].join('\n')
    : [
        'You are a careful coding agent working in a project workspace.',
        `The workspace root is ${workspace}; every tool path is relative to it.`,
        'Look around with list_files, read_file and search; change files with write_file and edit_file; explore hands a question to a helper agent.',
        'Keep answers short and concrete.',
      ].join('\n')

/** The base section's text for each assembly: the helper's prompt for a child agent (one with an `owner`), else the agent's. */
export const basePromptSection =
  (workspace: string) =>
  (input: AssemblyInput): string =>
    basePrompt(workspace, input.agent?.owner !== undefined)

/** What {@link composePlanHost} needs: the same settings `pnpm start` and `pnpm web` take. */
export interface ComposePlanHostOptions {
  /** The folder of the JSONL session logs (the host's own store). Leave it out when `sessions` provides the store. */
  readonly sessionDir?: string
  /**
   * A plugin that provides service `sessions` in place of the JSONL store,
   * as `hostPlugin`'s option of that name (`pnpm web --store` passes
   * `postgresSessions(…)`). Give it or `sessionDir`, not both.
   */
  readonly sessions?: Plugin<void>
  readonly model: LanguageModelV3
  readonly maxSteps?: number
  readonly section: string
  readonly placement?: PlanPolicyPlacement
  readonly guard?: boolean
  /** Compose `@planmode/plan-file` with this folder (`--plan-dir`): each session's latest plan as `<dir>/<id>.md`. */
  readonly planDir?: string
  /** plan-tool's `requiredSections` (SPEC §20): headings a plan must have before it is reviewed (`--require-sections`). */
  readonly requiredSections?: readonly string[]
  /**
   * The models an approval may hand the plan to (`--models`, SPEC §18), by
   * id: plan-tool's `handoff.models` offers these ids in the review and the
   * host's `models` resolves the chosen one. The default model need not be
   * among them.
   */
  readonly models?: Readonly<Record<string, LanguageModelV3>>
  /** Offer "carry it out in a fresh session" in the review (plan-tool's `handoff.fresh`, SPEC §18). */
  readonly freshSessions?: boolean
  readonly workspace: string
}

/** plan-tool's config for these options: `requiredSections` and `handoff` when asked for, else `undefined` (plan-tool's defaults). */
function planToolConfig(options: ComposePlanHostOptions): { requiredSections?: readonly string[]; handoff?: { fresh: boolean; models: string[] } } | undefined {
  const models = Object.keys(options.models ?? {})
  const handoff = options.freshSessions === true || models.length > 0 ? { fresh: options.freshSessions === true, models } : undefined
  const sections = options.requiredSections !== undefined && options.requiredSections.length > 0 ? options.requiredSections : undefined
  if (handoff === undefined && sections === undefined) return undefined
  return { ...(sections === undefined ? {} : { requiredSections: sections }), ...(handoff === undefined ? {} : { handoff }) }
}

/**
 * Composes, on `ctx`, the reference host (one plugin per runtime), every
 * plan layer (plan-progress and its projection included), plan-guard and
 * plan-file when asked for, and the demo's workspace tools:
 * what the terminal host and the web server share. The caller adds its own
 * base prompt and user-questions provider.
 */
export function composePlanHost(ctx: Context, options: ComposePlanHostOptions): void {
  // The reference host, one plugin per runtime.
  if ((options.sessions === undefined) === (options.sessionDir === undefined)) {
    throw new TypeError('composePlanHost: give either `sessionDir` (the JSONL store) or `sessions` (a store plugin), not both or neither')
  }
  ctx.plugin(sessionInvariantsPlugin)
  if (options.sessions !== undefined) ctx.plugin(options.sessions)
  else ctx.plugin(sessionStorePlugin, { dir: options.sessionDir, durability: 'turn' })
  ctx.plugin(systemPromptPlugin)
  ctx.plugin(toolsPlugin)
  ctx.plugin(commandsPlugin)
  ctx.plugin(userQuestionsPlugin)
  ctx.plugin(sessionProjectionsPlugin)
  // `models`: what a handoff (SPEC §18) may switch to, from the agent's next step or in a fresh session.
  ctx.plugin(agentsPlugin, { model: options.model, maxSteps: options.maxSteps ?? 24, ...(options.models === undefined ? {} : { models: options.models }) })
  // The plan layers.
  ctx.plugin(planCorePlugin)
  ctx.plugin(planModeInvariantPlugin)
  ctx.plugin(planPolicyPlugin, { section: options.section, ...(options.placement === undefined ? {} : { placement: options.placement }) })
  ctx.plugin(planCommandsPlugin)
  // --require-sections: a plan without one of these headings goes back to the model before anyone reviews it.
  // --models / fresh sessions: what an approval may hand the plan on to.
  ctx.plugin(planToolPlugin, planToolConfig(options))
  ctx.plugin(planProjectionPlugin)
  ctx.plugin(planHistoryPlugin)
  // Progress against the approved plan (SPEC §17): update_plan and its messages, and the planProgress key
  // (`plan 2/5` and `/plans progress` in the terminal; plan-file's `progress:` line).
  ctx.plugin(planProgressPlugin)
  ctx.plugin(planProgressProjectionPlugin)
  // Opt-in: the latest plan of each session as a file (after planHistory, which it reads).
  if (options.planDir !== undefined) ctx.plugin(planFilePlugin, { dir: options.planDir })
  // Opt-in enforcement: refuses tool calls that are not read-only while plan mode is on.
  if (options.guard === true) ctx.plugin(planGuardPlugin)
  // The demo's workspace tools (read-only ones annotated so).
  ctx.plugin(workspaceToolsPlugin, { root: options.workspace })
}
