import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent, UserAnswer } from '@planmode/seams'
import { createOfflineModel } from './model/offline-model.js'
import { createStyle } from './render/style.js'
import { TranscriptRenderer, type TranscriptOutput } from './render/transcript.js'
import { diffPlans } from '@planmode/plan-projection/client'
import { createDemoHost, type DemoHost, type QuestionAnswerer } from './terminal/demo-host.js'
import { revisionLine } from './terminal/plans-command.js'
import { copySampleWorkspace, sampleWorkspaceDir } from './workspace/sample-workspace.js'
import { makeScratchDir, removeScratchDir } from './workspace/scratch-dir.js'

/** The goal the showcase plans. */
export const SHOWCASE_GOAL = 'Add due dates to tasks, settable from the command line.'
/** The feedback the scripted reviewer gives the first plan. */
export const SHOWCASE_FEEDBACK = 'Also flag overdue tasks in the `tasks list` output.'
/** The line comment the scripted reviewer puts on the first plan's goal line (line 3). */
export const SHOWCASE_COMMENT = 'Keep the dates plain YYYY-MM-DD text.'
/** The step the scripted reviewer adds to the revised plan before approving it. */
export const SHOWCASE_EDIT_STEP = 'Mention overdue tasks in the README usage too.'

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
  // The reviewer's edit: one step added to the revised plan's steps.
  const edited = (plan: string): string => {
    const lastStep = /\n(\d+)\. [^\n]*\n\n## Verification/.exec(plan)
    const next = lastStep === null ? 1 : Number(lastStep[1]) + 1
    return plan.replace(/\n\n## Verification/, `\n${next}. ${SHOWCASE_EDIT_STEP}\n\n## Verification`)
  }
  let approvedEdit: string | undefined
  const scripted: ((detail: string) => Omit<UserAnswer, 'id'>)[] = [
    () => ({ selected: ['Keep planning'], custom: SHOWCASE_FEEDBACK, comments: [{ line: 3, text: SHOWCASE_COMMENT }] }),
    (detail) => {
      approvedEdit = edited(detail)
      renderer.info(`(the reviewer edits the plan: adds step “${SHOWCASE_EDIT_STEP}”)`)
      return { selected: ['Approve'], edit: approvedEdit }
    },
  ]
  const answer: QuestionAnswerer = async (questions) => {
    const next = scripted.shift()
    return next === undefined ? undefined : questions.map((question) => ({ id: question.id, ...next(question.detail ?? '') }))
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
  host = await createDemoHost({ sessionDir, workspace, model, section, renderer, style, answer })
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
  check(
    'a line comment reached the model and the revised plan',
    exitResults[0]?.content.some((block) => block.text.includes(`\n- line 3: ${SHOWCASE_COMMENT}`)) === true && exits.length >= 2 && String(exits[1]!.input.plan).includes(SHOWCASE_COMMENT),
  )
  check('revised plan approved, plan mode left', approvedAt !== undefined && left !== undefined && left > approvedAt)
  const approvedText = exitResults.find((result) => !result.isError)?.content.map((block) => block.text).join('') ?? ''
  const reaction = events.slice(approvedAt ?? events.length).find((event) => event.type === 'assistant/message')
  check(
    'the edited plan approved and carried out as edited',
    approvedEdit !== undefined &&
      approvedText.startsWith('The user edited and approved the plan') &&
      approvedText.endsWith(approvedEdit) &&
      reaction?.type === 'assistant/message' &&
      reaction.data.content.some((block) => block.type === 'text' && block.text.includes('carrying out your version')),
  )
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

  renderer.stage('3. The plan history: every revision, a diff, an export')
  await send('/plans')
  await send('/plans diff 1 2')
  const revisions = host.history()?.revisions ?? []
  const diff = revisions.length >= 2 ? diffPlans(revisions[0]!.plan, revisions[1]!.plan) : []
  check(
    'the history lists both revisions with their outcomes, and diffs them',
    revisions.map((revision) => revision.status).join(',') === 'keep-planning,approved' &&
      revisions[1]!.approvedPlan === approvedEdit &&
      revisions[0]!.comments?.[0]?.text === SHOWCASE_COMMENT &&
      diff.some((line) => line.kind === 'added' && line.line.includes(SHOWCASE_COMMENT)),
  )
  const exported = join(sessionDir, 'approved-plan.md')
  await send(`/plans save 2 ${exported}`)
  check('the approved plan exported to a markdown file', existsSync(exported) && approvedEdit !== undefined && readFileSync(exported, 'utf8').trimEnd() === approvedEdit.trimEnd())

  renderer.stage('4. /plan typed while the model is answering waits for a step boundary')
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

  renderer.stage('5. Reopen the session from its JSONL file in a fresh host')
  renderer.info(`opening ${sessionFile ?? id}`)
  const reviewsLeft = scripted.length
  host = await createDemoHost({ sessionDir, workspace, model, section, renderer, style, answer, resume: id })
  const reopened = host.session.events
  const state = host.planState()
  renderer.info(`${reopened.length} events recovered; planMode.get → ${JSON.stringify(state)}; plan projection → ${JSON.stringify(host.projection())}`)
  const latest = host.history()?.revisions.at(-1)
  if (latest !== undefined) renderer.info(`latest plan: ${revisionLine(latest)}`)
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
    ? `✓ ${stages.length}/${stages.length} stages: ${exits.length} plans (${exits.length - 1} revision), a line comment, approved as edited, history diffed and saved, ${new Set(changed.map((result) => result.toolCallId)).size} changes, tests green, a pending /plan recovered after reopening and applied at the next step.`
    : `✗ ${stages.filter((stage) => !stage.ok).length} of ${stages.length} stages missing: ${stages
        .filter((stage) => !stage.ok)
        .map((stage) => stage.name)
        .join('; ')}`
  options.out.write(`\n${ok ? style.green(summary) : style.red(summary)}\n`)
  return { ok, stages, sessionFile, workspace }
}
