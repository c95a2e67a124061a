import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import type { HostAgent, HostSession } from '@planmode/host'
import type { PlanModeState } from '@planmode/plan-core'
import { RECOMMENDED_CHILD_SECTION } from '@planmode/plan-policy'
import type { PlanHistoryView } from '@planmode/plan-projection/types'
import { UserQuestionError, type Session, type UserAnswer, type UserQuestion } from '@planmode/seams'
import type { Style } from '../render/style.js'
import { badgeOf, type PlanBadge, type TranscriptRenderer } from '../render/transcript.js'
import { basePromptSection, composePlanHost } from './compose-host.js'
import { interruptedCallIds, lastTurnInterrupted, type InterruptedTurn } from './interrupted-turns.js'
import { runPlansCommand } from './plans-command.js'
import { WORKSPACE_EVENT } from './workspace-event.js'
import { EXPLORE_EVENT } from '../workspace/explore-tool.js'

/** Answers the questions of one ask (a plan review, or the plan-mode entry question); `undefined` dismisses them. */
export type QuestionAnswerer = (questions: readonly UserQuestion[], signal: AbortSignal | undefined) => Promise<readonly UserAnswer[] | undefined>

/** Options of {@link createDemoHost}. */
export interface DemoHostOptions {
  readonly sessionDir: string
  readonly workspace: string
  readonly model: LanguageModelV3
  /** The plan-policy section. */
  readonly section: string
  /** plan-policy's `placement` (SPEC §13); plan-policy's default (`system`) when absent. */
  readonly placement?: 'system' | 'transcript'
  /** Compose `@planmode/plan-guard` (SPEC §14): in plan mode, tools that are not read-only are refused. */
  readonly guard?: boolean
  /** Compose `@planmode/plan-file` with this folder (`--plan-dir`). */
  readonly planDir?: string
  /** plan-tool's `requiredSections` (SPEC §20, `--require-sections`): a plan without one of these headings goes back to the model. */
  readonly requiredSections?: readonly string[]
  readonly renderer: TranscriptRenderer
  /** The transcript's style (`/plans diff` colours with it). */
  readonly style: Style
  readonly answer: QuestionAnswerer
  /** Reopen this session id instead of creating one. */
  readonly resume?: string
  readonly maxSteps?: number
}

/** What a submitted line led to. */
export type SubmitOutcome = 'ok' | 'quit'

/** The demo's host: the reference host and the plan layers (plan-guard too with `guard`), composed through one context. */
export interface DemoHost {
  readonly ctx: Context
  readonly session: HostSession
  readonly agent: HostAgent
  /** The `plan` projection's wire value for the session. */
  projection(): { readonly active: boolean; readonly pending: boolean } | undefined
  /** The `plan` projection's view, as a badge. */
  badge(): PlanBadge
  /** The `planHistory` projection's wire value: every plan revision of the session. */
  history(): PlanHistoryView | undefined
  /** The controller's view (`planMode.get`). */
  planState(): PlanModeState
  /** The log's last turn, when the process running it ended before it did (closed as interrupted). */
  lastInterrupted(): InterruptedTurn | undefined
  /** The calls interrupted turns left unanswered: a review open then shows as `interrupted`. */
  interruptedCalls(): ReadonlySet<string>
  /** Runs one input line: a slash command, `/help`, `/quit`, or a message. Does not wait for the turn. */
  submit(line: string): Promise<SubmitOutcome>
  /** Waits for pending appends, closes the session and disposes every plugin. */
  close(): Promise<void>
}

