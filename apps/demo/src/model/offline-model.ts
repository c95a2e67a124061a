import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import { RECOMMENDED_CHILD_SECTION } from '@planmode/plan-policy'
import { decideAsHelper, EXPLORE_TOOL, HELPER_PROMPT_OPENING, helperQuestion } from './helper.js'
import { asksToPlanFirst, carelessPath, goalOf } from './plan-first.js'
import { writePlan } from './plan-writer.js'
import { ENTER_TOOL, EXIT_TOOL, foldPlanning, type Episode, type PlanningState } from './planning-state.js'
import { readPrompt, type ReadItem } from './prompt-reader.js'
import { finishAll, refusedStep, UPDATE_TOOL, updateBefore, type ReadStep } from './plan-progress.js'
import { pickRecipe, type PlannedCall, type Recipe } from './recipes.js'

/** Options of {@link createOfflineModel}. */
export interface OfflineModelOptions {
  /**
   * The plan-mode section the host puts in the system prompt, or sends as
   * a transcript message (SPEC §13); either tells the model it is in plan
   * mode. Without it (or as well), a system prompt that names
   * `exit_plan_mode` counts as plan mode.
   */
  readonly planSection?: string
  /**
   * The guidance a child agent reads while it inherits plan mode
   * (plan-policy's `childSection`, SPEC §21); `RECOMMENDED_CHILD_SECTION`
   * when absent. A helper agent (a system prompt that opens with
   * {@link HELPER_PROMPT_OPENING}) is in plan mode when its system prompt or
   * a transcript message carries it.
   */
  readonly childSection?: string
  /** Pause between streamed chunks, in milliseconds (0 = none), so a human can watch and cancel. */
  readonly chunkDelayMs?: number
  /** The model id reported in request headers. */
  readonly modelId?: string
}

/** What the model decided to say or do for one step. */
export interface OfflineAction {
  readonly text: string
  readonly calls: readonly PlannedCall[]
}

const say = (text: string): OfflineAction => ({ text, calls: [] })

function isQuestion(text: string): boolean {
  return /\?\s*$/.test(text) && !/^(can|could|would|will) you\b/i.test(text)
}

function chat(text: string): OfflineAction {
  if (/^(hi|hello|hey|good (morning|afternoon|evening))\b/i.test(text)) {
    return say(
      "Hello! I'm planmode's offline demo model. Send `/plan <goal>` (try `/plan Add due dates to tasks`) and I'll explore this workspace read-only and present a plan for your review.",
    )
  }
  if (/^(thanks|thank you|cheers)\b/i.test(text)) return say("You're welcome.")
  if (isQuestion(text)) {
    return say(
      "I'm a small scripted model that runs offline, so I can't really answer open questions. What I can do is plan: send `/plan <goal>` and I'll explore the workspace and present a plan for your review.",
    )
  }
  return say(
    "I'm the offline demo model: outside plan mode I only chat. Send `/plan <goal>` (or `/plan` and then your goal), or ask me to plan first (\"let's plan first: <goal>\") and I'll ask to switch; in plan mode I explore the workspace read-only and present a plan for your review.",
  )
}

function lastResults(last: ReadItem | undefined): readonly { name: string; text: string; isError: boolean }[] {
  return last?.kind === 'tool' ? last.results : []
}

const MUTATING = new Set(['write_file', 'edit_file'])

/** "Ignore plan mode and write <file>": a look at the workspace and the write in one batch; then what came of the write. */
function careless(text: string, last: ReadItem | undefined, inPlanMode: boolean): OfflineAction | undefined {
  const path = carelessPath(text)
  if (last?.kind === 'user') {
    return {
      text: inPlanMode ? `Ignoring plan mode, as you asked: writing ${path} right away.` : `Writing ${path}.`,
      calls: [
        { name: 'list_files', input: {} },
        { name: 'write_file', input: { path, content: `Written by the offline demo model when told to ignore plan mode.\n` } },
      ],
    }
  }
  const write = lastResults(last).find((result) => MUTATING.has(result.name))
  if (write === undefined) return undefined
  if (write.isError && /is not available in plan mode/.test(write.text)) {
    return say(
      `The plan guard refused ${write.name}: in plan mode only read-only tools run here, and ${path} was not written. I'll stay read-only; tell me what to plan and I'll present a plan for your review.`,
    )
  }
  if (write.isError) return say(`${write.name} failed: ${write.text.replace(/^Error: /, '')}`)
  return say(
    inPlanMode
      ? `I wrote ${path} although plan mode is on: plan mode is guidance, not a sandbox, and nothing blocked the call. Start the host with --guard to have such calls refused.`
      : `Done: ${path} is written.`,
  )
}

