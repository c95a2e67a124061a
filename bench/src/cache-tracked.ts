/**
 * The prompt cache with a tracked plan (SPEC §17, `@planmode/plan-progress`):
 * a session through the same host loop and loopback provider as the other
 * cache sessions, with plan-progress composed and placement 'transcript'.
 * Two plans with steps are approved; the model reports progress with
 * `update_plan` over several steps and turns, and some turns report none, so
 * plan-progress adds its messages: the first-step message after each
 * approval and a reminder at a turn's first step after a turn with no
 * progress. The run checks that those messages come where SPEC §17 puts them
 * and that every request's provider-order bytes start with the whole of the
 * previous request's: a check that fails the job (and `pnpm bench:quick`).
 */
import { UPDATE_PLAN, UPDATE_PLAN_MESSAGES, type PlanStepUpdate } from '@planmode/plan-progress'
import type { SessionEvent } from '@planmode/seams'
import { commonPrefix, measureRequests, providerOrder, type CacheTotals } from './cache-measure.js'
import type { MessageBytes } from './cache-rows.js'
import type { CacheScript, ScriptTurn } from './cache-script.js'
import type { ChatBody, ScriptedAnswer, ScriptedCall } from './cache-server.js'
import { runCacheSession, type CacheSessionRun } from './cache-session.js'

/** The first plan: its steps are the items of its `Steps` section. */
export const TRACKED_PLAN_STEPS = [
  '# Cache the session index',
  '',
  'The index is read from disk on every open; keep it in memory instead.',
  '',
  '## Steps',
  '',
  '1. Add an index cache to src/store/index.ts.',
  '2. Invalidate it on every append in src/store/append.ts.',
  '3. Use it in open() and list() of src/store/open.ts.',
  '4. Test a cold and a warm open in test/store.test.ts.',
].join('\n')

/** The second plan: a task list, its first item already done. */
export const TRACKED_PLAN_TASKS = [
  '# Retry only idempotent requests',
  '',
  '- [x] List the requests the client retries.',
  '- [ ] Mark the idempotent ones in src/retry/policy.ts.',
  '- [ ] Skip the retry for the others in src/retry/client.ts.',
].join('\n')

/** A progress message the model read: which one, and the turn (from 1) whose steps it was added to. */
export interface ProgressPoint {
  readonly kind: 'track' | 'remind'
  readonly turn: number
}

/** Where SPEC §17 puts the progress messages of {@link trackedScript}: after each approval, and at the turns after a turn with no progress while steps are open. */
export const TRACKED_PROGRESS: readonly ProgressPoint[] = [
  { kind: 'track', turn: 1 },
  { kind: 'remind', turn: 4 },
  { kind: 'remind', turn: 5 },
  { kind: 'track', turn: 8 },
  { kind: 'remind', turn: 10 },
]

const read = (path: string): ScriptedCall => ({ name: 'read', args: { path } })
const write = (path: string): ScriptedCall => ({ name: 'write', args: { path } })
const progress = (...updates: PlanStepUpdate[]): ScriptedCall => ({ name: UPDATE_PLAN, args: { updates } })
const answer = (text: string, ...calls: ScriptedCall[]): ScriptedAnswer => (calls.length === 0 ? { text } : { text, calls })

/**
 * Eleven turns: plan the first change in plan mode, approve it, carry it out
 * with `update_plan` over three turns with two turns of no progress between
 * (two reminders), finish it; then plan a second change, approve it, a turn
 * of no progress (a reminder) and finish it.
 */
