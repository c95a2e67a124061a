/**
 * Long tests bounded by their work, not by one wall-clock timeout: the work
 * runs in lanes, each lane says which step it is on (a kill, a wait for a
 * child's line), and only a step that stays put for longer than its bound
 * (generous on an idle machine, times the load factor when it is checked)
 * stops the test, with a report of what every lane was doing. A slow
 * machine makes the test slower, not red.
 */
import { loadFactor, machineLoad } from './load.js'

/** Options of {@link boundedWork}. */
export interface BoundedWorkOptions {
  /** Names the work in a failure: `crash test (200 kills)`. */
  readonly what: string
  /**
   * How long one step may take on an idle machine, in ms. A step still on
   * after `stepMs × loadFactor()` (the factor read when it is checked)
   * stops the work. Make it many times what a step takes: it catches hangs,
   * it measures nothing.
   */
  readonly stepMs: number
  /** Stops the work when it aborts (vitest's `context.signal`: the run was cancelled). */
  readonly signal?: AbortSignal
}

/** Options of {@link Work.lane}. */
export interface LaneOptions {
  /** How many units the lane will do (for the report: `57 of 100 kills done`). */
  readonly total?: number
  /** What a unit is, plural (`kills`, `rounds`). Default `units`. */
  readonly unit?: string
}

/** One sequence of steps inside a {@link boundedWork}. */
export interface WorkLane {
  /** The lane's name in the report (`lane 0`). */
  readonly name: string
  /** Aborts, with the reason the work stopped, once the work has stopped. */
  readonly signal: AbortSignal
  /**
   * Moves the lane on to its next step, which restarts its clock: what the
   * lane does or waits for now (`round 57 (seed 123): child pid 4567,
   * waiting for its ready line`). `detail`, called only when a report is
   * written, says how far the step got (acknowledged appends, the child's
   * last stderr).
   *
   * @throws the reason the work stopped, once it has: a stopped lane does
   *   not go on to another step.
   */
  step(doing: string, detail?: () => string): void
  /**
   * {@link WorkLane.step} `doing`, then waits for `promise`; rejects at once
   * with the reason the work stopped if it stops first, so a lane waiting
   * on something that will never come does not outlive the work.
   */
  wait<T>(promise: Promise<T>, doing: string, detail?: () => string): Promise<T>
  /** Counts one unit of the lane's work as done (its clock goes on). */
  done(): void
}

/** What the body of a {@link boundedWork} gets: its own lane (`main`), and more. */
export interface Work extends WorkLane {
  /**
   * Runs `body` as a new lane, side by side with the others. When it
   * rejects, the whole work stops: the other lanes throw at their next
   * {@link WorkLane.step}. `main` is not checked while other lanes run.
   */
  lane<T>(name: string, body: (lane: WorkLane) => Promise<T>, options?: LaneOptions): Promise<T>
  /** What every lane is doing now, one line each (what a failure prints). */
  report(): string
}

/** The error a {@link boundedWork} stops with when a step outlasts its bound: `report` says what was running. */
export class StuckWorkError extends Error {
  override readonly name = 'StuckWorkError'
  /** The lane whose step outlasted its bound. */
  readonly lane: string
  /** What every lane was doing. */
  readonly report: string
  constructor(message: string, lane: string, report: string) {
    super(message)
    this.lane = lane
    this.report = report
  }
}