/** "Ask a helper: <question>": one `explore` call, then what the helper reported (SPEC §21 shows in its log, not here). */
function askHelper(text: string, last: ReadItem | undefined, hasExploreTool: boolean): OfflineAction | undefined {
  const question = helperQuestion(text)
  if (last?.kind === 'user') {
    if (question === undefined) return say('What should the helper look into? Say "Ask a helper: <question>".')
    if (!hasExploreTool)
      return say(`I have no helper to ask here (no \`${EXPLORE_TOOL}\` tool), so I'll look myself: send the question as a message.`)
    return { text: "I'll ask a helper agent to look into that.", calls: [{ name: EXPLORE_TOOL, input: { question } }] }
  }
  const result = lastResults(last).find((candidate) => candidate.name === EXPLORE_TOOL)
  if (result === undefined) return undefined
  if (result.isError) return say(`The helper could not run: ${result.text.replace(/^Error: /, '')}`)
  return say(`The helper reported back:\n${result.text}`)
}

/** In the default mode, a request to plan first: ask to enter plan mode (SPEC §12), or say how when the tool is missing. */
function askToPlan(text: string, hasEnterTool: boolean): OfflineAction {
  const goal = goalOf(text).replace(/[.!]+$/, '')
  if (!hasEnterTool) {
    return say(
      `You asked to plan first, but I can't switch to plan mode myself here. Send \`/plan ${goal}\` and I'll explore the workspace read-only and present a plan.`,
    )
  }
  return {
    text: 'You asked to plan first, so I am asking to switch to plan mode.',
    calls: [
      {
        name: ENTER_TOOL,
        input: {
          reason: `You asked to plan first: ${goal}. In plan mode I only read the workspace, then present a plan for your review before changing anything.`,
        },
      },
    ],
  }
}

/** After an `enter_plan_mode` result, still in the default mode: the user declined or dismissed, or the call failed. */
function afterEntryRefused(result: { text: string; isError: boolean }): OfflineAction {
  const text = result.text.replace(/^Error: /, '')
  if (/dismissed the question/i.test(text)) return say("Understood: I'll wait for your message.")
  const note = / Their note: ([\s\S]*)$/.exec(text)?.[1]?.trim()
  if (/declined plan mode/i.test(text)) {
    return say(
      `Understood: no plan mode${note === undefined ? '' : ` (your note: “${note}”)`}. I'm the offline demo model, so in the default mode I only chat; send \`/plan <goal>\` when you want a plan.`,
    )
  }
  if (!result.isError) return say('Plan mode was agreed, but this request carries no plan guidance yet; send `/plan` to switch.')
  return say(`I could not switch to plan mode (${text}). Send \`/plan\` to switch yourself.`)
}

