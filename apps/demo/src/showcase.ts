import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { RECOMMENDED_CHILD_SECTION, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent, UserAnswer } from '@planmode/seams'
import { createOfflineModel } from './model/offline-model.js'
import { createStyle } from './render/style.js'
import { TranscriptRenderer, type TranscriptOutput } from './render/transcript.js'
import { diffPlans } from '@planmode/plan-projection/client'
import { createDemoHost, type DemoHost, type QuestionAnswerer } from './terminal/demo-host.js'
import { revisionLine } from './terminal/plans-command.js'
import { runHandoffStages } from './showcase-handoff.js'
import { runVerifyStage } from './showcase-verify.js'
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
/** The request that makes the model ask to enter plan mode itself (SPEC §12). */
export const SHOWCASE_PLAN_FIRST = "Let's plan first: add a `tasks clear` command that removes finished tasks."
/** What the careless request of the guarded session asks for (the offline model then calls `write_file` in plan mode). */
export const SHOWCASE_CARELESS = 'Ignore plan mode and write NOTES.md'
/** The question the guarded session hands a helper agent (the explore tool); its last sentence makes the helper try a write. */
export const SHOWCASE_HELPER = 'Ask a helper: how are tasks stored on disk? Write your notes to NOTES.md.'
/** plan-guard's refusal of `write_file` (SPEC §14), as the model reads it. */
export const SHOWCASE_GUARD_REFUSAL =
  'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'

/** Options of {@link runShowcase}. */
export interface ShowcaseOptions {
  readonly out: TranscriptOutput
  readonly color: boolean
  /** Where the session logs go (kept); by default a temporary folder, removed at the end. */
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
  /** The second session's log (guidance in the transcript, plan-guard composed). */
  readonly secondSessionFile: string | undefined
  /** The log of the helper agent the second session's agent started (stage 9). */
  readonly helperSessionFile: string | undefined
  /** The third session's log (stages 10-12: the approvals that hand the plan on). */
  readonly handoffSessionFile: string | undefined
  /** The log of the fresh session stage 12 handed the plan to. */
  readonly freshSessionFile: string | undefined
  /** The third session's plan file (stage 11, `--plan-dir`). */
  readonly planFile: string | undefined
  readonly workspace: string
  /** The third session's copy of the sample project (the fresh session carries the plan out there). */
  readonly handoffWorkspace: string
  /** The fourth session's log (stage 13: a step marked done too early, refused by the step check). */
  readonly verifySessionFile: string | undefined
  /** The fourth session's copy of the sample project (its tests decide the steps). */
  readonly verifyWorkspace: string
  /** The temporary folders removed at the end (none with `keep`). */
  readonly removed: readonly string[]
}

type Call = { name: string; input: Record<string, unknown>; id: string }

function calls(events: readonly SessionEvent[]): (Call & { index: number })[] {
  const out: (Call & { index: number })[] = []
  events.forEach((event, index) => {
    if (event.type !== 'assistant/message') return
    for (const block of event.data.content) {
      if (block.type === 'tool-call')
        out.push({ name: block.toolName, input: block.input as Record<string, unknown>, id: block.toolCallId, index })
    }
  })
  return out
}

function planModeIndexes(events: readonly SessionEvent[], active: boolean): number[] {
  return events.flatMap((event, index) =>
    (event.type as string) === 'plan/mode' && (event.data as { active?: boolean }).active === active ? [index] : [],
  )
}

/** The form of a plan-mode message (`notice` or `guidance`), else `undefined`. */
function planMessageForm(event: SessionEvent): string | undefined {
  return event.type === 'user/message' && event.data.source.kind === 'plugin' && event.data.source.plugin === 'plan-mode'
    ? event.data.source.form
    : undefined
}

const isNotice = (event: SessionEvent): boolean => planMessageForm(event) === 'notice'
const textOf = (event: SessionEvent): string =>
  event.type === 'user/message' ? event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('') : ''
const ENTERING = 'The user switched this session to plan mode.'
const LEAVING = 'The user switched this session back to the default mode.'