export function trackedScript(): CacheScript {
  const turn = (t: Omit<ScriptTurn, 'cycle'>): ScriptTurn => ({ cycle: 0, ...t })
  const turns: ScriptTurn[] = [
    turn({
      before: ['/plan'],
      prompt: 'Plan how to cache the session index.',
      steps: [
        answer('Reading the store first.', read('src/store/index.ts')),
        { calls: [read('src/store/open.ts')] },
        { calls: [{ name: 'exit_plan_mode', args: { plan: TRACKED_PLAN_STEPS } }] },
        answer('Starting with step 1.', progress({ step: 1, status: 'in_progress' }), write('src/store/index.ts')),
        answer(
          'Step 1 is in; on to step 2.',
          progress({ step: 1, status: 'done' }, { step: 2, status: 'in_progress' }),
          write('src/store/append.ts'),
        ),
        answer('Steps 1 and 2 are in place; step 3 is next.'),
      ],
    }),
    turn({
      prompt: 'Go on with step 3.',
      steps: [
        answer(
          'Step 2 is done; step 3 now.',
          progress({ step: 2, status: 'done' }, { step: 3, status: 'in_progress' }),
          write('src/store/open.ts'),
        ),
        answer('open() and list() use the cache.'),
      ],
    }),
    turn({ prompt: 'Is the build green?', steps: [{ calls: [read('test/store.test.ts')] }, answer('The build is green.')] }),
    turn({ prompt: 'What did the tests say about open()?', steps: [answer('They pass; open() reads the cache when it is warm.')] }),
    turn({
      prompt: 'Finish the plan.',
      steps: [
        answer(
          'Step 3 is done; writing the tests.',
          progress({ step: 3, status: 'done' }, { step: 4, status: 'in_progress' }),
          write('test/store.test.ts'),
        ),
        { calls: [progress({ step: 4, status: 'done', note: 'a cold and a warm open' })] },
        answer('All four steps are done.'),
      ],
    }),
    turn({ prompt: 'Anything left on the plan?', steps: [answer('Nothing: every step is done.')] }),
    turn({ prompt: 'Run the store tests once more.', steps: [{ calls: [read('test/store.test.ts')] }, answer('They pass.')] }),
    turn({
      before: ['/plan'],
      prompt: 'Plan how to retry only idempotent requests.',
      steps: [
        { calls: [read('src/retry/policy.ts')] },
        { calls: [{ name: 'exit_plan_mode', args: { plan: TRACKED_PLAN_TASKS } }] },
        answer('Marking the idempotent requests.', progress({ step: 2, status: 'in_progress' }), write('src/retry/policy.ts')),
        answer('Step 2 is under way.'),
      ],
    }),
    turn({ prompt: 'How long will the rest take?', steps: [answer('Two small changes; not long.')] }),
    turn({
      prompt: 'Carry on.',
      steps: [
        answer(
          'Step 2 is done; now the client.',
          progress({ step: 2, status: 'done' }, { step: 3, status: 'in_progress' }),
          write('src/retry/client.ts'),
        ),
        { calls: [progress({ step: 3, status: 'done' })] },
        answer('Done: only idempotent requests are retried.'),
      ],
    }),
    turn({ prompt: 'Thanks.', steps: [answer('You are welcome.')] }),
  ]
  return { turns, cycles: [], netZero: [] }
}

/** The progress messages of a log, in order: which one (by its first line) and the turn of the step it was logged for. */
export function progressPoints(events: readonly SessionEvent[]): ProgressPoint[] {
  const out: ProgressPoint[] = []
  let turn = 0
  for (const event of events) {
    if (event.type === 'turn/start') turn = event.data.turn
    if (event.type !== 'user/message' || event.data.source?.kind !== 'plugin' || event.data.source.form !== 'progress') continue
    const text = event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    const kind = progressKind(text)
    if (kind === undefined)
      throw new Error(
        `cache bench, tracked plan: a progress message that is neither the first-step message nor a reminder: ${JSON.stringify(text.slice(0, 80))}`,
      )
    out.push({ kind, turn })
  }
  return out
}

/** Which progress message `text` is, by its first line. */
function progressKind(text: string): ProgressPoint['kind'] | undefined {
  if (text.startsWith(`${UPDATE_PLAN_MESSAGES.track}\n`)) return 'track'
  return text.startsWith(`${UPDATE_PLAN_MESSAGES.remind}\n`) ? 'remind' : undefined
}