function explore(episode: Episode, hasExitTool: boolean): OfflineAction {
  const recipe = pickRecipe(episode.goal, episode.listed)
  if (episode.needsRevision && episode.review === 'not-ready') {
    // Sent back by the plan check (SPEC §20): add what it asked for and submit again, with no more exploring.
    const problems = episode.lastProblems ?? []
    if (episode.checkStuck) {
      return say(
        `The plan check still finds ${problems.length === 1 ? 'a problem' : 'problems'} I cannot fix myself:\n${problems.map((problem) => `- ${problem}`).join('\n')}\nTell me how to change the plan, or leave plan mode with \`/plan off\`.`,
      )
    }
    const plan = writePlan(episode, recipe)
    const what = problems.length === 1 ? `it said: ${problems[0]}` : `it listed ${problems.length} problems`
    return {
      text: `The plan check sent my plan back before review (${what}). Here it is again with that fixed.`,
      calls: [{ name: EXIT_TOOL, input: { plan } }],
    }
  }
  if (episode.needsRevision) {
    const feedback = episode.feedback[episode.feedback.length - 1] ?? ''
    const query = recipe.revisionQuery(feedback)
    if (episode.exploredSinceFeedback === 0 && query !== undefined && !episode.searches.some((search) => search.query === query)) {
      return { text: `Good point. Let me check where that fits before revising the plan.`, calls: [{ name: 'search', input: { query } }] }
    }
  } else if (episode.submissions.length === 0) {
    if (episode.listed === undefined) {
      return {
        text: "I'll plan this before touching anything. First, a look at the workspace.",
        calls: [{ name: 'list_files', input: {} }],
      }
    }
    const toRead = recipe.filesToRead(episode.listed).filter((file) => !episode.reads.has(file))
    if (episode.reads.size === 0 && toRead.length > 0) {
      return { text: 'Reading the files this touches.', calls: toRead.map((path) => ({ name: 'read_file', input: { path } })) }
    }
    if (episode.searches.length === 0 && recipe.searchQuery !== undefined) {
      return {
        text: `Checking every place that handles "${recipe.searchQuery}".`,
        calls: [{ name: 'search', input: { query: recipe.searchQuery } }],
      }
    }
  }
  const plan = writePlan(episode, recipe)
  if (!hasExitTool) {
    return say(
      `${plan}\nI can't submit this plan for review here (no \`${EXIT_TOOL}\` tool). When you're happy with it, leave plan mode with \`/plan off\`.`,
    )
  }
  const intro = episode.submissions.length === 0 ? 'Here is my plan.' : 'Here is the revised plan.'
  return { text: intro, calls: [{ name: EXIT_TOOL, input: { plan } }] }
}

/**
 * Carries out the approved plan, one batch of changes per step. When the
 * host tracks the plan (a progress message or an `update_plan` result is in
 * the transcript and the tool is in the catalog), each batch also sends the
 * update a real model would: the steps of the batch before are done, the
 * first step of this batch is in progress; once every batch ran, one more
 * step marks what is still open done (unless a change failed).
 */
function implement(
  episode: Episode,
  progress: PlanningState['progress'],
  hasUpdateTool: boolean,
  refused: ReturnType<typeof refusedStep>,
): OfflineAction {
  if (episode.handedOff && episode.listed === undefined) {
    // A fresh session knows only the plan: a look at the workspace first, as a real model would.
    const title = /^#{1,6}\s+(.*)$/m.exec(episode.approvedEdit ?? '')?.[1]?.trim() ?? 'the plan'
    return {
      text: `I'm carrying out the approved plan “${title}” handed to this session. First, a look at the workspace.`,
      calls: [{ name: 'list_files', input: {} }],
    }
  }
  const recipe = pickRecipe(episode.goal, episode.listed)
  const submitted = episode.submissions[episode.submissions.length - 1] ?? ''
  const plan = episode.approvedEdit ?? submitted
  // Lines the user added in an edited approval count as requests, like feedback (a handed-over plan: all its lines).
  const before = new Set(submitted.split('\n').map((line) => line.trim()))
  const added = episode.approvedEdit === undefined ? [] : plan.split('\n').filter((line) => line.trim() !== '' && !before.has(line.trim()))
  const feedback = [...episode.feedback, ...added]
  const done = episode.implementationSteps
  const tracked = hasUpdateTool ? progress : undefined
  if (recipe.testFirst !== undefined && tracked !== undefined) return testFirst(recipe, tracked, done, refused, feedback)
  const steps = recipe.implementation(feedback, plan, episode.goal)
  if (done < steps.length) {
    const first = episode.handedOff
      ? "I've seen the workspace, so I am carrying the plan out now, step by step."
      : episode.approvedEdit === undefined
        ? 'The plan is approved, so I am carrying it out now.'
        : `You edited the plan before approving it, so I am carrying out your version now (${added.length} line${added.length === 1 ? '' : 's'} you added).`
    const text = done === 0 ? first : 'Continuing with the plan.'
    const update = tracked === undefined ? undefined : updateBefore(tracked, done, steps.length)
    return { text, calls: update === undefined ? steps[done]! : [update, ...steps[done]!] }
  }
  const failed = episode.implementationResults.filter((result) => result.isError)
  const finish = tracked === undefined || failed.length > 0 || done !== steps.length ? undefined : finishAll(tracked)
  if (finish !== undefined) return { text: 'Every step of the plan is carried out; marking them done.', calls: [finish] }
  if (failed.length > 0) {
    return say(
      `I carried out the plan, but ${failed.length} change${failed.length === 1 ? '' : 's'} failed:\n${failed
        .map((result) => `- ${result.text}`)
        .join('\n')}\nThe workspace may differ from what I planned against; tell me how to proceed.`,
    )
  }
  return say(`Done. ${recipe.summary(feedback)}`)
}

