/**
 * The scripted session of the prompt-cache bench: turns of a coding agent
 * that plans and builds, with every kind of plan-mode switch six times.
 *
 * The session is 18 cycles. Each enters plan mode one way — `/plan` typed at
 * the idle prompt, `/plan` typed while the model is answering (mid-turn),
 * or the model calling `enter_plan_mode` (the user agrees) — reads a few
 * files in plan mode, and leaves one way — an approved `exit_plan_mode`,
 * `/plan off` at the idle prompt, or `/plan off` mid-turn. Entries rotate
 * every cycle and exits every three, so each of the nine pairs occurs
 * twice. Every cycle ends with a turn in the default mode. Read results are
 * a few kB of generated source, so the history grows to about 100 kB.
 *
 * A last cycle makes the moves that SPEC §3.4 and §13 say re-send nothing
 * (its {@link CacheScript.netZero} points): a mid-turn `/plan` reversed by
 * `/plan off` before the next step, a declined `enter_plan_mode`, then (after
 * an idle `/plan`) an idle `/plan off` + `/plan`, and `Stop planning` in the
 * plan review.
 */
import type { ScriptedAnswer } from './cache-server.js'
import { prng } from './generator.js'

/** How a cycle enters plan mode. */
export type EntryKind = 'idle /plan' | 'mid-turn /plan' | 'enter_plan_mode'
/** How a cycle leaves plan mode (`Stop planning` only in the net-zero cycle). */
export type ExitKind = 'approved exit' | 'idle /plan off' | 'mid-turn /plan off' | 'Stop planning'

/** The entry kinds, in rotation order. */
export const ENTRY_KINDS: readonly EntryKind[] = ['idle /plan', 'mid-turn /plan', 'enter_plan_mode']
/** The exit kinds, in rotation order. */
export const EXIT_KINDS: readonly ExitKind[] = ['approved exit', 'idle /plan off', 'mid-turn /plan off']

/** The moves that re-send nothing (SPEC §3.4, §13), made by the net-zero cycle. */
export type NetZeroKind = 'mid-turn /plan reversed' | 'declined entry' | 'idle /plan off + /plan' | 'Stop planning'

/** The user's answers to the plan tools' questions during a turn, where they differ from the session's. */
export interface TurnAnswers {
  /** The answer to `enter_plan_mode`'s question. */
  readonly enter?: 'Enter plan mode' | 'Not now'
  /** The answer to `exit_plan_mode`'s review. */
  readonly review?: 'Approve' | 'Stop planning'
}

/** One turn of the script. */
export interface ScriptTurn {
  /** The cycle the turn belongs to (an index into {@link CacheScript.cycles}). */
  readonly cycle: number
  /** Command lines the user types at the idle prompt before the turn, in order. */
  readonly before?: readonly string[]
  /** The user's message that starts the turn. */
  readonly prompt: string
  /** The model's answers, one per step; only the last calls no tool. */
  readonly steps: readonly ScriptedAnswer[]
  /** Answers to the plan tools' questions in this turn (default: the session's). */
  readonly answers?: TurnAnswers
}

/** A request that follows a move re-sending nothing. */
export interface NetZeroPoint {
  /** The index of the first request after the move (0-based, over the whole session). */
  readonly request: number
  readonly kind: NetZeroKind
  /** The cycle that makes the move. */
  readonly cycle: number
}

/** The whole script and what it switches. */
export interface CacheScript {
  readonly turns: readonly ScriptTurn[]
  /** The cycles' entry and exit kinds, in order. */
  readonly cycles: ReadonlyArray<{ readonly entry: EntryKind; readonly exit: ExitKind }>
  /** The requests after a move that re-sends nothing, in order. */
  readonly netZero: readonly NetZeroPoint[]
}

const TOPICS = [
  ['the session store', 'store'],
  ['the retry policy', 'retry'],
  ['the command parser', 'commands'],
  ['the tool registry', 'tools'],
  ['the projection cache', 'projections'],
  ['the stream timeout', 'stream'],
  ['the config loader', 'config'],
  ['the invariant checks', 'invariants'],
  ['the question provider', 'questions'],
  ['the agent registry', 'agents'],
  ['the transcript builder', 'transcript'],
  ['the request header', 'header'],
  ['the system prompt', 'prompt'],
  ['the error texts', 'errors'],
  ['the id generator', 'ids'],
  ['the abort handling', 'abort'],
  ['the turn loop', 'turn'],
  ['the step runner', 'step'],
] as const

/** The bytes a `read` result aims at (a few kB of generated source). */
export const READ_BYTES = 1100

const IDENTS = 'session event store append open close read write value result error state config entry index offset count limit'.split(' ')

/**
 * The deterministic text `read` returns for `path`: generated TypeScript of
 * about `bytes` bytes, the same on every call.
 */