/** The progress messages of a request body, by kind: how many, and their provider-order bytes (found by their first line). */
export function progressMessageBytes(body: ChatBody): { readonly track: MessageBytes; readonly remind: MessageBytes } {
  const out = { track: { count: 0, bytes: 0 }, remind: { count: 0, bytes: 0 } }
  for (const message of body.messages as ReadonlyArray<{ role?: unknown; content?: unknown }>) {
    if (message.role !== 'user' || typeof message.content !== 'string') continue
    const kind = progressKind(message.content)
    if (kind === undefined) continue
    out[kind].count++
    out[kind].bytes += Buffer.byteLength(`${JSON.stringify(message)}\n`)
  }
  return out
}

/**
 * Throws unless the run went as SPEC §17 and §13 say: the progress messages
 * logged exactly where `expected` puts them, all of them in the last
 * request, every `update_plan` call recorded, and each request's
 * provider-order bytes starting with all of the previous request's (the
 * first request that does not is named).
 */
export function checkTrackedRun(
  run: Pick<CacheSessionRun, 'events' | 'requests'>,
  expected: readonly ProgressPoint[] = TRACKED_PROGRESS,
): void {
  const points = progressPoints(run.events)
  if (JSON.stringify(points) !== JSON.stringify(expected)) {
    throw new Error(
      `cache bench, tracked plan: the progress messages came at ${JSON.stringify(points)}, expected ${JSON.stringify(expected)}`,
    )
  }
  const last = run.requests.at(-1)
  const seen = last === undefined ? undefined : progressMessageBytes(last.body)
  const want = { track: expected.filter((p) => p.kind === 'track').length, remind: expected.filter((p) => p.kind === 'remind').length }
  if (seen === undefined || seen.track.count !== want.track || seen.remind.count !== want.remind) {
    throw new Error(
      `cache bench, tracked plan: the last request carries ${JSON.stringify({ track: seen?.track.count, remind: seen?.remind.count })} progress messages, expected ${JSON.stringify(want)}`,
    )
  }
  const calls = run.events.filter((event) => event.type === 'tool/result' && event.data.toolName === UPDATE_PLAN).length
  const logged = run.events.filter((event) => event.type === 'plan/progress').length
  if (calls === 0 || logged !== calls)
    throw new Error(`cache bench, tracked plan: ${calls} update_plan calls logged ${logged} plan/progress events`)
  const bytes = run.requests.map((request) => providerOrder(request.body))
  for (let i = 1; i < bytes.length; i++) {
    const previous = bytes[i - 1]!
    const prefix = commonPrefix(previous, bytes[i]!)
    if (prefix < previous.length) {
      throw new Error(
        `cache bench, tracked plan: request ${i + 1} of ${bytes.length} keeps only ${prefix} of the previous request's ${previous.length} bytes as its prefix (provider order): the cached prefix breaks there`,
      )
    }
  }
}

/** The tracked-plan session's figures. */
export interface TrackedCache {
  readonly label: string
  readonly turns: number
  readonly steps: number
  /** Totals over the bodies in provider order (tools, then messages). */
  readonly provider: CacheTotals
  /** Totals over the raw bodies. */
  readonly raw: CacheTotals
  /** The first-step messages after an approval, and the reminders, in the last request (each counted once). */
  readonly track: MessageBytes
  readonly remind: MessageBytes
  /** `update_plan` calls (each logged a `plan/progress`). */
  readonly updates: number
  /** Approved plans tracked. */
  readonly plans: number
}

/** Runs the tracked-plan session, checks it ({@link checkTrackedRun}) and measures it. */
export async function trackedRows(): Promise<TrackedCache> {
  const script = trackedScript()
  const run = await runCacheSession({ script, placement: 'transcript', enter: 'Enter plan mode', progress: true })
  checkTrackedRun(run)
  const { provider, raw } = measureRequests(run.requests)
  const messages = progressMessageBytes(run.requests.at(-1)!.body)
  return {
    label: "'transcript', a tracked plan (plan-progress)",
    turns: script.turns.length,
    steps: script.turns.reduce((n, turn) => n + turn.steps.length, 0),
    provider,
    raw,
    ...messages,
    updates: run.events.filter((event) => event.type === 'plan/progress').length,
    plans: run.events.filter((event) => event.type === 'plan/review').length,
  }
}