/** Composes the host (session store, runtimes, agent loop) with the plan layers and the workspace tools; plan-guard only with `guard`. */
export async function createDemoHost(options: DemoHostOptions): Promise<DemoHost> {
  const { renderer } = options
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message, ...details) => renderer.warn([message, ...details.map(String)].join(' ')),
    error: (message, ...details) => renderer.warn([message, ...details.map((detail) => (detail instanceof Error ? detail.message : String(detail)))].join(' ')),
  }
  const ctx = new Context({ logger })
  try {
    // The reference host, every plan layer, plan-guard when asked for, and the workspace tools.
    composePlanHost(ctx, options)
    // The demo's own pieces: a base prompt, the terminal review.
    ctx.plugin({
      name: '@planmode/demo/base-prompt',
      requires: ['systemPrompt'],
      apply: (child) => {
        child.effect(child.require('systemPrompt').section({ name: 'demo:base', order: 10, text: basePromptSection(options.workspace) }))
      },
    })
    ctx.plugin({
      name: '@planmode/demo/terminal-questions',
      requires: ['userQuestions'],
      apply: (child) => {
        child.effect(
          child.require('userQuestions').registerProvider({
            async ask({ questions, signal }) {
              // The entry question (SPEC §12) asks whether to plan; it is not a review of a plan.
              const what = questions.some((question) => question.intent?.kind === 'plan-enter') ? 'question' : 'review'
              renderer.review(questions)
              const answers = await options.answer(questions, signal)
              if (signal?.aborted === true) throw new UserQuestionError('ASK_ABORTED', `the ${what} was aborted`)
              if (answers === undefined) {
                renderer.info(`(${what} dismissed)`)
                throw new UserQuestionError('ASK_CANCELLED', `the user dismissed the ${what} to type instead`)
              }
              renderer.answer(answers, questions)
              return answers
            },
          }),
        )
      },
    })
  } catch (error) {
    ctx.dispose()
    throw error
  }

  const sessions = ctx.require('sessions')
  const session = options.resume === undefined ? await sessions.create() : await sessions.open(options.resume)
  const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
  if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== options.workspace) {
    await session.append(WORKSPACE_EVENT, { root: options.workspace })
  }
  // A resumed session's next request header is told by what it changes from the logged one.
  const lastHeader = session.events.filter((event) => event.type === 'request/header').at(-1)
  if (lastHeader !== undefined) renderer.known(lastHeader)
  // A helper agent's session (a child the explore tool started for this session's agent) is shown under the explore call.
  const helpers = new Map<Session, TranscriptRenderer>()
  ctx.on('session/event', ({ session: from, event }) => {
    if (from === session) {
      renderer.event(event)
      return
    }
    if (event.type === EXPLORE_EVENT && event.data.parent.session === session.id) helpers.set(from, renderer.helper(from.id, RECOMMENDED_CHILD_SECTION))
    helpers.get(from)?.event(event)
  })
  const agent = ctx.require('agents').create({ session })
  const commands = ctx.require('commands')
  const planMode = ctx.require('planMode')

  const help = (): string => {
    const lines = ['Commands:']
    for (const command of commands.list()) {
      const hint = command.input?.hint === undefined ? '' : ` ${command.input.hint}`
      lines.push(`  /${command.name}${hint}`.padEnd(24) + command.description)
    }
    lines.push('  /plans [show N | diff A B | save [N] <file>]'.padEnd(24) + ' The plan revisions of this session (the demo host handles it)')
    lines.push('  /help'.padEnd(24) + 'Show this help')
    lines.push('  /quit'.padEnd(24) + 'Leave (the session stays on disk; --resume reopens it)')
    lines.push('Anything else is a message to the model. Ctrl+C cancels a running turn; twice quits.')
    return lines.join('\n')
  }

  return {
    ctx,
    session,
    agent,
    projection: () => ctx.get('sessionProjections')?.snapshot(session).values.plan,
    badge: () => badgeOf(ctx.get('sessionProjections')?.snapshot(session).values.plan),
    history: () => ctx.get('sessionProjections')?.snapshot(session).values.planHistory,
    planState: () => planMode.get(agent),
    lastInterrupted: () => lastTurnInterrupted(session.events),
    interruptedCalls: () => interruptedCallIds(session.events),
    async submit(line) {
      const text = line.trim()
      if (text === '') return 'ok'
      if (text === '/quit' || text === '/exit') return 'quit'
      if (text === '/help') {
        renderer.block(help())
        return 'ok'
      }
      if (text === '/plans' || text.startsWith('/plans ')) {
        const history = ctx.get('sessionProjections')?.snapshot(session).values.planHistory
        const result = runPlansCommand(text.slice('/plans'.length), history, options.style, process.cwd(), interruptedCallIds(session.events))
        if (result.refused === true) renderer.warn(result.lines.join('\n'))
        else renderer.block(result.lines.join('\n'))
        if (result.markdown !== undefined) renderer.markdown(result.markdown)
        return 'ok'
      }
      if (text.startsWith('/')) {
        renderer.commandResult(await commands.execute({ agent, line: text }), text)
        return 'ok'
      }
      if (agent.status === 'running') {
        agent.steer(text)
        renderer.info('(steered into the running turn)')
      } else {
        agent.prompt(text).catch((error: unknown) => renderer.warn(error instanceof Error ? error.message : String(error)))
      }
      return 'ok'
    },
    async close() {
      if (agent.status === 'running') await agent.cancel()
      await agent.idle()
      await session.settled()
      // The plan file's last write, before disposal drops it.
      await ctx.get('planFile')?.settled()
      await sessions.close(session)
      ctx.dispose()
    },
  }
}
