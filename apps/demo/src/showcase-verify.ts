// Stage 13 of the showcase: a step is done when the checks say so (SPEC §25). A fourth session, on a
// workspace copy of its own, composed with the demo's step check (`pnpm start` composes it over the
// sample project): the model carries a plan out tests first, marks the tests' step done before the
// code exists, is refused with the failing tests, writes the code and marks the step again.
import { spawnSync } from 'node:child_process'
import type { SessionEvent } from '@planmode/seams'
import { stageRenderer, type StageInput } from './showcase-stage.js'
import { createDemoHost, type DemoHost, type QuestionAnswerer } from './terminal/demo-host.js'

/** The goal of stage 13: the offline model carries it out tests first. */
export const SHOWCASE_VERIFY_GOAL = 'Add a `tasks undo <id>` command that reopens a finished task.'

/** One `update_plan` call of the log, with its result. */
interface UpdateCall {
  readonly id: string
  readonly updates: readonly { step: number; status: string }[]
  readonly result: { readonly isError: boolean; readonly text: string; readonly index: number } | undefined
}

function updateCalls(events: readonly SessionEvent[]): UpdateCall[] {
  const results = new Map<string, { isError: boolean; text: string; index: number }>()
  events.forEach((event, index) => {
    if (event.type === 'tool/result' && event.data.toolName === 'update_plan') {
      results.set(event.data.toolCallId, {
        isError: event.data.isError === true,
        text: event.data.content.map((block) => block.text).join(''),
        index,
      })
    }
  })
  return events.flatMap((event) =>
    event.type === 'assistant/message'
      ? event.data.content.flatMap((block) =>
          block.type === 'tool-call' && block.toolName === 'update_plan'
            ? [
                {
                  id: block.toolCallId,
                  updates: (block.input as { updates?: { step: number; status: string }[] }).updates ?? [],
                  result: results.get(block.toolCallId),
                },
              ]
            : [],
        )
      : [],
  )
}

const marksDone = (call: UpdateCall, step: number): boolean =>
  call.updates.some((update) => update.step === step && update.status === 'done')

/** Runs stage 13 (see the file's head). Returns the session's log file. */
export async function runVerifyStage(input: StageInput): Promise<string | undefined> {
  const { style, section, sessionDir, workspace, check } = input
  let host: DemoHost | undefined
  const renderer = stageRenderer(input, () => host)
  const answer: QuestionAnswerer = async (questions) => questions.map((question) => ({ id: question.id, selected: ['Approve'] }))
  renderer.stage('13. A step is done when the checks say so: marked done too early, refused, fixed, marked again')
  host = await createDemoHost({ sessionDir, workspace, model: input.model, section, renderer, style, answer, verifyTests: true })
  const { session } = host
  renderer.info(
    `session: ${session.id} on a fresh copy of the sample project, composed with the step check: a step that names tests is done only when node --test passes there`,
  )
  const send = async (line: string): Promise<void> => {
    renderer.prompt(host!.badge(), line, host!.status())
    await host!.submit(line)
    await host!.idle()
  }
  await send(`/plan ${SHOWCASE_VERIFY_GOAL}`)
  await send('/plans progress')
  const events = [...session.events]
  const updates = updateCalls(events)
  const early = updates.find((call) => marksDone(call, 1))
  const again = updates.find((call) => call !== early && marksDone(call, 1))
  const progressOf = (call: UpdateCall | undefined): boolean =>
    call !== undefined &&
    events.some(
      (event) => (event.type as string) === 'plan/progress' && (event.data as unknown as { toolCallId?: string }).toolCallId === call.id,
    )
  check(
    'update_plan marked the tests step done before the code existed: refused with the failing tests, nothing logged',
    early?.result?.isError === true &&
      /^Error: update_plan: step 1 is not done:\n- the workspace's tests fail \(node --test: \d+ of \d+ failed — “reopen makes a finished task open again”/.test(
        early.result.text,
      ) &&
      !progressOf(early),
  )
  const fixedAt = events.findIndex(
    (event, index) =>
      index > (early?.result?.index ?? Number.MAX_SAFE_INTEGER) &&
      event.type === 'tool/result' &&
      event.data.toolName === 'edit_file' &&
      !event.data.isError,
  )
  const tracked = host.progress()
  check(
    'the model read the refusal, wrote the code, and marked the step done again: the checks passed, plan 3/3',
    fixedAt > 0 &&
      again?.result?.isError === false &&
      again.result.index > fixedAt &&
      progressOf(again) &&
      tracked?.plan !== null &&
      tracked?.done === 3 &&
      tracked.total === 3,
  )
  const tests = spawnSync(process.execPath, ['--test'], { cwd: workspace, encoding: 'utf8' })
  renderer.info(
    `node --test in this workspace: ${/# pass (\d+)/.exec(tests.stdout)?.[1] ?? '?'} passed, ${/# fail (\d+)/.exec(tests.stdout)?.[1] ?? '?'} failed`,
  )
  check(
    'the sample project’s tests pass, the new ones included',
    tests.status === 0 && /reopen makes a finished task open again/.test(tests.stdout),
  )
  const file = session.file
  await host.close()
  host = undefined
  return file
}