/**
 * Carries out a test-first recipe on a tracked plan (see `Recipe.testFirst`),
 * one model step each: the tests, with their step in progress; that step
 * marked done at once (too early: the code is not written); then, reading
 * the refusal a host that checks steps sends (SPEC §25), the code; then
 * every open step marked done again; then the summary. A refusal the code
 * did not fix is said, not retried.
 */
function testFirst(
  recipe: Recipe,
  tracked: readonly ReadStep[],
  done: number,
  refused: ReturnType<typeof refusedStep>,
  feedback: readonly string[],
): OfflineAction {
  const plan = recipe.testFirst!
  const update = (status: string): PlannedCall => ({ name: UPDATE_TOOL, input: { updates: [{ step: plan.step, status }] } })
  if (done === 0)
    return { text: 'The plan is approved. Tests first: I am writing them before the code.', calls: [update('in_progress'), ...plan.tests] }
  if (done === 1) return { text: `The tests are written, so step ${plan.step} is done.`, calls: [update('done')] }
  if (done === 2) {
    const why =
      refused === undefined
        ? ''
        : ` The check refused step ${refused.step}: ${refused.problems[0] ?? 'it is not done'}. The tests exercise code I have not written yet, so I am writing it now.`
    return { text: `${why === '' ? `Step ${plan.step} is marked; now the code.` : why.trim()}`, calls: [...plan.code] }
  }
  if (done === 3) {
    const finish = finishAll(tracked)
    if (finish !== undefined) return { text: `The code is in place: marking step ${plan.step} done again, and the rest.`, calls: [finish] }
  }
  if (refused !== undefined) {
    return say(
      `The check still refuses step ${refused.step}:\n${refused.problems.map((problem) => `- ${problem}`).join('\n')}\nI could not make it pass; tell me how to proceed.`,
    )
  }
  return say(`Done. ${recipe.summary(feedback)}`)
}

/**
 * Decides the next step from the request alone: plan-mode exploration and a
 * plan through `exit_plan_mode`, a visible revision after "keep planning",
 * the implementation once the plan is approved and plan mode is off
 * (tracked with `update_plan` when the host offers it), a
 * request to plan first answered with `enter_plan_mode`, and plain answers
 * to plain chat. Plan mode is read from the system prompt or from a
 * guidance message in the transcript. Pure and deterministic.
 */
