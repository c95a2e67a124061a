import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent, UserAnswer } from '@planmode/seams'
import { createOfflineModel } from './model/offline-model.js'
import { createStyle } from './render/style.js'
import { TranscriptRenderer, type TranscriptOutput } from './render/transcript.js'
import { createDemoHost, type DemoHost, type QuestionAnswerer } from './terminal/demo-host.js'
import { copySampleWorkspace, sampleWorkspaceDir } from './workspace/sample-workspace.js'
import { makeScratchDir, removeScratchDir } from './workspace/scratch-dir.js'

/** The goal the showcase plans. */
export const SHOWCASE_GOAL = 'Add due dates to tasks, settable from the command line.'
/** The feedback the scripted reviewer gives the first plan. */
export const SHOWCASE_FEEDBACK = 'Also flag overdue tasks in the `tasks list` output.'

/** Options of {@link runShowcase}. */
export interface ShowcaseOptions {
  readonly out: TranscriptOutput
  readonly color: boolean
  /** Where the session log goes (kept); by default a temporary folder, removed at the end. */
  readonly sessionDir?: string
  /** Keep the temporary workspace copy and session folder instead of removing them at the end. */
  readonly keep?: boolean
}

/** One expected stage of the showcase and whether it happened. */
export interface ShowcaseStage {
  readonly name: string
  readonly ok: boolean
}

/** What the showcase did. */
export interface ShowcaseResult {
  readonly ok: boolean
  readonly stages: readonly ShowcaseStage[]
  readonly sessionFile: string | undefined
  readonly workspace: string
  /** The temporary folders removed at the end (none with `keep`). */
  readonly removed: readonly string[]
}

type Call = { name: string; input: Record<string, unknown>; id: string }

function calls(events: readonly SessionEvent[]): (Call & { index: number })[] {
  const out: (Call & { index: number })[] = []
  events.forEach((event, index) => {
    if (event.type !== 'assistant/message') return
    for (const block of event.data.content) {
      if (block.type === 'tool-call') out.push({ name: block.toolName, input: block.input as Record<string, unknown>, id: block.toolCallId, index })
    }
  })
  return out
}

function planModeIndexes(events: readonly SessionEvent[], active: boolean): number[] {
  return events.flatMap((event, index) =>
    (event.type as string) === 'plan/mode' && (event.data as { active?: boolean }).active === active ? [index] : [],
  )
}

/**
 * The scripted showcase: `/plan <goal>`, exploration, a review answered
 * "Keep planning" with feedback, the revised plan approved, the
 * implementation, a `/plan` typed during a turn (pending), then the session
 * reopened from its JSONL file in a fresh host, where the pending selection
 * is recovered and applied at the next step. Every expected stage is checked; `ok` only when all happened.
 * The temporary workspace copy (and the session folder, unless `sessionDir`
 * is given) are removed when it ends, however it ends, unless `keep` is set.
 */
export async function runShowcase(options: ShowcaseOptions): Promise<ShowcaseResult> {
  const workspace = copySampleWorkspace()
  const sessionDir = options.sessionDir ?? makeScratchDir('planmode-demo-sessions-')
  const temporary = options.keep === true ? [] : [workspace, ...(options.sessionDir === undefined ? [sessionDir] : [])]
  try {
    return { ...(await showcase(options, workspace, sessionDir, temporary)), removed: temporary }
  } finally {
    for (const dir of temporary) removeScratchDir(dir)
  }
}

