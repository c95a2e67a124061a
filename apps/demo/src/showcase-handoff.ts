// Stages 10-12 of the showcase: an approval that hands the plan to another model (SPEC §18), the plan
// as a file (SPEC §19) with its progress (SPEC §17), and an approval into a fresh session that carries
// the plan out there with update_plan. A third session, on a workspace copy of its own, composed as
// `pnpm start --models fast,careful --plan-dir <dir>` composes it (the fresh session is offered always).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PlanProgressView } from '@planmode/plan-progress/types'
import type { SessionEvent, UserAnswer, UserQuestion } from '@planmode/seams'
import { stageRenderer, type StageInput } from './showcase-stage.js'
import { createDemoHost, type DemoHost, type QuestionAnswerer } from './terminal/demo-host.js'
import { handoffChoices } from './terminal/handoff-choices.js'
import { chooseModels } from './terminal/model-choice.js'
import { revisionLine } from './terminal/plans-command.js'

/** The goal of stage 10: a plan the offline model records (the generic recipe), approved with model `fast`. */
export const SHOWCASE_MODEL_GOAL = 'Add a `tasks clear` command that removes finished tasks.'
/** The handoff models of the third session (`--models fast,careful`). */
export const SHOWCASE_MODELS = ['fast', 'careful'] as const

/** What the stages need from the showcase around them. */
export interface HandoffStagesInput extends StageInput {
  /** The goal stage 12 plans (the showcase's due-dates goal): carried out for real in the fresh session. */
  readonly goal: string
}

/** What the stages left behind. */
export interface HandoffStagesResult {
  /** The third session's log (the approvals). */
  readonly sessionFile: string | undefined
  /** The log of the fresh session stage 12 handed the plan to. */
  readonly freshSessionFile: string | undefined
  /** The plan file of the third session. */
  readonly planFile: string | undefined
}

const typeOf = (event: SessionEvent): string => event.type as string
const dataOf = (event: SessionEvent | undefined): Record<string, unknown> => (event?.data ?? {}) as unknown as Record<string, unknown>
const textOf = (event: SessionEvent): string =>
  event.type === 'user/message' ? event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('') : ''
const exitCalls = (events: readonly SessionEvent[]): { id: string; plan: string; index: number }[] =>
  events.flatMap((event, index) =>
    event.type === 'assistant/message'
      ? event.data.content.flatMap((block) =>
          block.type === 'tool-call' && block.toolName === 'exit_plan_mode'
            ? [{ id: block.toolCallId, plan: String((block.input as { plan?: unknown }).plan), index }]
            : [],
        )
      : [],
  )
const resultIndex = (events: readonly SessionEvent[], toolCallId: string): number =>
  events.findIndex((event) => event.type === 'tool/result' && event.data.toolCallId === toolCallId)
const record = (events: readonly SessionEvent[], toolCallId: string): Record<string, unknown> | undefined =>
  events.map(dataOf).find((data, index) => typeOf(events[index]!) === 'plan/review' && data.toolCallId === toolCallId)

/** Whether the `plan/progress` lists of a log move forward one step at a time and end with every step done. */
function progressedToTheEnd(events: readonly SessionEvent[], plan: string, total: number): boolean {
  const lists = events
    .filter((event) => typeOf(event) === 'plan/progress' && dataOf(event).plan === plan)
    .map((event) => dataOf(event).steps as { status: string }[])
  if (lists.length < 2) return false
  const done = (steps: { status: string }[]): number => steps.filter((step) => step.status === 'done' || step.status === 'skipped').length
  const forward = lists.every(
    (steps, at) =>
      steps.length === total &&
      steps.filter((step) => step.status === 'in_progress').length <= 1 &&
      (at === 0 || done(steps) >= done(lists[at - 1]!)),
  )
  return forward && done(lists.at(-1)!) === total
}

const fullyDone = (view: PlanProgressView | undefined, total: number): boolean =>
  view?.plan != null && view.total === total && view.done === total && view.active === null

