import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import { basePrompt } from '@planmode/demo/compose-host'
import { testsVerifierPlugin } from '@planmode/demo/tests-verifier'
import { questionsProjectionPlugin } from '@planmode/host'
import { presetPlugin } from '@planmode/preset'
import type { Agent } from '@planmode/seams'
import { postgresSessions } from '@planmode/store-postgres'
import { loggedQuestionId } from './logged-questions.js'
import type { SessionQuestions } from './question-broker.js'
import { refusedStepsPlugin } from './refused-steps.js'
import { reviewCommentsPlugin } from './review-comments.js'
import { sessionModelPlugin } from './session-model.js'
import { sessionToolsPlugin } from './session-tools.js'
import type { SessionWorkspaces } from './session-workspaces.js'

/** Sessions in PostgreSQL (`--store`): the connection and the schema ({@link setup} of `@planmode/store-postgres` must have run). */
export interface WebHostStore {
  /** The connection URL. */
  readonly connection: string
  /** The schema; `planmode` by default. */
  readonly schema?: string
}

/** What the server composes: the store, the model and the plan layers' options (as `pnpm start` takes them). */
export interface WebCompositionOptions {
  /** Where the JSONL session logs go; give this or {@link WebCompositionOptions.store}. */
  readonly sessionDir?: string
  /** Sessions in PostgreSQL instead of JSONL files: several servers may share them, one writer per session. */
  readonly store?: WebHostStore
  /** The model every agent talks to. */
  readonly model: LanguageModelV3
  /**
   * The models an approval may hand the plan to (`--models`, SPEC §18), by
   * id: the review offers them, and the agent (or the fresh session's) uses
   * the one chosen from its next step. A reopened session's agent gets back
   * the model its log's latest handoff chose, when it is still among them.
   */
  readonly models?: Readonly<Record<string, LanguageModelV3>>
  /** The plan-policy section. */
  readonly section: string
  /** plan-policy's `placement` (SPEC §13). */
  readonly placement?: 'system' | 'transcript'
  /** Compose `@planmode/plan-guard` (SPEC §14). */
  readonly guard?: boolean
  /** Compose `@planmode/plan-file` with this folder (`--plan-dir`): each session's latest plan as `<dir>/<id>.md`. */
  readonly planDir?: string
  /** plan-tool's `requiredSections` (SPEC §20): headings a plan must have before it is reviewed. */
  readonly requiredSections?: readonly string[]
  /** Steps per turn (default 24). */
  readonly maxSteps?: number
}

/** What the composition hands to the parts of the server: where each session's tools work, and whose questions an ask is. */
export interface CompositionLinks {
  /** The workspace of each session (its tools, its base prompt). */
  readonly workspaces: SessionWorkspaces
  /** The questions of the session an agent writes (the browser provider hands each ask there). */
  readonly questionsOf: (agent: Agent) => SessionQuestions | undefined
  /** A folder the tools' declarations are read from (the sample project). */
  readonly template: string
  /**
   * Compose the demo's step check (SPEC §25): a step whose text names tests
   * is done only when `node --test` passes in the session's workspace. It
   * runs code the model wrote: only over workspaces meant for that (each
   * session's copy of the sample project, not a `--workspace` of your own).
   */
  readonly verifyTests: boolean
}

/**
 * Composes the server's context: `@planmode/preset` (the reference host —
 * its session store over JSONL, or PostgreSQL's with `store`, holding
 * leases as `holder` — with every plan layer, plan-guard with `guard`, the
 * review always offering a fresh session and the `--models` ids), the
 * demo's workspace tools working in each session's own workspace (and,
 * with `verifyTests`, its step check running the tests there), the
 * web's own `sessionModel`, `reviewComments` and `refusedSteps` projections, the host's
 * `questions` projection, the base prompt naming the session's workspace,
 * and a user-questions provider that hands each ask to the questions of the
 * session its agent writes. Disposes what it composed when a plugin throws.
 */
export function composeWebHost(options: WebCompositionOptions, holder: string, logger: Logger, links: CompositionLinks): Context {
  const ctx = new Context({ logger })
  try {
    const { store, sessionDir, model, models, maxSteps, section, placement, guard, planDir, requiredSections } = options
    // With --store the session store is PostgreSQL's, as hostPlugin's `sessions` option composes it. The review always
    // offers a fresh session (this app opens it and follows it); the handoff models are the keys of `models` (--models).
    ctx.plugin(presetPlugin, {
      ...(store === undefined
        ? { dir: sessionDir, durability: 'turn' as const }
        : {
            sessions: postgresSessions({
              connection: store.connection,
              ...(store.schema === undefined ? {} : { schema: store.schema }),
              holder,
            }),
          }),
      model,
      ...(models === undefined ? {} : { models }),
      maxSteps: maxSteps ?? 24,
      section,
      ...(placement === undefined ? {} : { placement }),
      ...(guard === undefined ? {} : { guard }),
      ...(planDir === undefined ? {} : { planDir }),
      ...(requiredSections === undefined ? {} : { requiredSections }),
      freshSessions: true,
    })
    // The demo's workspace tools, each call in its session's workspace (read-only ones annotated so), and explore.
    ctx.plugin(sessionToolsPlugin, { rootOf: (agent) => links.workspaces.rootForAgent(agent), template: links.template })
    // SPEC §25: a step that names tests is done when the tests of the session's own workspace pass.
    if (links.verifyTests) ctx.plugin(testsVerifierPlugin, { root: (agent) => links.workspaces.rootForAgent(agent) })
    ctx.plugin(sessionModelPlugin)
    // The comments people share on an open review, from the log: the same on every server.
    ctx.plugin(reviewCommentsPlugin)
    // The completions the step checks refused (SPEC §25), shown on their steps in every tab.
    ctx.plugin(refusedStepsPlugin)
    // The open questions of the log: what every server's tabs show as waiting, writer or follower.
    if (!ctx.require('sessionProjections').keys().includes('questions')) ctx.plugin(questionsProjectionPlugin)
    ctx.plugin({
      name: '@planmode/web/base-prompt',
      requires: ['systemPrompt'],
      apply: (child) => {
        child.effect(
          child.require('systemPrompt').section({
            name: 'web:base',
            order: 10,
            // The agent's own workspace; a helper agent (one with an owner) gets the helper's prompt.
            text: (input) =>
              basePrompt(
                input.agent === undefined ? links.workspaces.where : links.workspaces.rootForAgent(input.agent),
                input.agent?.owner !== undefined,
              ),
          }),
        )
      },
    })
    ctx.plugin({
      name: '@planmode/web/browser-questions',
      requires: ['userQuestions'],
      apply: (child) => {
        child.effect(
          child.require('userQuestions').registerProvider({
            ask: ({ agent, questions, signal }) => {
              const questionsHere = links.questionsOf(agent)
              if (questionsHere === undefined) return Promise.reject(new Error(`no browser session is open for agent ${agent.id}`))
              // The ask's id in the log (logged before the provider is asked): the panel's id on every server.
              return questionsHere.ask(questions, signal, loggedQuestionId(agent.session.events, questions))
            },
          }),
        )
      },
    })
  } catch (error) {
    ctx.dispose()
    throw error
  }
  return ctx
}