async function showcase(options: ShowcaseOptions, workspace: string, sessionDir: string, temporary: readonly string[]): Promise<Omit<ShowcaseResult, 'removed'>> {
  const style = createStyle(options.color)
  const section = RECOMMENDED_PLAN_SECTION
  let host: DemoHost | undefined
  const renderer = new TranscriptRenderer({
    out: options.out,
    style,
    planSection: section,
    present: (name, input) => host?.ctx.get('tools')?.get(name)?.presentCall?.(input as never),
  })
  const scripted: Omit<UserAnswer, 'id'>[] = [{ selected: ['Keep planning'], custom: SHOWCASE_FEEDBACK }, { selected: ['Approve'] }]
  const answer: QuestionAnswerer = async (questions) => {
    const next = scripted.shift()
    return next === undefined ? undefined : questions.map((question) => ({ id: question.id, ...next }))
  }
  const stages: ShowcaseStage[] = []
  const check = (name: string, ok: boolean): void => {
    stages.push({ name, ok })
    if (!ok) renderer.warn(`expected stage did not happen: ${name}`)
  }
  const send = async (line: string): Promise<void> => {
    renderer.prompt(host!.badge(), line)
    await host!.submit(line)
    await host!.agent.idle()
  }

  renderer.stage('planmode demo: plan, review, revise, approve, implement, resume')
  renderer.info(`workspace: ${workspace} (a fresh copy of ${sampleWorkspaceDir()})`)
  renderer.info(`sessions:  ${sessionDir}`)
  renderer.info('model:     offline planner (deterministic, no network, no key)')
  const offline = createOfflineModel({ planSection: section })
  // Runs a scripted action inside the next model call, when the turn is surely open.
  let hold: (() => Promise<void>) | undefined
  const model: LanguageModelV3 = {
    ...offline,
    async doStream(callOptions) {
      const action = hold
      hold = undefined
      await action?.()
      return offline.doStream(callOptions)
    },
  }
  host = await createDemoHost({ sessionDir, workspace, model, section, renderer, answer })
  const { session } = host

  renderer.stage('1. Enter plan mode with a goal')
  await send(`/plan ${SHOWCASE_GOAL}`)
  const events = session.events
  const allCalls = calls(events)
  const exits = allCalls.filter((call) => call.name === 'exit_plan_mode')
  const results = events.flatMap((event, index) => (event.type === 'tool/result' ? [{ ...event.data, index }] : []))
  const exitResults = results.filter((result) => result.toolName === 'exit_plan_mode')
  const entered = planModeIndexes(events, true)[0]
  const firstExit = exits[0]
  const approvedAt = exitResults.find((result) => !result.isError)?.index
  const left = planModeIndexes(events, false)[0]

  check('plan mode entered by /plan', entered !== undefined && events.slice(0, entered).some((event) => event.type === 'command/run'))
  check(
    'explored with read-only tools before the plan',
    firstExit !== undefined &&
      allCalls.filter((call) => call.index < firstExit.index).some((call) => ['list_files', 'read_file', 'search'].includes(call.name)) &&
      !allCalls.some((call) => call.index < firstExit.index && ['write_file', 'edit_file'].includes(call.name)),
  )
  check('plan submitted with exit_plan_mode', exits.length >= 1 && String(exits[0]!.input.plan).startsWith('# '))
  check(
    'review answered "Keep planning" with feedback',
    exitResults[0]?.isError === true && exitResults[0].content.some((block) => block.text.includes(SHOWCASE_FEEDBACK)),
  )
  check('plan revised to address the feedback', exits.length >= 2 && String(exits[1]!.input.plan).includes(SHOWCASE_FEEDBACK))
  check('revised plan approved, plan mode left', approvedAt !== undefined && left !== undefined && left > approvedAt)
  const changed = results.filter((result) => ['write_file', 'edit_file'].includes(result.toolName) && approvedAt !== undefined && result.index > approvedAt)
  check('plan carried out with write/edit tools', changed.length > 0 && changed.every((result) => !result.isError))
  check('turn completed', events.some((event) => event.type === 'turn/end' && event.data.reason === 'completed'))

  renderer.stage('2. Check the work')
  const tests = spawnSync(process.execPath, ['--test'], { cwd: workspace, encoding: 'utf8' })
  const passed = /# pass (\d+)/.exec(tests.stdout)?.[1]
  const failed = /# fail (\d+)/.exec(tests.stdout)?.[1]
  renderer.info(`node --test in the workspace: ${passed ?? '?'} passed, ${failed ?? '?'} failed`)
  check('workspace tests pass after the change', tests.status === 0)
  const formatted = readFileSync(join(workspace, 'src/format.js'), 'utf8')
  check('the feedback reached the code', formatted.includes('OVERDUE'))

  renderer.stage('3. /plan typed while the model is answering waits for a step boundary')
  hold = async () => {
    renderer.prompt(host!.badge(), '/plan')
    renderer.info('(typed while the turn runs)')
    await host!.submit('/plan')
  }
  await send('thanks!')
  renderer.info(`the turn has ended; the selection still waits for the next step: ${JSON.stringify(host.planState())}`)
  check('a /plan during a turn is pending after it', host.badge() === 'pending-on' && host.planState().pending === true && !host.planState().active)

  const sessionFile = session.file
  const eventCount = session.events.length
  const id = session.id
  await host.close()
  host = undefined

  renderer.stage('4. Reopen the session from its JSONL file in a fresh host')
  renderer.info(`opening ${sessionFile ?? id}`)
  const reviewsLeft = scripted.length
  host = await createDemoHost({ sessionDir, workspace, model, section, renderer, answer, resume: id })
  const reopened = host.session.events
  const state = host.planState()
  renderer.info(`${reopened.length} events recovered; planMode.get → ${JSON.stringify(state)}; plan projection → ${JSON.stringify(host.projection())}`)
  const lastPlan = calls(reopened).filter((call) => call.name === 'exit_plan_mode').at(-1)
  if (lastPlan !== undefined) renderer.info(`last approved plan: “${/^#\s+(.*)$/m.exec(String(lastPlan.input.plan))?.[1] ?? 'Plan'}”`)
  check(
    'pending selection recovered from the log alone',
    reopened.length === eventCount && !state.active && state.pending === true && host.badge() === 'pending-on' && reviewsLeft === 0,
  )
  const before = host.session.events.length
  await send('What would you change next?')
  const applied = host.session.events.slice(before)
  const modeAt = applied.findIndex((event) => (event.type as string) === 'plan/mode')
  const noticeAt = applied.findIndex((event) => event.type === 'user/message' && event.data.source.kind === 'plugin')
  const headerAt = applied.findIndex((event) => event.type === 'request/header')
  check(
    'applied at the next step boundary, with a notice',
    host.planState().active && host.badge() === 'on' && modeAt >= 0 && noticeAt > modeAt && headerAt > noticeAt,
  )
  await send('/plan off')
  check(
    'plan mode left while idle, with a notice',
    !host.planState().active &&
      host.badge() === 'off' &&
      host.session.events.some((event) => event.type === 'user/message' && event.data.content.some((block) => block.type === 'text' && /back to the default mode/.test(block.text))),
  )
  await host.close()
  host = undefined

  const ok = stages.every((stage) => stage.ok)
  renderer.stage('Done')
  if (!temporary.includes(sessionDir)) renderer.info(`session file: ${sessionFile ?? '(in memory)'}`)
  if (!temporary.includes(workspace)) renderer.info(`workspace:    ${workspace}`)
  if (temporary.length > 0) {
    const what = temporary.includes(sessionDir) ? 'the workspace copy and the session log were' : 'the workspace copy was'
    renderer.info(`${what} temporary and ${temporary.length > 1 ? 'are' : 'is'} removed now (--keep keeps ${temporary.length > 1 ? 'them' : 'it'}${temporary.includes(sessionDir) ? '; --session-dir DIR keeps the log' : ''})`)
  }
  const summary = ok
    ? `✓ ${stages.length}/${stages.length} stages: ${exits.length} plans (${exits.length - 1} revision), approved, ${new Set(changed.map((result) => result.toolCallId)).size} changes, tests green, a pending /plan recovered after reopening and applied at the next step.`
    : `✗ ${stages.filter((stage) => !stage.ok).length} of ${stages.length} stages missing: ${stages
        .filter((stage) => !stage.ok)
        .map((stage) => stage.name)
        .join('; ')}`
  options.out.write(`\n${ok ? style.green(summary) : style.red(summary)}\n`)
  return { ok, stages, sessionFile, workspace }
}
