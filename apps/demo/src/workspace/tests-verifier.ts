import { spawn } from 'node:child_process'
import type { Plugin } from '@planmode/context'
import type { PlanVerifyPayload } from '@planmode/plan-progress'

/**
 * Config of {@link testsVerifierPlugin}: the project whose tests decide, and
 * how long one run may take.
 */
export interface TestsVerifierConfig {
  /** The project folder: `node --test` runs there; a function gives the folder of the agent marking the step (one per session). */
  readonly root: string | ((agent: PlanVerifyPayload['agent']) => string)
  /** The bound of one test run, in milliseconds (default 120 000); a run past it is stopped and counts as failed. */
  readonly timeoutMs?: number
}

/** A step's text names tests: the word `test` or `tests`, or a test file (`*.test.js`, `test/…`). */
export function namesTests(text: string): boolean {
  return /\btests?\b/i.test(text) || /\.test\.[cm]?[jt]s\b/i.test(text)
}

/** What one `node --test` run found: whether it passed, and what to tell the model when it did not. */
export interface TestRun {
  readonly passed: boolean
  /** `node --test: 3 of 7 failed — “name” (first line of its error); …`, or why the run could not finish. */
  readonly summary: string
}

/** The output kept from one run (a test that prints in a loop must not fill the memory). */
const OUTPUT_LIMIT = 1_000_000
/** The `update_plan` calls whose test run is kept for their later steps. */
const RECENT_CALLS = 8
/** Failing tests named in a problem, at most. */
const NAMED = 5

/** The failing tests of a TAP stream: each `not ok N - name`, with the first `error:` line under it. */
function failures(tap: string): { name: string; error?: string }[] {
  const found: { name: string; error?: string }[] = []
  const lines = tap.split('\n')
  lines.forEach((line, index) => {
    // Subtests are indented; a file's own line (`not ok 1 - /path/x.test.js`) repeats its failing subtests, so only named tests count.
    const match = /^\s*not ok \d+ - (.*)$/.exec(line)
    if (match === null || /\.(c|m)?js$/.test(match[1]!.trim())) return
    const block = lines.slice(index + 1)
    const end = block.findIndex((next) => /^\s*(not )?ok \d+ /.test(next))
    const error = (end < 0 ? block : block.slice(0, end))
      .find((next) => /^\s*error: /.test(next))
      ?.replace(/^\s*error: /, '')
      .trim()
      .replace(/^(['"])(.*)\1$/, '$2')
      .replace(/^[|>]-?$/, '')
    found.push(error === undefined || error === '' ? { name: match[1]!.trim() } : { name: match[1]!.trim(), error })
  })
  return found
}

/**
 * Runs the project's tests once: `node --test` (the runner built into
 * Node.js, no package manager, nothing installed or fetched) in `root`,
 * with TAP output, the environment reduced to what the runner needs, and
 * stopped after `timeoutMs`.
 */
export function runProjectTests(root: string, timeoutMs = 120_000): Promise<TestRun> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', NODE_OPTIONS: '' }
    for (const name of ['HOME', 'TMPDIR', 'TEMP', 'TMP', 'LANG', 'SYSTEMROOT'])
      if (process.env[name] !== undefined) env[name] = process.env[name]
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    })
    let output = ''
    const take = (chunk: Buffer): void => {
      if (output.length < OUTPUT_LIMIT) output += chunk.toString()
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
    child.on('error', (error) => resolve({ passed: false, summary: `node --test could not run in the workspace: ${error.message}` }))
    child.on('close', (code, signal) => {
      if (signal !== null) {
        resolve({
          passed: false,
          summary: `node --test did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped (${signal})`,
        })
        return
      }
      const count = (name: string): number | undefined => {
        const match = new RegExp(`^# ${name} (\\d+)$`, 'm').exec(output)
        return match === null ? undefined : Number(match[1])
      }
      const total = count('tests')
      if (code === 0) {
        resolve(
          total === 0
            ? { passed: false, summary: 'node --test found no tests in the workspace' }
            : { passed: true, summary: `node --test: ${total ?? 'all'} passed` },
        )
        return
      }
      const failed = failures(output)
      const named = failed
        .slice(0, NAMED)
        .map((failure) => `“${failure.name}”${failure.error === undefined ? '' : ` (${failure.error.slice(0, 120)})`}`)
        .join('; ')
      const more = failed.length > NAMED ? `; and ${failed.length - NAMED} more` : ''
      const counted = total === undefined ? `exit code ${code}` : `${count('fail') ?? failed.length} of ${total} failed`
      resolve({ passed: false, summary: `node --test: ${counted}${named === '' ? '' : ` — ${named}${more}`}` })
    })
  })
}

/**
 * The demo's step check (SPEC §25): a `plan/verify` listener that refuses
 * to let a step whose text names tests ({@link namesTests}) be marked done
 * while the project's own tests fail. It runs them with
 * {@link runProjectTests} in `root`, once per `update_plan` call (the steps
 * of one call share a run), and adds one problem:
 * `the workspace's tests fail (node --test: 3 of 7 failed — “…” (…))`.
 * Steps that name no tests pass through untouched.
 *
 * It runs code the model wrote, so compose it only over a workspace meant
 * for that (the demo does over its copy of the sample project, never over a
 * `--workspace` of your own).
 */
export const testsVerifierPlugin: Plugin<TestsVerifierConfig> = {
  name: '@planmode/demo/tests-verifier',
  apply(ctx, config) {
    const runs = new Map<string, Promise<TestRun>>()
    ctx.effect(() => runs.clear())
    ctx.on('plan/verify', async (payload: PlanVerifyPayload, next: (payload?: PlanVerifyPayload) => Promise<PlanVerifyPayload>) => {
      if (!namesTests(payload.text)) return next()
      let run = runs.get(payload.toolCallId)
      if (run === undefined) {
        run = runProjectTests(typeof config.root === 'function' ? config.root(payload.agent) : config.root, config.timeoutMs)
        // One call's steps share the run; the next call (another id) runs the tests again. Only recent calls are kept.
        runs.set(payload.toolCallId, run)
        if (runs.size > RECENT_CALLS) runs.delete(runs.keys().next().value!)
      }
      const result = await run
      if (result.passed) return next()
      return next({ ...payload, problems: [...payload.problems, `the workspace's tests fail (${result.summary})`] })
    })
  },
}
