import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context, Fiber } from '@planmode/context'
import { PLAN_COMMAND_REPLIES, planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import type { Agent, AskRequest, CommandResult, SessionEvent, UserAnswer } from '@planmode/seams'
import { createConformanceModel, type ConformanceModel, type ConformanceResponse } from '@planmode/scripted-model'
import type { HostDuty } from './duties.js'
import { handoffModelsOf } from './handoff-models.js'
import { HostConformanceError } from './host-conformance-error.js'
import type { ConformanceEnvironment, ConformanceHost, HostFactory } from './host-adapter.js'
import { logSummary, loggedUserTexts, ofType, userTextsOf } from './log-readers.js'

/** The guidance text the kit configures plan-policy with. */
export const KIT_SECTION = 'CONFORMANCE PLAN GUIDANCE: explore with reads only, change nothing, present a plan with exit_plan_mode.'

/** The read-only tool the kit registers so that a turn can take several steps. */
export const KIT_READ_TOOL = 'conformance_read'

/** Where the guidance goes (plan-policy's `placement`). */
export type KitPlacement = 'system' | 'transcript'

/** The plan layers the kit loaded, by name, so a case can dispose them. */
export interface KitLayers {
  readonly core: Fiber
  readonly policy: Fiber
  readonly commands: Fiber
  readonly tool: Fiber
  readonly projection: Fiber
  readonly history: Fiber
}

/** An answer the kit's question provider gives, or a function of the ask. */
export type KitAnswer = readonly UserAnswer[] | ((request: AskRequest) => Promise<readonly UserAnswer[]>)

/** The services the plan layers use, and the members the kit calls on each. */
const SERVICES = {
  systemPrompt: ['section', 'assemble'],
  tools: ['register', 'get', 'schemas', 'execute'],
  commands: ['register', 'list', 'execute'],
  userQuestions: ['ask', 'registerProvider'],
  sessionProjections: ['register', 'keys', 'snapshot', 'onChange'],
} as const

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * One case's view of the host under test: builds it, loads the plan layers,
 * scripts the model and the question provider, and turns every failure into
 * a {@link HostConformanceError} naming the case's duty.
 */
export class Harness {
  /** Every ask the provider received, in order. */
  readonly asks: AskRequest[] = []
  /** Answers the provider gives, consumed in order. */
  readonly answers: KitAnswer[] = []
  private current: ConformanceHost | undefined
  /** How many times the agent/pre-step waterfall ran, by session id (the kit's own listener counts). */
  private readonly preSteps = new Map<string, number>()
  private currentLayers: KitLayers | undefined
  private readonly closed = new Set<ConformanceHost>()

  private readonly environment: ConformanceEnvironment

  private constructor(
    readonly duty: HostDuty,
    private readonly factory: HostFactory,
    /** The scripted model every request of the case goes to. */
    readonly model: ConformanceModel,
    dir: string,
    private readonly timeoutMs: number,
  ) {
    this.environment = { model, dir, models: handoffModelsOf(model).models }
  }

  /** Builds the harness for one case: a fresh directory and model (rejects when the directory cannot be made). */
  static async create(duty: HostDuty, factory: HostFactory, timeoutMs: number): Promise<Harness> {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-conformance-'))
    return new Harness(duty, factory, createConformanceModel(), dir, timeoutMs)
  }

  get host(): ConformanceHost {
    if (this.current === undefined) this.fail('the case used the host before starting it (a bug of the kit)')
    return this.current
  }

  get context(): Context {
    return this.host.context
  }

  get layers(): KitLayers {
    if (this.currentLayers === undefined) this.fail('the plan layers are not loaded')
    return this.currentLayers
  }

  /** Throws a {@link HostConformanceError} of this case's duty. */
  fail(message: string, cause?: unknown): never {
    throw new HostConformanceError(this.duty, message, cause === undefined ? undefined : { cause })
  }

  /** Fails with `message` unless `condition` holds. */
  check(condition: boolean, message: string | (() => string)): asserts condition {
    if (!condition) this.fail(typeof message === 'function' ? message() : message)
  }

  /** Fails, naming `duty` rather than this case's, unless `condition` holds. */
  checkDuty(duty: HostDuty, condition: boolean, message: string | (() => string)): asserts condition {
    if (!condition) throw new HostConformanceError(duty, typeof message === 'function' ? message() : message)
  }

  /** Awaits one host operation: a throw or a hang past the timeout fails the case, naming `what`. */
  async within<T>(what: string, operation: () => T | Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HostConformanceError(this.duty, `${what} did not settle within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      )
    })
    try {
      return await Promise.race([Promise.resolve().then(operation), timeout])
    } catch (error) {
      if (HostConformanceError.isInstance(error)) throw error
      this.fail(`${what} threw: ${messageOf(error)}`, error)
    } finally {
      clearTimeout(timer)
    }
  }

  /** Builds the host, checks its services and loads the plan layers, a question provider and the kit's read tool. */
  async start(placement: KitPlacement = 'system'): Promise<ConformanceHost> {
    const host = await this.within('the host factory', () => this.factory(this.environment))
    this.current = host
    const ctx = host.context
    this.checkDuty(
      'services',
      typeof ctx?.plugin === 'function' && typeof ctx.get === 'function',
      'the host has no `context` (a @planmode/context Context)',
    )
    for (const [name, members] of Object.entries(SERVICES)) {
      const service = ctx.get(name as keyof typeof SERVICES) as unknown as Record<string, unknown> | undefined
      this.checkDuty('services', service !== undefined, `the host's context provides no "${name}" service`)
      for (const member of members) {
        this.checkDuty('services', typeof service[member] === 'function', `the "${name}" service has no ${member}() method`)
      }
    }
    this.currentLayers = await this.within('loading the plan layers into the host context', () => this.loadLayers(ctx, placement))
    ctx.on('agent/pre-step', async (payload, next) => {
      const id = payload.agent?.session?.id
      if (id !== undefined) this.preSteps.set(id, (this.preSteps.get(id) ?? 0) + 1)
      return next()
    })
    ctx.require('userQuestions').registerProvider({
      ask: async (request) => {
        this.asks.push(request)
        const next = this.answers.shift()
        if (next === undefined) throw new Error('conformance: the case scripted no answer for this question')
        return typeof next === 'function' ? next(request) : next
      },
    })
    ctx.require('tools').register<{ path: string }, string>({
      name: KIT_READ_TOOL,
      description: 'Reads a file (conformance kit).',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      annotations: { readOnlyHint: true },
      execute: ({ path }) => `contents of ${path}`,
    })
    return host
  }

  /** Loads plan-core and every layer into `ctx` (plan-core first). */
  loadLayers(ctx: Context, placement: KitPlacement): KitLayers {
    const core = ctx.plugin(planCorePlugin)
    return {
      core,
      policy: ctx.plugin(planPolicyPlugin, { section: KIT_SECTION, placement }),
      commands: ctx.plugin(planCommandsPlugin),
      tool: ctx.plugin(planToolPlugin),
      projection: ctx.plugin(planProjectionPlugin),
      history: ctx.plugin(planHistoryPlugin),
    }
  }

  /** Closes the running host and starts another over the same directory (the restart cases). */
  async restart(placement: KitPlacement = 'system'): Promise<ConformanceHost> {
    await this.closeHost()
    this.currentLayers = undefined
    this.current = undefined
    return this.start(placement)
  }

  private async closeHost(): Promise<void> {
    const host = this.current
    if (host === undefined || this.closed.has(host)) return
    this.closed.add(host)
    await this.within('closing the host', () => host.close?.())
  }

  /** A new root agent, or a child of `owner`. */
  agent(owner?: Agent): Promise<Agent> {
    return this.within(owner === undefined ? 'createAgent()' : 'createAgent({ owner })', () =>
      this.host.createAgent(owner === undefined ? undefined : { owner }),
    )
  }

  /** Scripts the model's next responses. */
  script(...responses: ConformanceResponse[]): void {
    this.model.push(...responses)
  }

  /**
   * Runs one turn and checks the model got exactly the scripted requests:
   * no request past the script, and no scripted reply left over (a host
   * that took fewer steps than scripted). With `mayReject`, a prompt the
   * host rejects is accepted (a turn a pre-step rejected) and its error
   * returned; the log decides the rest.
   */
  async prompt(agent: Agent, text: string, options: { readonly mayReject?: boolean } = {}): Promise<unknown> {
    const before = this.model.overruns.length
    const requestsBefore = this.model.requests.length
    const logged = agent.session.events.length
    const preSteps = this.preSteps.get(agent.session.id) ?? 0
    const what = `prompt(${JSON.stringify(text)})`
    let rejection: unknown
    await this.within(what, async () => {
      try {
        await this.host.prompt(agent, text)
      } catch (error) {
        if (options.mayReject !== true) throw error
        rejection = error
      }
    })
    const errors = this.model.scriptErrors
    if (HostConformanceError.isInstance(errors[0])) throw errors[0]
    if (errors.length > 0) this.fail(`while the model answered, the case's own step failed: ${messageOf(errors[0])}`, errors[0])
    this.check(
      this.model.overruns.length === before,
      () =>
        `prompt(${JSON.stringify(text)}) sent request #${this.model.overruns[before]} but the case scripted fewer; the host took a step it should not have. Log: ${logSummary(agent.session.events)}`,
    )
    const left = this.model.remaining
    this.checkDuty(
      'turns-and-steps',
      left === 0,
      `${what} sent ${this.model.requests.length - requestsBefore} request(s) and left ${left} scripted reply(ies) unanswered: the model called tools but the host took no next step. Log: ${logSummary(agent.session.events)}`,
    )
    this.checkTurnLogged(agent, logged, what)
    this.checkPreStepRan(agent, logged, preSteps, what)
    return rejection
  }

  /**
   * Checks, naming `turns-and-steps`, the turn a prompt the case ran itself
   * (not through {@link Harness.prompt}) logged from index `from`: one
   * turn/start, then its turn/end, every step inside them.
   */
  checkTurn(agent: Agent, from: number, what: string): void {
    this.checkTurnLogged(agent, from, what)
  }

  /**
   * Checks, naming `turns-and-steps`, that the events a prompt logged from
   * index `from` hold one turn/start, then its turn/end, with each step/start
   * of it closed by its step/end inside the turn: every plan case reads
   * idle and mid-turn from these events. Left to the `turns-and-steps` case
   * itself, which checks them in its own words.
   */
  private checkTurnLogged(agent: Agent, from: number, what: string): void {
    if (this.duty === 'turns-and-steps') return
    const events = agent.session.events.slice(from)
    const frame = events.filter((event) => event.type.startsWith('turn/') || event.type.startsWith('step/'))
    const starts = ofType(frame, 'turn/start')
    const ends = ofType(frame, 'turn/end')
    const open = new Set<number>()
    let nested = true
    for (const event of frame) {
      const { step } = event.data as { step?: number }
      if (event.type === 'step/start' && step !== undefined) open.add(step)
      else if (event.type === 'step/end' && step !== undefined && !open.delete(step)) nested = false
      else if (event.type === 'turn/end' && open.size > 0) nested = false
    }
    const ok =
      starts.length === 1 &&
      ends.length === 1 &&
      ends[0]!.data.turn === starts[0]!.data.turn &&
      frame[0] === starts[0] &&
      frame.at(-1) === ends[0] &&
      nested &&
      open.size === 0
    this.checkDuty(
      'turns-and-steps',
      ok,
      `${what} must log one turn/start, then its turn/end, with every step/start … step/end of the turn inside them (plan-core reads idle and mid-turn from these events); it logged ${frame.map((event) => event.type).join(' ') || 'none of them'}. Log: ${logSummary(agent.session.events)}`,
    )
  }

  /**
   * Checks, naming `services`, that the agent/pre-step waterfall ran at least
   * once per step the prompt logged (once before each step, and once more
   * for a step it rejected): the plan layers act only there. Left to the
   * `services` case itself.
   */
  private checkPreStepRan(agent: Agent, from: number, before: number, what: string): void {
    if (this.duty === 'services') return
    const steps = ofType(agent.session.events.slice(from), 'step/start').length
    const ran = (this.preSteps.get(agent.session.id) ?? 0) - before
    this.checkDuty(
      'services',
      ran >= steps,
      `the agent/pre-step waterfall must run once before each step: ${what} logged ${steps} step(s), and the waterfall ran ${ran} time(s)`,
    )
  }

  /** Runs a command line through the host's `commands` service. */
  command(agent: Agent, line: string): Promise<CommandResult | undefined> {
    return this.within(`commands.execute(${JSON.stringify(line)})`, () => this.context.require('commands').execute({ agent, line }))
  }

  /**
   * Runs a `/plan` line while a step is in flight (from a scripted
   * response) and checks it waits for the next step: plan-core reads the
   * open turn from the log, so a commit here means the turn is not logged.
   */
  async commandDuringStep(agent: Agent, line: string): Promise<void> {
    const result = await this.command(agent, line)
    const entering = PLAN_COMMAND_REPLIES.entering
    this.checkDuty(
      'turns-and-steps',
      result?.text === entering,
      `${line} during a step must wait for the next step (${JSON.stringify(entering)}): plan-core reads the open turn from the log (a turn/start with no turn/end yet); it answered ${JSON.stringify(result?.text)}`,
    )
  }

  /** Checks, naming `request-header`, that the agent's log has a request/header (the notices depend on it). */
  checkHeaderLogged(agent: Agent): void {
    const events = agent.session.events
    this.checkDuty(
      'request-header',
      events.some((event) => event.type === 'request/header'),
      `the log has no request/header after a request; plan-core tells the model nothing until the first one (SPEC §3.4). Log: ${logSummary(events)}`,
    )
  }

  /**
   * Checks, naming `command-args`, that every logged command/run has string
   * args (the restart rebuild and the plan projection read them), and, for
   * each line of `typed`, that its command/run logged the text after the
   * name (compared trimmed), which is what its handler was given.
   */
  checkCommandRecords(agent: Agent, typed: Readonly<Record<string, string>> = {}): void {
    const runs = ofType(agent.session.events, 'command/run')
    for (const run of runs) {
      const args = (run.data as { args?: unknown }).args
      this.checkDuty(
        'command-args',
        typeof args === 'string',
        `command/run of /${run.data.name} has ${args === undefined ? 'no args' : `args ${JSON.stringify(args)}`}; args must always be a string ('' after a bare name)`,
      )
    }
    for (const [line, args] of Object.entries(typed)) {
      const name = line.slice(1).split(/\s/, 1)[0]
      this.checkDuty(
        'command-args',
        runs.some((run) => run.data.name === name && run.data.args.trim() === args),
        `${JSON.stringify(line)} must log command/run { name: '${name}', args: ${JSON.stringify(args)} } (the text after the name, the handler's input); the log has ${JSON.stringify(runs.map((run) => run.data))}`,
      )
    }
  }

  /**
   * Checks, naming `transcript-from-log`, that each request the model got
   * carries the user messages the agent's log holds before that step's
   * step/start: the text of each logged block as one text part of a user
   * message, verbatim and in log order (consecutive messages may share one
   * model message). The agent's steps must be all of the model's requests
   * (`turns-and-steps` otherwise).
   */
  checkTranscript(agent: Agent): void {
    const events = agent.session.events
    const starts = ofType(events, 'step/start')
    this.checkDuty(
      'turns-and-steps',
      starts.length === this.model.requests.length,
      `every model request must be a logged step: the model got ${this.model.requests.length} request(s), the log has ${starts.length} step/start(s). Log: ${logSummary(events)}`,
    )
    starts.forEach((start, index) => {
      const logged = loggedUserTexts(events.slice(0, events.indexOf(start)))
      const sent = userTextsOf(this.model.requests[index]!)
      this.checkDuty(
        'transcript-from-log',
        JSON.stringify(sent) === JSON.stringify(logged),
        `request #${index + 1} must carry the user messages logged before its step, in order: logged ${JSON.stringify(logged)}, sent ${JSON.stringify(sent)}`,
      )
    })
  }

  /** The agent's log as it is now (read again each time). */
  events(agent: Agent): readonly SessionEvent[] {
    return agent.session.events
  }

  /** Closes the host and removes the case's directory (a failure to remove it rejects with the file system's error). */
  async dispose(): Promise<void> {
    try {
      await this.closeHost()
    } finally {
      await rm(this.environment.dir, { recursive: true, force: true })
    }
  }
}