export function fileText(path: string, bytes = READ_BYTES): string {
  let seed = 0
  for (const ch of path) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) >>> 0
  const rand = prng(seed)
  const pick = (): string => IDENTS[(rand() * IDENTS.length) | 0]!
  const lines = [`// ${path}`]
  let size = lines[0]!.length + 1
  for (let i = 0; size < bytes; i++) {
    const name = `${pick()}${pick()[0]!.toUpperCase()}${pick().slice(1)}${i}`
    const line =
      rand() < 0.3
        ? `export function ${name}(${pick()}: number, ${pick()}: string): boolean {\n  return ${pick()}.length > ${(rand() * 100) | 0}\n}`
        : `const ${name} = ${pick()}.${pick()}(${pick()}, ${(rand() * 1000) | 0}) // ${pick()} ${pick()} ${pick()}`
    lines.push(line)
    size += line.length + 1
  }
  return lines.join('\n')
}

/** A plan in markdown (a `#` title first), about 600 bytes. */
function planText(topic: string, area: string): string {
  return [
    `# Rework ${topic}`,
    '',
    `1. In src/${area}/index.ts, split the entry point into a parser and a runner; keep the exported names.`,
    `2. Move the shared helpers of src/${area}/util.ts next to their only caller and delete the file.`,
    `3. Replace the ad-hoc error strings with the constants of src/errors.ts, one per failure.`,
    `4. Add tests in test/${area}.test.ts: the happy path, a bad input, an aborted signal, a throwing append.`,
    '',
    `Risks: callers that import src/${area}/util.ts directly (none found by grep). Check: the package's tests and typecheck.`,
  ].join('\n')
}

const read = (path: string): ScriptedAnswer['calls'] => [{ name: 'read', args: { path } }]

/** The scripted session: 18 cycles, each entry and exit kind six times, then the net-zero cycle. */
export function cacheScript(): CacheScript {
  const turns: ScriptTurn[] = []
  const cycles: Array<{ entry: EntryKind; exit: ExitKind }> = []
  TOPICS.forEach(([topic, area], c) => {
    const entry = ENTRY_KINDS[c % 3]!
    const exit = EXIT_KINDS[Math.floor(c / 3) % 3]!
    cycles.push({ entry, exit })
    const plan = planText(topic, area)
    const steps: ScriptedAnswer[] = []
    if (entry === 'enter_plan_mode') {
      steps.push({
        text: `Changing ${topic} touches several files; I would like to plan it first.`,
        calls: [{ name: 'enter_plan_mode', args: { reason: `${topic} spans several modules` } }],
      })
    }
    if (entry === 'mid-turn /plan')
      steps.push({ text: `Let me look at ${topic} first.`, calls: read(`src/${area}/index.ts`), during: ['/plan'] })
    // In plan mode now.
    steps.push({
      text: 'Reading the entry point and its helpers.',
      calls: read(`src/${area}/${entry === 'mid-turn /plan' ? 'util' : 'index'}.ts`),
    })
    steps.push({ calls: read(`src/${area}/types.ts`), ...(exit === 'mid-turn /plan off' ? { during: ['/plan off'] } : {}) })
    if (exit === 'approved exit') {
      steps.push({ calls: [{ name: 'exit_plan_mode', args: { plan } }] })
      steps.push({ text: 'Carrying out step 1.', calls: [{ name: 'write', args: { path: `src/${area}/index.ts` } }] })
      steps.push({ text: `Done: ${topic} is split into a parser and a runner.` })
    } else if (exit === 'mid-turn /plan off') {
      // Back in the default mode.
      steps.push({ text: 'Plan mode is off; making the change.', calls: [{ name: 'write', args: { path: `src/${area}/index.ts` } }] })
      steps.push({ text: `Done: ${topic} is reworked.` })
    } else {
      steps.push({ text: `Here is the plan:\n\n${plan}` })
    }
    const prompt =
      entry === 'idle /plan'
        ? `Plan how to rework ${topic}.`
        : entry === 'mid-turn /plan'
          ? `Rework ${topic}: split the entry point and tidy the helpers.`
          : `Rework ${topic} so that it is easier to test.`
    turns.push({ cycle: c, ...(entry === 'idle /plan' ? { before: ['/plan'] } : {}), prompt, steps })
    // A turn in the default mode (after `/plan off` at the prompt, for that exit).
    turns.push({
      cycle: c,
      ...(exit === 'idle /plan off' ? { before: ['/plan off'] } : {}),
      prompt: exit === 'idle /plan off' ? 'Go ahead with the plan.' : `Run the tests for ${topic}.`,
      steps: [{ calls: read(`test/${area}.test.ts`) }, { text: `The tests of ${topic} pass.` }],
    })
  })
  const netZero: NetZeroPoint[] = []
  netZeroCycle(cycles.length, turns, netZero)
  cycles.push({ entry: 'idle /plan', exit: 'Stop planning' })
  return { turns, cycles, netZero }
}