export function decide(
  options: LanguageModelV3CallOptions,
  modelOptions: OfflineModelOptions = {},
): OfflineAction & { state: PlanningState } {
  const section = modelOptions.planSection?.trim()
  const systemText = options.prompt.flatMap((message) => (message.role === 'system' ? [message.content] : [])).join('\n\n')
  if (systemText.trimStart().startsWith(HELPER_PROMPT_OPENING)) {
    // A helper agent (a child of the agent that called `explore`): plan mode is on when it holds the child guidance (SPEC §21).
    const childSection = (modelOptions.childSection ?? RECOMMENDED_CHILD_SECTION).trim()
    const read = readPrompt(options.prompt, childSection)
    const inherited = systemText.includes(childSection) || read.items.some((item) => item.kind === 'user' && item.guidance === true)
    return { ...decideAsHelper(read.items, inherited), state: foldPlanning(read.items) }
  }
  const { system, items } = readPrompt(options.prompt, section)
  const state = foldPlanning(items)
  // The guidance in the system prompt (placement 'system'), or held from a transcript message (placement 'transcript').
  const inPlanMode =
    (section !== undefined && section !== '' && system.includes(section)) || system.includes(EXIT_TOOL) || state.transcriptPlanMode === true
  const hasExitTool = (options.tools ?? []).some((tool) => tool.name === EXIT_TOOL)
  const hasEnterTool = (options.tools ?? []).some((tool) => tool.name === ENTER_TOOL)
  const hasUpdateTool = (options.tools ?? []).some((tool) => tool.name === UPDATE_TOOL)
  const hasExploreTool = (options.tools ?? []).some((tool) => tool.name === EXPLORE_TOOL)
  const { episode } = state
  // A plan-mode notice or guidance message says the mode changed; what to do next depends on what came before it.
  const last = items
    .filter(
      (item) => item.kind !== 'user' || (!item.notice && item.guidance !== true && item.progress !== true && item.handoff === undefined),
    )
    .at(-1)
  const act = (action: OfflineAction): OfflineAction & { state: PlanningState } => ({ ...action, state })

  if (state.careless !== undefined) {
    const action = careless(state.careless, last, inPlanMode)
    if (action !== undefined) return act(action)
  }

  if (state.helper !== undefined) {
    const action = askHelper(state.helper, last, hasExploreTool)
    if (action !== undefined) return act(action)
  }

  if (episode?.approved === true && last?.kind !== 'user') {
    if (inPlanMode && episode.implementationSteps > 0) {
      return act(say("Plan mode is on again, so I've stopped making changes. Tell me what to plan next."))
    }
    const refused = lastResults(last)
      .flatMap((result) => (result.name === UPDATE_TOOL && result.isError ? [refusedStep(result.text.replace(/^Error: /, ''))] : []))
      .find((item) => item !== undefined)
    return act(implement(episode, state.progress, hasUpdateTool, refused))
  }

  const exitResult = lastResults(last).some((result) => result.name === EXIT_TOOL)
  if (exitResult && episode !== undefined) {
    if (episode.review === 'stopped')
      return act(say("Understood: planning is over and I won't carry out that plan. Tell me what you'd like next."))
    if (episode.review === 'handed-off')
      return act(say('The plan goes on in a fresh session, so I stop here and change nothing in this one.'))
    if (episode.review === 'dismissed') {
      // The person may have left plan mode as they dismissed it (`/plan off` at the review): the notice after the result says so.
      if (!inPlanMode)
        return act(
          say("Understood: plan mode is off now, so I've stopped planning and won't carry out that plan. I'll wait for your message."),
        )
      return act(say("Understood: I'm staying in plan mode and waiting for your message."))
    }
    if (episode.review === 'failed') {
      return act(
        say(
          `My plan could not be submitted for review (${episode.failure ?? 'unknown error'}). If review is unavailable, leave plan mode yourself with \`/plan off\` once you're happy with the plan.`,
        ),
      )
    }
  }

  const entry = lastResults(last).find((result) => result.name === ENTER_TOOL)
  if (!inPlanMode) {
    if (entry !== undefined) return act(afterEntryRefused(entry))
    if (last?.kind === 'user' && state.unclaimedUserText !== undefined) {
      if (asksToPlanFirst(state.unclaimedUserText)) return act(askToPlan(state.unclaimedUserText, hasEnterTool))
      return act(chat(state.unclaimedUserText))
    }
    if (episode !== undefined && !episode.approved) {
      return act(say("Plan mode is off, so I'll wait: send `/plan` to go on planning, or tell me what to do next."))
    }
    return act(say('Anything else?'))
  }

  if (episode === undefined) {
    const text = state.unclaimedUserText
    if (text === undefined) return act(say('Plan mode is on. What should I plan?'))
    if (isQuestion(text) && entry === undefined) {
      return act(
        say("I'm in plan mode, so I only read and plan. Tell me what you want changed and I'll explore the workspace and present a plan."),
      )
    }
    return act({
      text: "I'll plan this before touching anything. First, a look at the workspace.",
      calls: [{ name: 'list_files', input: {} }],
    })
  }
  return act(explore(episode, hasExitTool))
}