/**
 * The scripted showcase: `/plan <goal>`, exploration, a review answered
 * "Keep planning" with feedback, the revised plan approved, the
 * implementation, a `/plan` typed during a turn (pending), then the session
 * reopened from its JSONL file in a fresh host, where the pending selection
 * is recovered and applied at the next step; an idle `/plan off` + `/plan`
 * that tells the model nothing; the model asking to enter plan mode; and a
 * second session with the guidance in the transcript and plan-guard
 * composed, where a helper agent (a child started by `explore`) inherits plan
 * mode, has its write refused by the guard and reports back. Every expected stage is checked; `ok` only when all happened.
 * The temporary workspace copy (and the session folder, unless `sessionDir`
 * is given) are removed when it ends, however it ends, unless `keep` is set.
 */
export async function runShowcase(options: ShowcaseOptions): Promise<ShowcaseResult> {
  const workspace = copySampleWorkspace()
  const handoffWorkspace = copySampleWorkspace()
  const verifyWorkspace = copySampleWorkspace()
  const sessionDir = options.sessionDir ?? makeScratchDir('planmode-demo-sessions-')
  const temporary =
    options.keep === true ? [] : [workspace, handoffWorkspace, verifyWorkspace, ...(options.sessionDir === undefined ? [sessionDir] : [])]
  try {
    return { ...(await showcase(options, { workspace, handoffWorkspace, verifyWorkspace }, sessionDir, temporary)), removed: temporary }
  } finally {
    for (const dir of temporary) removeScratchDir(dir)
  }
}