/**
 * The net-zero cycle, appended to `turns`: in the default mode, a mid-turn `/plan` reversed by `/plan off`
 * before the next step and a declined `enter_plan_mode`; then an idle `/plan`, and in plan mode an idle
 * `/plan off` + `/plan` and `Stop planning` in the review; then a default-mode turn. Each move's next request
 * goes into `points` (request indices count every step of the turns before).
 */
function netZeroCycle(cycle: number, turns: ScriptTurn[], points: NetZeroPoint[]): void {
  let request = turns.reduce((n, turn) => n + turn.steps.length, 0)
  const plan = planText('the lint rules', 'lint')
  const turn = (t: Omit<ScriptTurn, 'cycle'>, after: ReadonlyArray<readonly [step: number, kind: NetZeroKind]>): void => {
    // A move at the idle prompt is read by the turn's first request (step -1); a move during step s by the one after it.
    for (const [step, kind] of after) points.push({ request: request + step + 1, kind, cycle })
    turns.push({ cycle, ...t })
    request += t.steps.length
  }
  turn(
    {
      prompt: 'Tidy the lint rules.',
      steps: [
        { text: 'Looking at the lint rules first.', calls: read('src/lint/index.ts'), during: ['/plan', '/plan off'] },
        {
          text: 'The rules are spread over several files; I would like to plan this first.',
          calls: [{ name: 'enter_plan_mode', args: { reason: 'the lint rules span several files' } }],
        },
        { text: 'Understood; the lint rules are tidied in place.' },
      ],
      answers: { enter: 'Not now' },
    },
    [
      [0, 'mid-turn /plan reversed'],
      [1, 'declined entry'],
    ],
  )
  turn(
    {
      before: ['/plan'],
      prompt: 'Plan how to split the lint rules into one file per rule.',
      steps: [{ calls: read('src/lint/rules.ts') }, { text: `Here is the plan:\n\n${plan}` }],
    },
    [],
  )
  turn(
    {
      before: ['/plan off', '/plan'],
      prompt: 'Also list the rules that have no test.',
      steps: [
        { calls: read('test/lint.test.ts') },
        { calls: [{ name: 'exit_plan_mode', args: { plan } }] },
        { text: 'Planning stopped; I will wait for your next message.' },
      ],
      answers: { review: 'Stop planning' },
    },
    [
      [-1, 'idle /plan off + /plan'],
      [1, 'Stop planning'],
    ],
  )
  turn(
    {
      prompt: 'Run the tests for the lint rules.',
      steps: [{ calls: read('test/lint.test.ts') }, { text: 'The tests of the lint rules pass.' }],
    },
    [],
  )
}

/**
 * The same turns with no mode changes in the cycles `which` selects (default: every cycle): no command
 * typed, idle or mid-turn, and the user declines `enter_plan_mode` (the model's answers are unchanged, so
 * its `exit_plan_mode` calls there fail: not in plan mode). `netZero` keeps only the other cycles' points.
 */
export function withoutSwitches(script: CacheScript, which: (cycle: number) => boolean = () => true): CacheScript {
  return {
    cycles: script.cycles,
    netZero: script.netZero.filter((point) => !which(point.cycle)),
    turns: script.turns.map((turn) =>
      !which(turn.cycle)
        ? turn
        : {
            cycle: turn.cycle,
            prompt: turn.prompt,
            steps: turn.steps.map(({ during: _during, ...answer }) => answer),
            answers: { enter: 'Not now' },
          },
    ),
  }
}

/**
 * The cycles that keep their switches in the minimum session ({@link minimumSwitches}): the six
 * that enter by `enter_plan_mode`, the four `/plan` cycles that leave by an approval, and the first `/plan`
 * cycle leaving by an idle `/plan off` and the first leaving by a mid-turn one. So six `/plan`, six
 * `enter_plan_mode`, six approvals and six `/plan off`: twelve entries instead of eighteen.
 */
export function minimumCycles(script: CacheScript): Set<number> {
  const keep = new Set<number>()
  const firstOff = new Set<ExitKind>()
  script.cycles.forEach(({ entry, exit }, c) => {
    if (exit === 'Stop planning') return
    if (entry === 'enter_plan_mode' || exit === 'approved exit') keep.add(c)
    else if (!firstOff.has(exit)) {
      firstOff.add(exit)
      keep.add(c)
    }
  })
  return keep
}

/** The minimum: the same turns, switching only in {@link minimumCycles} (the others, and the net-zero cycle, as with no switches). */
export function minimumSwitches(script: CacheScript): CacheScript {
  const keep = minimumCycles(script)
  return withoutSwitches(script, (cycle) => !keep.has(cycle))
}