function usage(options: LanguageModelV3CallOptions, output: string): LanguageModelV3Usage {
  const input = Math.ceil(JSON.stringify(options.prompt).length / 4)
  const out = Math.ceil(output.length / 4)
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: out, text: out, reasoning: 0 },
  }
}

function chunks(text: string, size = 32): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

function abortError(): Error {
  const error = new Error('The operation was aborted.')
  error.name = 'AbortError'
  return error
}

/**
 * The deterministic offline planning model, an AI SDK `LanguageModelV3`:
 * no network, no key, the same answer for the same request.
 */
export function createOfflineModel(modelOptions: OfflineModelOptions = {}): LanguageModelV3 {
  const delay = modelOptions.chunkDelayMs ?? 0
  const build = (options: LanguageModelV3CallOptions) => {
    if (options.abortSignal?.aborted === true) throw abortError()
    const action = decide(options, modelOptions)
    const calls = action.calls.map((call, index) => ({
      toolCallId: `call_${action.state.callCount + index + 1}`,
      toolName: call.name,
      input: JSON.stringify(call.input),
    }))
    const finishReason = {
      unified: calls.length > 0 ? ('tool-calls' as const) : ('stop' as const),
      raw: calls.length > 0 ? 'tool_calls' : 'stop',
    }
    return { action, calls, finishReason, usage: usage(options, action.text + calls.map((call) => call.input).join('')) }
  }
  return {
    specificationVersion: 'v3',
    provider: 'planmode-offline',
    modelId: modelOptions.modelId ?? 'planner-1',
    supportedUrls: {},
    async doGenerate(options): Promise<LanguageModelV3GenerateResult> {
      const { action, calls, finishReason, usage } = build(options)
      const content: LanguageModelV3Content[] = []
      if (action.text !== '') content.push({ type: 'text', text: action.text })
      for (const call of calls) content.push({ type: 'tool-call', ...call })
      return { content, finishReason, usage, warnings: [], response: { modelId: modelOptions.modelId ?? 'planner-1' } }
    },
    async doStream(options): Promise<LanguageModelV3StreamResult> {
      const { action, calls, finishReason, usage } = build(options)
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }]
      parts.push({ type: 'response-metadata', id: `offline-${action.state.callCount}`, modelId: modelOptions.modelId ?? 'planner-1' })
      if (action.text !== '') {
        parts.push({ type: 'text-start', id: 'text-1' })
        for (const delta of chunks(action.text)) parts.push({ type: 'text-delta', id: 'text-1', delta })
        parts.push({ type: 'text-end', id: 'text-1' })
      }
      for (const call of calls) {
        parts.push({ type: 'tool-input-start', id: call.toolCallId, toolName: call.toolName })
        for (const delta of chunks(call.input, 256)) parts.push({ type: 'tool-input-delta', id: call.toolCallId, delta })
        parts.push({ type: 'tool-input-end', id: call.toolCallId })
        parts.push({ type: 'tool-call', ...call })
      }
      parts.push({ type: 'finish', finishReason, usage })
      const signal = options.abortSignal
      let index = 0
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          if (signal?.aborted === true) {
            controller.error(abortError())
            return
          }
          if (delay > 0 && index > 0) await new Promise((resolve) => setTimeout(resolve, delay))
          if ((signal as AbortSignal | undefined)?.aborted === true) {
            controller.error(abortError())
            return
          }
          const part = parts[index++]
          if (part === undefined) controller.close()
          else controller.enqueue(part)
        },
      })
      return { stream }
    },
  }
}