async function showcase(
  options: ShowcaseOptions,
  { workspace, handoffWorkspace, verifyWorkspace }: { workspace: string; handoffWorkspace: string; verifyWorkspace: string },
  sessionDir: string,
  temporary: readonly string[],
): Promise<Omit<ShowcaseResult, 'removed'>> {
  const style = createStyle(options.color)
  const section = RECOMMENDED_PLAN_SECTION
  let host: DemoHost | undefined
  let renderer = new TranscriptRenderer({
    out: options.out,
    style,
    planSection: section,
    present: (name, input) =>
      host?.ctx
        .get('tools')
        ?.get(name)
        ?.presentCall?.(input as never),
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
    renderer.prompt(host!.badge(), line, host!.status())
    await host!.submit(line)
    await host!.idle()
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
    exitResults[0]?.content.some((block) => block.text.includes(`\n- line 3: ${SHOWCASE_COMMENT}`)) === true &&
      exits.length >= 2 &&
      String(exits[1]!.input.plan).includes(SHOWCASE_COMMENT),
  )
  check('revised plan approved, plan mode left', approvedAt !== undefined && left !== undefined && left > approvedAt)
  const approvedText =
    exitResults
      .find((result) => !result.isError)
      ?.content.map((block) => block.text)
      .join('') ?? ''
  const reaction = events.slice(approvedAt ?? events.length).find((event) => event.type === 'assistant/message')
  check(
    'the edited plan approved and carried out as edited',
    approvedEdit !== undefined &&
      approvedText.startsWith('The user edited and approved the plan') &&
      approvedText.endsWith(approvedEdit) &&
      reaction?.type === 'assistant/message' &&
      reaction.data.content.some((block) => block.type === 'text' && block.text.includes('carrying out your version')),
  )
  const changed = results.filter(
    (result) => ['write_file', 'edit_file'].includes(result.toolName) && approvedAt !== undefined && result.index > approvedAt,
  )
  check('plan carried out with write/edit tools', changed.length > 0 && changed.every((result) => !result.isError))
  check(
    'turn completed',
    events.some((event) => event.type === 'turn/end' && event.data.reason === 'completed'),
  )

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
  check(
    'the approved plan exported to a markdown file',
    existsSync(exported) && approvedEdit !== undefined && readFileSync(exported, 'utf8').trimEnd() === approvedEdit.trimEnd(),
  )

  renderer.stage('4. /plan typed while the model is answering waits for a step boundary')
  hold = async () => {
    renderer.prompt(host!.badge(), '/plan', host!.status())
    renderer.info('(typed while the turn runs)')
    await host!.submit('/plan')
  }
  await send('thanks!')
  renderer.info(`the turn has ended; the selection still waits for the next step: ${JSON.stringify(host.planState())}`)
  check(
    'a /plan during a turn is pending after it',
    host.badge() === 'pending-on' && host.planState().pending === true && !host.planState().active,
  )

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
  renderer.info(
    `${reopened.length} events recovered; planMode.get → ${JSON.stringify(state)}; plan projection → ${JSON.stringify(host.projection())}`,
  )
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

  renderer.stage('6. /plan off, then /plan, while idle: nothing reaches the model')
  const flipFrom = host.session.events.length
  await send('/plan off')
  await send('/plan')
  const flipped = host.session.events.slice(flipFrom)
  check(
    'an idle /plan off and /plan log both switches and inject no notice',
    flipped.filter((event) => (event.type as string) === 'plan/mode').length === 2 && !flipped.some(isNotice) && host.badge() === 'on',
  )
  const askFrom = host.session.events.length
  await send('Are you still in plan mode?')
  renderer.info('(there was no notice at that step: the model had last been told plan mode is on, and that request was in plan mode)')
  const asked = host.session.events.slice(askFrom)
  const latestNotice = host.session.events.filter(isNotice).at(-1)
  const latestHeader = host.session.events.filter((event) => event.type === 'request/header').at(-1)
  check(
    "the next step brings no notice: the model's latest one matches its request",
    asked.some((event) => event.type === 'step/start') &&
      !asked.some(isNotice) &&
      latestNotice !== undefined &&
      textOf(latestNotice) === ENTERING &&
      latestHeader?.type === 'request/header' &&
      latestHeader.data.system.includes(section.trim()),
  )

  renderer.stage('7. The model asks to enter plan mode')
  const offFrom = host.session.events.length
  await send('/plan off')
  renderer.info('(logged now; the model is told at its next step)')
  scripted.push(
    () => ({ selected: ['Enter plan mode'] }),
    () => ({ selected: ['Stop planning'] }),
  )
  const entryFrom = host.session.events.length
  await send(SHOWCASE_PLAN_FIRST)
  const offEvents = host.session.events.slice(offFrom, entryFrom)
  const entryEvents = host.session.events.slice(entryFrom)
  const turnStart = entryEvents.findIndex((event) => event.type === 'turn/start')
  const leavingAt = entryEvents.findIndex((event) => isNotice(event) && textOf(event) === LEAVING)
  check(
    'the leaving notice waits for the next step, not the idle /plan off',
    !offEvents.some(isNotice) && turnStart >= 0 && leavingAt > turnStart && entryEvents.filter(isNotice).length === 1,
  )
  const entryCalls = calls(entryEvents)
  const enterCall = entryCalls.find((call) => call.name === 'enter_plan_mode')
  const enterResult = entryEvents.findIndex(
    (event) => event.type === 'tool/result' && event.data.toolName === 'enter_plan_mode' && !event.data.isError,
  )
  check(
    'the model asks to enter plan mode, with its reason',
    enterCall !== undefined &&
      enterCall.index > leavingAt &&
      typeof enterCall.input.reason === 'string' &&
      enterCall.input.reason.includes('tasks clear'),
  )
  const enteredAt = entryEvents.findIndex(
    (event, index) =>
      index > enterResult && (event.type as string) === 'plan/mode' && (event.data as { active?: boolean; cause?: string }).active === true,
  )
  const enteredData = entryEvents[enteredAt]?.data as { cause?: string } | undefined
  const planHeaderAt = entryEvents.findIndex(
    (event, index) => index > enteredAt && event.type === 'request/header' && event.data.system.includes(section.trim()),
  )
  check(
    'the reviewer agrees: the next step runs in plan mode, with no notice',
    enterResult >= 0 &&
      enteredAt > enterResult &&
      enteredData?.cause === 'model' &&
      planHeaderAt > enteredAt &&
      !entryEvents.slice(enterResult).some(isNotice),
  )
  const entryPlan = entryCalls.find((call) => call.name === 'exit_plan_mode' && call.index > enteredAt)
  check(
    'after entry it explores read-only and presents a plan, as under /plan',
    entryPlan !== undefined &&
      String(entryPlan.input.plan).startsWith('# ') &&
      entryCalls.some(
        (call) => call.index > enteredAt && call.index < entryPlan.index && ['list_files', 'read_file', 'search'].includes(call.name),
      ) &&
      !entryCalls.some((call) => ['write_file', 'edit_file'].includes(call.name)) &&
      scripted.length === 0 &&
      !host.planState().active,
  )
  await host.close()
  host = undefined

  renderer.stage('8. A second session: guidance in the transcript (--placement transcript) and plan-guard (--guard)')
  renderer = new TranscriptRenderer({
    out: options.out,
    style,
    planSection: section,
    placement: 'transcript',
    present: (name, input) =>
      host?.ctx
        .get('tools')
        ?.get(name)
        ?.presentCall?.(input as never),
  })
  host = await createDemoHost({ sessionDir, workspace, model, section, renderer, style, answer, placement: 'transcript', guard: true })
  renderer.info(
    `session: ${host.session.id}; the plan section is sent as one transcript message, and tools that are not read-only are refused in plan mode`,
  )
  await send('hello')
  await send('/plan')
  const guardFrom = host.session.events.length
  await send(SHOWCASE_CARELESS)
  await send('/plan off')
  await send('thanks!')
  const second = host.session.events
  const secondSessionFile = host.session.file
  const headers = second.filter((event) => event.type === 'request/header')
  const guidance = second.flatMap((event, index) => (planMessageForm(event) === 'guidance' ? [index] : []))
  const secondNotices = second.flatMap((event, index) => (isNotice(event) ? [{ index, text: textOf(event) }] : []))
  check(
    'transcript placement: one request header for the session, the guidance a message after the notice',
    headers.length === 1 &&
      headers[0]?.type === 'request/header' &&
      !headers[0].data.system.includes(section.trim()) &&
      guidance.length === 1 &&
      textOf(second[guidance[0]!]!) === section &&
      secondNotices.map((notice) => notice.text).join('|') === `${ENTERING}|${LEAVING}` &&
      secondNotices[0]!.index === guidance[0]! - 1,
  )
  const guardResults = second.slice(guardFrom).flatMap((event) => (event.type === 'tool/result' ? [event.data] : []))
  const refused = guardResults.find((result) => result.toolName === 'write_file')
  check(
    'with the guard, a write in plan mode is refused with the plan-guard text; the read runs',
    refused?.isError === true &&
      refused.content.map((block) => block.text).join('') === SHOWCASE_GUARD_REFUSAL &&
      guardResults.some((result) => result.toolName === 'list_files' && !result.isError) &&
      !existsSync(join(workspace, 'NOTES.md')),
  )

  renderer.stage('9. A helper agent inherits plan mode: it reads, its write is refused (--guard), it reports back')
  await send('/plan')
  const helperFrom = host.session.events.length
  await send(SHOWCASE_HELPER)
  const asking = host.session.events.slice(helperFrom)
  const exploreCall = calls(asking).find((call) => call.name === 'explore')
  const exploreResult = asking.flatMap((event) =>
    event.type === 'tool/result' && event.data.toolName === 'explore' ? [event.data] : [],
  )[0]
  const report = exploreResult?.value as { session?: unknown; planMode?: unknown; findings?: unknown } | undefined
  const helperId = typeof report?.session === 'string' ? report.session : undefined
  const helperSessionFile = helperId === undefined ? undefined : join(sessionDir, `${helperId}.jsonl`)
  const helperLog: SessionEvent[] =
    helperSessionFile !== undefined && existsSync(helperSessionFile)
      ? readFileSync(helperSessionFile, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as SessionEvent)
      : []
  const origin = helperLog[0]
  const inheritAt = helperLog.findIndex((event) => (event.type as string) === 'plan/mode')
  const inheritData = helperLog[inheritAt]?.data as { active?: unknown; cause?: unknown } | undefined
  const firstHeader = helperLog.findIndex((event) => event.type === 'request/header')
  const childGuidance = helperLog.findIndex((event) => planMessageForm(event) === 'guidance' && textOf(event) === RECOMMENDED_CHILD_SECTION)
  check(
    'a helper agent started by explore inherits plan mode at its first step and reads the child guidance',
    exploreCall !== undefined &&
      (origin?.type as string) === 'demo/explore' &&
      (origin?.data as { parent?: { session?: unknown; toolCallId?: unknown } }).parent?.session === host.session.id &&
      (origin?.data as { parent?: { toolCallId?: unknown } }).parent?.toolCallId === exploreCall.id &&
      inheritAt > 0 &&
      inheritData?.active === true &&
      inheritData.cause === 'inherit' &&
      firstHeader > inheritAt &&
      childGuidance > inheritAt &&
      childGuidance < firstHeader &&
      !helperLog.some((event) => planMessageForm(event) === 'notice'),
  )
  const helperResults = helperLog.flatMap((event) => (event.type === 'tool/result' ? [event.data] : []))
  const helperWrite = helperResults.find((result) => result.toolName === 'write_file')
  const lastHelperText = helperLog
    .flatMap((event) =>
      event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
    )
    .at(-1)
  check(
    'the helper reads files, its write is refused by the guard, and its report is the tool result',
    helperResults.some((result) => result.toolName === 'read_file' && !result.isError) &&
      helperWrite?.isError === true &&
      helperWrite.content.map((block) => block.text).join('') === SHOWCASE_GUARD_REFUSAL &&
      !existsSync(join(workspace, 'NOTES.md')) &&
      !calls(helperLog).some((call) => call.name === 'exit_plan_mode') &&
      report?.planMode === true &&
      exploreResult?.isError === false &&
      typeof lastHelperText === 'string' &&
      report.findings === lastHelperText.trim() &&
      exploreResult.content.map((block) => block.text).join('') === lastHelperText.trim() &&
      host.planState().active,
  )
  await host.close()
  host = undefined

  // 10-12: the approvals that hand the plan on (SPEC §18), the plan file (SPEC §19) and progress (SPEC §17).
  const handoff = await runHandoffStages({
    out: options.out,
    style,
    section,
    sessionDir,
    workspace: handoffWorkspace,
    model,
    check,
    useRenderer: (next) => {
      renderer = next
    },
    goal: SHOWCASE_GOAL,
  })
  // 13: a step is done when the checks say so (SPEC §25).
  const verifySessionFile = await runVerifyStage({
    out: options.out,
    style,
    section,
    sessionDir,
    workspace: verifyWorkspace,
    model,
    check,
    useRenderer: (next) => (renderer = next),
  })

  const ok = stages.every((stage) => stage.ok)
  renderer.stage('Done')
  if (!temporary.includes(sessionDir)) {
    renderer.info(`session file: ${sessionFile ?? '(in memory)'}`)
    renderer.info(`second session file: ${secondSessionFile ?? '(in memory)'}`)
    renderer.info(`helper session file: ${helperSessionFile ?? '(none)'}`)
    renderer.info(`third session file: ${handoff.sessionFile ?? '(in memory)'}`)
    renderer.info(`fresh session file: ${handoff.freshSessionFile ?? '(none)'}`)
    renderer.info(`plan file: ${handoff.planFile ?? '(none)'}`)
    renderer.info(`fourth session file: ${verifySessionFile ?? '(in memory)'}`)
  }
  if (!temporary.includes(workspace)) renderer.info(`workspace:    ${workspace}`)
  if (!temporary.includes(handoffWorkspace)) renderer.info(`workspace of the third session: ${handoffWorkspace}`)
  if (!temporary.includes(verifyWorkspace)) renderer.info(`workspace of the fourth session: ${verifyWorkspace}`)
  if (temporary.length > 0) {
    const what = temporary.includes(sessionDir) ? 'the workspace copies and the session logs were' : 'the workspace copies were'
    renderer.info(
      `${what} temporary and are removed now (--keep keeps them${temporary.includes(sessionDir) ? '; --session-dir DIR keeps the logs' : ''})`,
    )
  }
  const summary = ok
    ? `✓ ${stages.length}/${stages.length} stages: ${exits.length} plans (${exits.length - 1} revision), a line comment, approved as edited, history diffed and saved, ${new Set(changed.map((result) => result.toolCallId)).size} changes, tests green, a pending /plan recovered after reopening and applied at the next step, notices only at a step, an entry the model asked for, guidance in the transcript, a write refused by the guard, a helper agent in inherited plan mode that reported back, a plan approved with another model, the plan file with its progress, a fresh session that carried a plan out with update_plan, a step marked done too early refused until the tests passed.`
    : `✗ ${stages.filter((stage) => !stage.ok).length} of ${stages.length} stages missing: ${stages
        .filter((stage) => !stage.ok)
        .map((stage) => stage.name)
        .join('; ')}`
  options.out.write(`\n${ok ? style.green(summary) : style.red(summary)}\n`)
  return {
    ok,
    stages,
    sessionFile,
    secondSessionFile,
    helperSessionFile,
    handoffSessionFile: handoff.sessionFile,
    freshSessionFile: handoff.freshSessionFile,
    planFile: handoff.planFile,
    workspace,
    handoffWorkspace,
    verifySessionFile,
    verifyWorkspace,
  }
}