/** Runs stages 10-12 (see the file's head). */
export async function runHandoffStages(input: HandoffStagesInput): Promise<HandoffStagesResult> {
  const { style, section, sessionDir, workspace, check } = input
  let host: DemoHost | undefined
  const renderer = stageRenderer(input, () => host)
  // `pnpm start --offline --models fast,careful`: each a model of the default's source, the offline planner reporting that id.
  const models = chooseModels(SHOWCASE_MODELS, { offline: true }, section, {}, 0)
  const planDir = join(sessionDir, 'plans')
  const asked: UserQuestion[] = []
  const scripted: ((question: UserQuestion) => Omit<UserAnswer, 'id'>)[] = []
  const answer: QuestionAnswerer = async (questions) => {
    const next = scripted.shift()
    asked.push(...questions)
    return next === undefined ? undefined : questions.map((question) => ({ id: question.id, ...next(question) }))
  }
  const choose =
    (label: string) =>
    (question: UserQuestion): Omit<UserAnswer, 'id'> => {
      const choices = handoffChoices(question)
      const at = choices.findIndex((choice) => choice.label === label)
      renderer.info(`(the reviewer picks ${question.options.length + at + 1}. ${label})`)
      return { selected: ['Approve'], ...(at < 0 ? {} : { handoff: choices[at]!.handoff }) }
    }
  const send = async (line: string): Promise<void> => {
    renderer.prompt(host!.badge(), line, host!.status())
    await host!.submit(line)
    await host!.idle()
  }
  const options = { sessionDir, workspace, model: input.model, section, renderer, style, answer, models, freshSessions: true, planDir }

  renderer.stage('10. Approve with a model: the next steps use it (--models fast,careful)')
  host = await createDemoHost(options)
  const handing = host.session
  renderer.info(
    `session: ${handing.id} on a fresh copy of the sample project; the review offers the handoff models and a fresh session, and the plan is kept in ${planDir}`,
  )
  scripted.push(choose('Approve with fast'))
  await send(`/plan ${SHOWCASE_MODEL_GOAL}`)
  const first = [...handing.events]
  const [modelExit] = exitCalls(first)
  const review = asked[0]
  check(
    'the review offers the handoff: Approve with fast or careful, or in a fresh session',
    review !== undefined &&
      JSON.stringify((review.intent as { handoff?: unknown } | undefined)?.handoff) ===
        JSON.stringify({ fresh: true, models: [...SHOWCASE_MODELS] }) &&
      handoffChoices(review)
        .map((choice) => choice.label)
        .join('|') ===
        'Approve with fast|Approve with careful|Approve in a fresh session|Approve in a fresh session with fast|Approve in a fresh session with careful',
  )
  const approvedAt = modelExit === undefined ? -1 : resultIndex(first, modelExit.id)
  const headers = first.flatMap((event, index) => (event.type === 'request/header' ? [{ model: event.data.model, index }] : []))
  const before = headers.filter((header) => header.index < approvedAt)
  const after = headers.find((header) => header.index > approvedAt)
  check(
    'approved with fast: the record names it, and from the next step the request header names planmode-offline:fast',
    modelExit !== undefined &&
      JSON.stringify(record(first, modelExit.id)?.handoff) === JSON.stringify({ model: 'fast' }) &&
      before.length > 0 &&
      before.every((header) => header.model === 'planmode-offline:planner-1') &&
      after?.model === 'planmode-offline:fast' &&
      first.slice(after.index).some((event) => event.type === 'step/start') &&
      host.modelId() === 'fast',
  )
  await send('/plans progress')
  const tracked = host.progress()
  check(
    'the plan is tracked with update_plan step by step to the end: plan 3/3 beside the badge',
    modelExit !== undefined &&
      tracked?.plan?.toolCallId === modelExit.id &&
      fullyDone(tracked, 3) &&
      progressedToTheEnd(first, modelExit.id, 3) &&
      host.status().progress?.done === 3 &&
      host.status().model === 'fast',
  )

  renderer.stage('11. The plan as a file (--plan-dir): its front matter and text follow the latest revision and its progress')
  await host.ctx.get('planFile')?.settled()
  const planFile = host.ctx.get('planFile')?.pathOf(handing.id)
  const fileText = planFile !== undefined && existsSync(planFile) ? readFileSync(planFile, 'utf8') : ''
  const [, front = '', body = ''] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(fileText) ?? []
  renderer.info(`${planFile ?? '(no plan file)'}:`)
  renderer.block(
    [...front.split('\n').map((line) => `  ${line}`), `  (then the plan: ${body.trimEnd().split('\n').length} lines)`].join('\n'),
  )
  const latest = host.history()?.revisions.at(-1)
  if (latest !== undefined)
    renderer.info(`latest plan: ${revisionLine(latest)}; /plans progress: plan ${tracked?.done ?? 0}/${tracked?.total ?? 0}`)
  check(
    "the plan file's front matter and text are the latest revision's, with its progress",
    latest !== undefined &&
      front ===
        [
          `session: ${JSON.stringify(handing.id)}`,
          `rev: ${latest.rev}`,
          `status: ${JSON.stringify(latest.status)}`,
          `title: ${JSON.stringify(latest.title)}`,
          `progress: ${JSON.stringify(`${tracked?.done}/${tracked?.total}`)}`,
        ].join('\n') &&
      latest.status === 'approved' &&
      body === (latest.approvedPlan ?? latest.plan),
  )

  renderer.stage('12. Approve into a fresh session: a new session carries the plan out, with update_plan')
  scripted.push(choose('Approve in a fresh session with careful'))
  await send(`/plan ${input.goal}`)
  const fresh = host.session
  const second = [...handing.events]
  const freshExit = exitCalls(second).find((call) => call.id !== modelExit?.id)
  const freshAt = freshExit === undefined ? -1 : resultIndex(second, freshExit.id)
  const stopEvent = freshAt < 0 ? undefined : second[freshAt]
  const stopText = stopEvent?.type === 'tool/result' ? stopEvent.data.content.map((block) => block.text).join('') : ''
  check(
    'approved for a fresh session with careful: the record says so, and this turn makes no further request',
    freshExit !== undefined &&
      JSON.stringify(record(second, freshExit.id)?.handoff) === JSON.stringify({ fresh: true, model: 'careful' }) &&
      stopText.startsWith('The user approved the plan and will carry it out in a fresh session.') &&
      !second
        .slice(freshAt)
        .some((event) => event.type === 'step/start' || event.type === 'request/header' || event.type === 'assistant/message') &&
      second
        .slice(-2)
        .map((event) => event.type)
        .join(' ') === 'turn/end plan/mode', // SPEC §22.2: the exit is logged right after the turn/end
  )
  const log = [...fresh.events]
  const origin = dataOf(log[0])
  const turnAt = log.findIndex((event) => event.type === 'turn/start')
  const firstTurn = log.slice(turnAt, log.findIndex((event) => event.type === 'turn/end') + 1)
  const messages = firstTurn.filter((event) => event.type === 'user/message')
  const firstHeader = log.find((event) => event.type === 'request/header')
  check(
    'the new session starts with plan/handoff, and its first turn with the handoff message, no user message',
    fresh !== handing &&
      typeOf(log[0]!) === 'plan/handoff' &&
      JSON.stringify(origin.from) === JSON.stringify({ session: handing.id, toolCallId: freshExit?.id }) &&
      origin.plan === freshExit?.plan &&
      origin.model === 'careful' &&
      messages.length > 0 &&
      messages.every((event) => event.type === 'user/message' && event.data.source.kind === 'plugin') &&
      messages[0]?.type === 'user/message' &&
      messages[0].data.source.kind === 'plugin' &&
      messages[0].data.source.form === 'handoff' &&
      textOf(messages[0]) === `Carry out this approved plan:\n\n${freshExit?.plan}` &&
      firstHeader?.type === 'request/header' &&
      firstHeader.data.model === 'planmode-offline:careful',
  )
  await send('/plans progress')
  check(
    'there update_plan tracks the plan step by step until every step is done (plan/progress in its log)',
    freshExit !== undefined &&
      progressedToTheEnd(log, freshExit.id, 5) &&
      fullyDone(host.progress(), 5) &&
      host.status().model === 'careful',
  )
  const tests = spawnSync(process.execPath, ['--test'], { cwd: workspace, encoding: 'utf8' })
  renderer.info(
    `node --test in this workspace: ${/# pass (\d+)/.exec(tests.stdout)?.[1] ?? '?'} passed, ${/# fail (\d+)/.exec(tests.stdout)?.[1] ?? '?'} failed`,
  )
  check(
    'the fresh session did the work: the workspace tests pass',
    tests.status === 0 && readFileSync(join(workspace, 'src/tasks.js'), 'utf8').includes('{ due }'),
  )
  const sessionFile = handing.file
  const freshSessionFile = fresh.file
  await host.close()
  host = undefined

  // Both sessions reopen from their logs, as `pnpm start --resume <id> --models fast,careful` does.
  host = await createDemoHost({ ...options, resume: handing.id })
  const reopenedLatest = host.history()?.revisions.at(-1)
  const handingState = host.planState()
  renderer.info(
    `reopened ${handing.id}: ${renderer.badge(host.badge())}, planMode.get → ${JSON.stringify(handingState)}; latest plan ${reopenedLatest === undefined ? '(none)' : revisionLine(reopenedLatest)}; progress tracked here: ${host.progress()?.plan === null ? 'none (the fresh session tracks it)' : 'yes'}`,
  )
  // SPEC §22.2: the approval's exit was logged right after that turn ended, so the badge, the controller and the log agree: off.
  const handingOk =
    reopenedLatest?.toolCallId === freshExit?.id &&
    reopenedLatest?.status === 'approved' &&
    host.progress()?.plan === null &&
    JSON.stringify(handingState) === JSON.stringify({ active: false }) &&
    host.badge() === 'off'
  await host.close()
  host = await createDemoHost({ ...options, resume: fresh.id })
  const reopened = host.progress()
  renderer.info(
    `reopened ${fresh.id}: carries out “${host.origin()?.title ?? '?'}” from ${host.origin()?.session ?? '?'}; plan ${reopened?.done ?? 0}/${reopened?.total ?? 0}; model ${host.modelId() ?? 'default'}`,
  )
  check(
    'both sessions reopen from their logs: the handing one with its approved plan and plan mode off, the fresh one with its progress and model',
    handingOk &&
      host.origin()?.session === handing.id &&
      fullyDone(reopened, 5) &&
      host.modelId() === 'careful' &&
      host.resumedModel?.kind === 'model',
  )
  await host.close()
  host = undefined
  return { sessionFile, freshSessionFile, planFile }
}
