import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import type { HostAgent, HostSession } from '@planmode/host'
import type { PlanModeState } from '@planmode/plan-core'
import { RECOMMENDED_CHILD_SECTION } from '@planmode/plan-policy'
import type { PlanProgressView } from '@planmode/plan-progress/types'
import type { PlanHistoryView } from '@planmode/plan-projection/types'
import { UserQuestionError, type Session, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { printableLine } from '../render/printable.js'
import type { Style } from '../render/style.js'
import { earlierRevision } from './earlier-revision.js'
import { badgeOf, type PlanBadge, type PromptStatus, type TranscriptRenderer } from '../render/transcript.js'
import { basePromptSection, composePlanHost } from './compose-host.js'
import { interruptedCallIds, lastTurnInterrupted, type InterruptedTurn } from './interrupted-turns.js'
import { handedTo } from './handed-to.js'
import { runPlansCommand, type PlanOrigin, type ProgressTracking } from './plans-command.js'
import { refusedSteps } from './refused-steps.js'
import { loggedModel, type LoggedModel } from './session-model.js'
import { WORKSPACE_EVENT } from './workspace-event.js'
import { EXPLORE_EVENT } from '../workspace/explore-tool.js'

/** Answers the questions of one ask (a plan review, or the plan-mode entry question); `undefined` dismisses them. */
export type QuestionAnswerer = (
  questions: readonly UserQuestion[],
  signal: AbortSignal | undefined,
) => Promise<readonly UserAnswer[] | undefined>

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
  /** The models a review may hand the approved plan to (`--models`, SPEC §18), by id. */
  readonly models?: Readonly<Record<string, LanguageModelV3>>
  /** Offer "Approve in a fresh session" in the review (SPEC §18): the host then follows the new session. */
  readonly freshSessions?: boolean
  /** Compose the step check (SPEC §25): a step naming tests is done only when the workspace's tests pass. */
  readonly verifyTests?: boolean
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

/** A fresh session the host followed after a handoff (SPEC §18). */
export interface HandedOff {
  /** The session the plan was approved in (its turn has ended). */
  readonly from: HostSession
  readonly session: HostSession
  readonly agent: HostAgent
  /** The plan's title (the `plan/handoff`'s `title`). */
  readonly title: string
  /** The model id the review chose for it, if any. */
  readonly model?: string
}

/**
 * The demo's host: the reference host and the plan layers (plan-guard too with `guard`), composed through one context.
 * `session` and `agent` are the ones the terminal follows: the session it opened, until an approval hands the
 * plan to a fresh session (SPEC §18); from then on that session and its agent.
 */
export interface DemoHost {
  readonly ctx: Context
  readonly session: HostSession
  readonly agent: HostAgent
  /** Every session this host opened or followed, in order: the first one, then each fresh session of a handoff. */
  readonly sessions: readonly HostSession[]
  /** The `plan` projection's wire value for the session. */
  projection(): { readonly active: boolean; readonly pending: boolean } | undefined
  /** The `plan` projection's view, as a badge. */
  badge(): PlanBadge
  /** What the prompt shows beside the badge: the tracked plan's `done/total` and the model a handoff switched to. */
  status(): PromptStatus
  /** The `planHistory` projection's wire value: every plan revision of the session. */
  history(): PlanHistoryView | undefined
  /** The `planProgress` projection's wire value (SPEC §17): the tracked plan's steps. */
  progress(): PlanProgressView | undefined
  /** The session the plan of this one was handed on from (its first event is `plan/handoff`), if so. */
  origin(): PlanOrigin | undefined
  /** The id of the handoff model the agent uses now (`--models`), or `undefined` for the default model. */
  modelId(): string | undefined
  /** What the log said about the model when the session was reopened (a handoff model `--models` no longer names is `unknown`). */
  readonly resumedModel: LoggedModel | undefined
  /** Calls `listener` when the host follows a fresh session of a handoff (after its first events are shown). Returns the unsubscribe. */
  onHandedOff(listener: (handoff: HandedOff) => void): () => void
  /** Resolves once the agent is idle and so is the agent of any fresh session its turn handed the plan to. */
  idle(): Promise<void>
  /** The controller's view (`planMode.get`). */
  planState(): PlanModeState
  /** The log's last turn, when the process running it ended before it did (closed as interrupted). */
  lastInterrupted(): InterruptedTurn | undefined
  /** The calls interrupted turns left unanswered: a review open then shows as `interrupted`. */
  interruptedCalls(): ReadonlySet<string>
  /** Whether `line` names a command this terminal runs: the host's (`/plan`) or its own (`/plans`, `/help`, `/quit`, `/exit`). */
  isCommand(line: string): boolean
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
    error: (message, ...details) =>
      renderer.warn([message, ...details.map((detail) => (detail instanceof Error ? detail.message : String(detail)))].join(' ')),
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
            async ask({ agent, questions, signal }) {
              // The entry question (SPEC §12) asks whether to plan; it is not a review of a plan.
              const what = questions.some((question) => question.intent?.kind === 'plan-enter') ? 'question' : 'review'
              renderer.review(
                questions,
                earlierRevision(ctx.get('sessionProjections')?.snapshot(agent.session).values.planHistory, questions, agent.session.events),
              )
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
  const opened = options.resume === undefined ? await sessions.create() : await sessions.open(options.resume)
  const logged = opened.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
  if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== options.workspace) {
    await opened.append(WORKSPACE_EVENT, { root: options.workspace })
  }
  // A resumed session's next request header is told by what it changes from the logged one.
  const lastHeader = opened.events.filter((event) => event.type === 'request/header').at(-1)
  if (lastHeader !== undefined) renderer.known(lastHeader)
  const models = options.models ?? {}
  // A reopened session goes on with the model its log says a handoff chose (the host would start it on the default).
  const resumedModel = options.resume === undefined ? undefined : loggedModel(opened.events, models, options.model)
  const followed: HostSession[] = [opened]
  const current: { session: HostSession; agent: HostAgent } = {
    session: opened,
    agent: ctx
      .require('agents')
      .create({ session: opened, ...(resumedModel?.kind === 'model' ? { model: models[resumedModel.id]! } : {}) }),
  }
  const handoffListeners = new Set<(handoff: HandedOff) => void>()
  // A helper agent's session (a child the explore tool started for this session's agent) is shown under the explore call.
  const helpers = new Map<Session, TranscriptRenderer>()
  /**
   * Follows the fresh session of a handoff (SPEC §18) from here on: says so,
   * shows what it logged so far (its `plan/handoff` first), and logs the
   * workspace there so `--resume` of the new session works in the same folder.
   */
  const follow = (next: HostSession): void => {
    if (followed.includes(next)) return
    const data = (next.events[0]?.data ?? {}) as { title?: unknown; model?: unknown }
    const model = typeof data.model === 'string' ? `, with model ${printableLine(data.model)}` : ''
    const handing = current.session
    renderer.stage(`fresh session ${next.id}: “${printableLine(String(data.title))}”`)
    renderer.info(
      `the plan approved in ${handing.id} is carried out here${model}; that session stops here (--resume ${handing.id} reopens it)`,
    )
    current.session = next
    followed.push(next)
    for (const event of next.events) renderer.event(event)
    next
      .append(WORKSPACE_EVENT, { root: options.workspace })
      .catch((error: unknown) => renderer.warn(error instanceof Error ? error.message : String(error)))
  }
  ctx.on('session/event', ({ session: from, event }) => {
    if (from === current.session) {
      renderer.event(event)
      return
    }
    if (
      (event.type as string) === 'plan/handoff' &&
      (event.data as { from?: { session?: unknown } }).from?.session === current.session.id
    ) {
      follow(from as HostSession)
      return
    }
    if (event.type === EXPLORE_EVENT && event.data.parent.session === current.session.id)
      helpers.set(from, renderer.helper(from.id, RECOMMENDED_CHILD_SECTION))
    helpers.get(from)?.event(event)
  })
  ctx.on('agent/handed-off', ({ from, agent }) => {
    if (from !== current.agent) return
    const handing = current.session
    follow(agent.session as HostSession)
    current.agent = agent
    const data = (current.session.events[0]?.data ?? {}) as { title?: unknown; model?: unknown }
    const handoff: HandedOff = {
      from: followed[followed.indexOf(current.session) - 1] ?? handing,
      session: current.session,
      agent,
      title: typeof data.title === 'string' ? data.title : 'Plan',
      ...(typeof data.model === 'string' ? { model: data.model } : {}),
    }
    for (const listener of handoffListeners) listener(handoff)
  })
  const commands = ctx.require('commands')
  const planMode = ctx.require('planMode')
  const snapshot = () => ctx.get('sessionProjections')?.snapshot(current.session).values
  const progress = (): PlanProgressView | undefined => snapshot()?.planProgress
  const origin = (): PlanOrigin | undefined => {
    const first = current.session.events[0]
    if ((first?.type as string) !== 'plan/handoff') return undefined
    const data = first!.data as { from?: { session?: unknown }; title?: unknown }
    return { session: String(data.from?.session), title: typeof data.title === 'string' ? data.title : 'Plan' }
  }
  /** What `/plans progress` shows besides the projection: refused completions (SPEC §25), a plan handed to a fresh session (SPEC §18). */
  const trackingOf = (): ProgressTracking => {
    const events = current.session.events
    const handed = handedTo(events, current.session.id, options.sessionDir)
    const title =
      handed === undefined
        ? undefined
        : snapshot()?.planHistory?.revisions.find((revision) => revision.toolCallId === handed.toolCallId)?.title
    return {
      refused: refusedSteps(events, progress()),
      ...(handed === undefined ? {} : { handedTo: handed }),
      ...(title === undefined ? {} : { title }),
    }
  }
  const modelId = (): string | undefined => {
    const model = current.agent.model
    if (model === options.model) return undefined
    return Object.keys(models).find((id) => models[id] === model) ?? model.modelId
  }

  const help = (): string => {
    const rows: [string, string][] = commands
      .list()
      .map((command) => [`/${command.name}${command.input?.hint === undefined ? '' : ` ${command.input.hint}`}`, command.description])
    rows.push(['/plans [show N | diff A B | save [N] <file>]', 'The plan revisions of this session'])
    rows.push(['/plans progress', "The approved plan's steps and where each stands (update_plan)"])
    rows.push(['/help', 'Show this help'])
    rows.push(['/quit', 'Leave (the session stays on disk; --resume reopens it)'])
    const width = Math.max(...rows.map(([usage]) => usage.length)) + 2
    return [
      'Commands:',
      ...rows.map(([usage, what]) => `  ${usage.padEnd(width)}${what}`),
      'Anything else is a message to the model. Ctrl+C cancels a running turn; twice quits.',
    ].join('\n')
  }
  const ownCommands = new Set(['plans', 'help', 'quit', 'exit'])

  return {
    ctx,
    get session() {
      return current.session
    },
    get agent() {
      return current.agent
    },
    sessions: followed,
    projection: () => snapshot()?.plan,
    badge: () => badgeOf(snapshot()?.plan),
    status: () => {
      const view = progress()
      const model = modelId()
      return {
        ...(view !== undefined && view.plan !== null && view.total > 0 ? { progress: { done: view.done, total: view.total } } : {}),
        ...(model === undefined ? {} : { model }),
      }
    },
    history: () => snapshot()?.planHistory,
    progress,
    origin,
    modelId,
    resumedModel,
    onHandedOff(listener) {
      handoffListeners.add(listener)
      return () => handoffListeners.delete(listener)
    },
    async idle() {
      // A fresh session's turn starts before the handing turn's prompt resolves, so once the agent is idle the
      // terminal may follow another one: wait for that one too.
      for (;;) {
        const agent = current.agent
        await agent.idle()
        if (current.agent === agent) return
      }
    },
    planState: () => planMode.get(current.agent),
    lastInterrupted: () => lastTurnInterrupted(current.session.events),
    interruptedCalls: () => interruptedCallIds(current.session.events),
    isCommand(line) {
      const name = /^\/(\S+)/.exec(line.trim())?.[1]
      return name !== undefined && (ownCommands.has(name) || commands.list().some((command) => command.name === name))
    },
    async submit(line) {
      const text = line.trim()
      if (text === '') return 'ok'
      if (text === '/quit' || text === '/exit') return 'quit'
      if (text === '/help') {
        renderer.block(help())
        return 'ok'
      }
      if (text === '/plans' || text.startsWith('/plans ')) {
        const result = runPlansCommand(
          text.slice('/plans'.length),
          snapshot()?.planHistory,
          options.style,
          process.cwd(),
          interruptedCallIds(current.session.events),
          progress(),
          origin(),
          trackingOf(),
        )
        if (result.refused === true) renderer.warn(result.lines.join('\n'))
        else renderer.block(result.lines.join('\n'))
        if (result.markdown !== undefined) renderer.markdown(result.markdown)
        return 'ok'
      }
      if (text.startsWith('/')) {
        renderer.commandResult(await commands.execute({ agent: current.agent, line: text }), text)
        return 'ok'
      }
      const agent = current.agent
      if (agent.status === 'running') {
        agent.steer(text)
        renderer.info('(steered into the running turn)')
      } else {
        agent.prompt(text).catch((error: unknown) => renderer.warn(error instanceof Error ? error.message : String(error)))
      }
      return 'ok'
    },
    async close() {
      // The agent followed last first: a handoff starts its session's turn as the handing one ends.
      for (;;) {
        const agent = current.agent
        if (agent.status === 'running') await agent.cancel()
        await agent.idle()
        if (current.agent === agent) break
      }
      for (const session of followed) await session.settled()
      // The plan file's last write, before disposal drops it.
      await ctx.get('planFile')?.settled()
      for (const session of followed) await sessions.close(session)
      ctx.dispose()
    },
  }
}
