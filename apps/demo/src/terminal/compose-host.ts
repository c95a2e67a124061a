import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Context, Plugin } from '@planmode/context'
import type { PlanPolicyPlacement } from '@planmode/plan-policy'
import { presetPlugin } from '@planmode/preset'
import type { AssemblyInput } from '@planmode/seams'
import { HELPER_PROMPT_OPENING } from '../model/helper.js'
import { testsVerifierPlugin } from '../workspace/tests-verifier.js'
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
  /**
   * Compose the demo's step check (`@planmode/demo/tests-verifier`, SPEC
   * §25): a step whose text names tests is done only when the workspace's
   * tests pass (`node --test`). Only over a workspace meant to run the
   * model's code, such as the copy of the sample project.
   */
  readonly verifyTests?: boolean
}

/**
 * Composes, on `ctx`, `@planmode/preset` (the reference host and every plan
 * layer, plan-guard and plan-file when asked for), the demo's workspace
 * tools and, with `verifyTests`, its step check: what the terminal host, the
 * web server and the ACP agent share.
 * The caller adds its own base prompt and user-questions provider.
 */
export function composePlanHost(ctx: Context, options: ComposePlanHostOptions): void {
  if ((options.sessions === undefined) === (options.sessionDir === undefined)) {
    throw new TypeError('composePlanHost: give either `sessionDir` (the JSONL store) or `sessions` (a store plugin), not both or neither')
  }
  ctx.plugin(presetPlugin, {
    ...(options.sessions === undefined ? { dir: options.sessionDir, durability: 'turn' } : { sessions: options.sessions }),
    model: options.model,
    maxSteps: options.maxSteps ?? 24,
    section: options.section,
    ...(options.models === undefined ? {} : { models: options.models }),
    ...(options.placement === undefined ? {} : { placement: options.placement }),
    ...(options.guard === undefined ? {} : { guard: options.guard }),
    ...(options.planDir === undefined ? {} : { planDir: options.planDir }),
    ...(options.requiredSections === undefined ? {} : { requiredSections: options.requiredSections }),
    ...(options.freshSessions === undefined ? {} : { freshSessions: options.freshSessions }),
  })
  // The demo's workspace tools (read-only ones annotated so).
  ctx.plugin(workspaceToolsPlugin, { root: options.workspace })
  if (options.verifyTests === true) ctx.plugin(testsVerifierPlugin, { root: options.workspace })
}