interface LaneState {
  readonly name: string
  readonly total: number | undefined
  readonly unit: string
  doing: string
  detail: (() => string) | undefined
  since: number
  units: number
  /** The lane's body has settled. */
  ended: boolean
  endedAt: number
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/**
 * Runs `body` (a test's work) and resolves with its result once it and
 * every lane it started have settled. It rejects with a
 * {@link StuckWorkError} as soon as one step of a lane (or of `main` once
 * no other lane runs) has been on for longer than
 * `stepMs × loadFactor()`, with what every lane was doing; with the first
 * lane's error when a lane fails (after the other lanes stopped at their
 * next step); and with the signal's reason when `options.signal` aborts.
 * The test's own timeout can then be off (`0`): the number of steps is
 * fixed by the test, and each is bounded.
 *
 * @example
 * ```ts
 * it('200 kills', ({ signal }) => boundedWork({ what: 'crash test', stepMs: 30_000, signal }, async (work) => {
 *   await Promise.all([0, 1].map((index) => work.lane(`lane ${index}`, async (lane) => {
 *     for (let round = 0; round < 100; round++) {
 *       lane.step(`round ${round}: child pid ${child.pid}, waiting for its exit`, () => `${acks} acks seen`)
 *       await exited
 *       lane.done()
 *     }
 *   }, { total: 100, unit: 'kills' })))
 * }), 0)
 * ```
 */
export function boundedWork<T>(options: BoundedWorkOptions, body: (work: Work) => Promise<T>): Promise<T> {
  const { what, stepMs } = options
  if (!(stepMs > 0)) throw new RangeError(`boundedWork: stepMs must be a positive number of ms, not ${String(stepMs)}`)
  const started = performance.now()
  const stop = new AbortController()
  const lanes: LaneState[] = []
  const running = new Set<Promise<unknown>>()
  const main: LaneState = newLane('main', undefined, undefined)

  function newLane(name: string, total: number | undefined, unit: string | undefined): LaneState {
    return {
      name,
      total,
      unit: unit ?? 'units',
      doing: 'starting',
      detail: undefined,
      since: performance.now(),
      units: 0,
      ended: false,
      endedAt: 0,
    }
  }

  function describe(state: LaneState, now: number): string {
    const progress = state.total === undefined ? `${state.units} ${state.unit} done` : `${state.units} of ${state.total} ${state.unit} done`
    if (state.ended) return `- ${state.name}: finished ${seconds(now - state.endedAt)} ago (${progress})`
    let detail = ''
    if (state.detail !== undefined) {
      try {
        detail = `\n    so far: ${state.detail()}`
      } catch (error) {
        detail = `\n    so far: (the detail threw: ${error instanceof Error ? error.message : String(error)})`
      }
    }
    return `- ${state.name} (${progress}), for ${seconds(now - state.since)}: ${state.doing}${detail}`
  }

  function report(): string {
    const now = performance.now()
    // main is shown once it is on its own (its lanes done), or if it never started any.
    const shown = main.ended || lanes.some((state) => !state.ended) ? lanes : [...lanes, main]
    return [`${what}, ${seconds(now - started)} in (${machineLoad()}):`, ...shown.map((state) => describe(state, now))].join('\n')
  }

  function handle(state: LaneState): WorkLane {
    const step = (doing: string, detail?: () => string): void => {
      stop.signal.throwIfAborted()
      state.doing = doing
      state.detail = detail
      state.since = performance.now()
    }
    return {
      name: state.name,
      signal: stop.signal,
      step,
      wait(promise, doing, detail) {
        if (stop.signal.aborted) return Promise.reject(stop.signal.reason)
        step(doing, detail)
        let onStop!: () => void
        const stopped = new Promise<never>((_, reject) => {
          onStop = () => reject(stop.signal.reason)
          stop.signal.addEventListener('abort', onStop, { once: true })
        })
        return Promise.race([promise, stopped]).finally(() => stop.signal.removeEventListener('abort', onStop))
      },
      done() {
        state.units += 1
      },
    }
  }

  let failStuck!: (error: Error) => void
  const stuck = new Promise<never>((_, reject) => (failStuck = reject))
  stuck.catch(() => {})

  const check = (): void => {
    if (stop.signal.aborted) return
    const now = performance.now()
    const factor = loadFactor()
    const bound = stepMs * factor
    const othersRun = lanes.some((state) => !state.ended)
    // main waits for its lanes while they run; its clock restarts when the last one ends.
    const watched = othersRun ? lanes.filter((state) => !state.ended) : main.ended ? [] : [main]
    for (const state of watched) {
      const since = state === main ? Math.max(main.since, ...lanes.map((lane) => lane.endedAt)) : state.since
      if (now - since <= bound) continue
      const text = report()
      const error = new StuckWorkError(
        `${what}: stuck: ${state.name} has been on one step for ${seconds(now - since)}, past its bound of ${seconds(bound)} ` +
          `(${seconds(stepMs)} on an idle machine × load factor ${factor.toFixed(1)}). What was running:\n${text}`,
        state.name,
        text,
      )
      stop.abort(error)
      failStuck(error)
      return
    }
  }
  const timer = setInterval(check, Math.max(10, Math.min(1_000, stepMs / 10)))

  const onAbort = (): void => {
    const reason: unknown = options.signal?.reason
    const error = reason instanceof Error ? reason : new Error(`${what}: cancelled (${String(reason)})`)
    if (!stop.signal.aborted) stop.abort(error)
    failStuck(error)
  }
  if (options.signal?.aborted) onAbort()
  else options.signal?.addEventListener('abort', onAbort, { once: true })

  const work: Work = {
    ...handle(main),
    lane<L>(name: string, laneBody: (lane: WorkLane) => Promise<L>, laneOptions: LaneOptions = {}): Promise<L> {
      stop.signal.throwIfAborted()
      const state = newLane(name, laneOptions.total, laneOptions.unit)
      lanes.push(state)
      const result = (async () => laneBody(handle(state)))()
      const settled = result.then(
        () => undefined,
        (error: unknown) => {
          // The first failing lane stops the others.
          if (!stop.signal.aborted) stop.abort(error)
        },
      )
      running.add(settled)
      void settled.finally(() => {
        state.ended = true
        state.endedAt = performance.now()
        running.delete(settled)
      })
      return result
    },
    report,
  }

  const whole = (async (): Promise<T> => {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown }
    try {
      outcome = { ok: true, value: await body(work) }
    } catch (error) {
      outcome = { ok: false, error }
      if (!stop.signal.aborted) stop.abort(error)
    }
    main.ended = true
    main.endedAt = performance.now()
    // Never resolve while a lane still runs (it would go on writing after the test).
    while (running.size > 0) await Promise.all(running)
    if (!outcome.ok) throw outcome.error
    // A lane failed while the body did not look (a lane it never awaited).
    if (stop.signal.aborted) throw stop.signal.reason
    return outcome.value
  })()

  return Promise.race([whole, stuck]).finally(() => {
    clearInterval(timer)
    options.signal?.removeEventListener('abort', onAbort)
    whole.catch(() => {})
  })
}
