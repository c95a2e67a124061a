/**
 * Runs the prompt-cache bench's scripted session through the real host loop:
 * `@planmode/host` with plan-core, plan-policy, plan-commands and plan-tool
 * composed (and plan-progress, with `progress`), a `read` and a `write` tool,
 * a scripted user-questions provider,
 * and the host's OpenAI-compatible provider pointed at the loopback server
 * of `cache-server.ts`. Returns every request body as the server received it.
 */
import { Context, type Logger } from '@planmode/context'
import { createOpenAICompatibleModel, hostPlugin, type HostAgent } from '@planmode/host'
import { PLAN_COMMAND_REPLIES, planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { planProgressPlugin } from '@planmode/plan-progress'
import { APPROVE_LABEL, ENTER_PLAN_MODE_LABEL, NOT_NOW_LABEL, planToolPlugin } from '@planmode/plan-tool'
import type { AskRequest, SessionEvent, UserAnswer } from '@planmode/seams'
import type { CacheScript, ScriptTurn } from './cache-script.js'
import { fileText } from './cache-script.js'
import { startChatServer, type CapturedRequest, type ScriptedAnswer } from './cache-server.js'

/** Where plan-policy puts the guidance (SPEC §13). */
export type Placement = 'system' | 'transcript'

/** Options of {@link runCacheSession}. */
export interface CacheSessionOptions {
  readonly script: CacheScript
  readonly placement: Placement
  /** The user's answer to `enter_plan_mode` (a turn's `answers.enter` overrides it): agree (switching sessions) or decline (the no-switch session). */
  readonly enter: typeof ENTER_PLAN_MODE_LABEL | typeof NOT_NOW_LABEL
  /** The guidance text; default `RECOMMENDED_PLAN_SECTION`. */
  readonly section?: string
  /** Error texts a tool result may carry in this run (any other failed tool call fails the run). */
  readonly toolErrors?: readonly string[]
  /** Compose `@planmode/plan-progress` too (its `update_plan` tool and its messages); default false. */
  readonly progress?: boolean
  /**
   * Send the whole section at every entry, as SPEC §13 did before §24's re-entry line (plan-core is handed the
   * section as its guidance text, which takes the place of plan-policy's); default false.
   */
  readonly fullGuidance?: boolean
}

/** What a session run leaves behind. */
export interface CacheSessionRun {
  /** Every model request, in order, as the server received it. */
  readonly requests: CapturedRequest[]
  /** The session log. */
  readonly events: readonly SessionEvent[]
  /** Every question the tools asked. */
  readonly asked: readonly AskRequest[]
  /** The tool names of the catalog the requests carried. */
  readonly tools: readonly string[]
  /** The guidance section the run used. */
  readonly section: string
}

/** The deployment's own system prompt: the section every request starts with. */
export const BASE_SYSTEM = [
  "You are a coding agent working in the user's repository through the tools you are given.",
  'Read before you change anything. Keep changes small and focused on what was asked, and say what you changed and why.',
  "Match the style of the surrounding code. Prefer the project's existing helpers to new ones.",
  'Run the tests that cover what you touched, and report failures as they are.',
  'When something is ambiguous, say what you assumed.',
].join('\n')

/**
 * The replies a batch of `/plan` and `/plan off` lines typed one after the other gives: idle, each commits;
 * mid-turn, a line queues a selection, and the next line for the other state cancels it (SPEC §3.3).
 */
export function expectedReplies(lines: readonly string[], idle: boolean): string[] {
  let queued: boolean | undefined
  return lines.map((line) => {
    if (line !== '/plan' && line !== '/plan off') throw new Error(`cache bench: unexpected command ${line}`)
    const on = line === '/plan'
    if (idle) return on ? PLAN_COMMAND_REPLIES.on : PLAN_COMMAND_REPLIES.off
    if (queued === !on) {
      queued = undefined
      return on ? PLAN_COMMAND_REPLIES.exitCancelled : PLAN_COMMAND_REPLIES.entryCancelled
    }
    queued = on
    return on ? PLAN_COMMAND_REPLIES.entering : PLAN_COMMAND_REPLIES.leaving
  })
}

/**
 * Runs the script's turns one after the other and returns the captured
 * requests. Throws when the session does not go as scripted: a turn that
 * does not complete in its scripted number of steps, a command that does
 * not reply as it should idle (committed) or mid-turn (queued, or
 * cancelled by the line after it; {@link expectedReplies}), an answer left
 * over, a failed tool call whose text is not in `toolErrors`, or any
 * warning or error logged.
 */
export async function runCacheSession(options: CacheSessionOptions): Promise<CacheSessionRun> {
  const { script, placement } = options
  const section = options.section ?? RECOMMENDED_PLAN_SECTION
  const problems: string[] = []
  const note =
    (level: string) =>
    (message: string, ...rest: unknown[]) => {
      problems.push(`${level}: ${message}${rest.length > 0 ? ` ${rest.map(String).join(' ')}` : ''}`)
    }
  const logger: Logger = { debug() {}, info() {}, warn: note('warn'), error: note('error') }
  const root = new Context({ logger })
  let agent: HostAgent | undefined
  let current: ScriptTurn | undefined

  const commands = async (lines: readonly string[], idle: boolean): Promise<void> => {
    const replies = expectedReplies(lines, idle)
    for (const [i, line] of lines.entries()) {
      const result = await root.require('commands').execute({ agent: agent!, line, attachments: [] })
      const want = replies[i]!
      if (result?.kind !== 'success' || result.text !== want) {
        throw new Error(
          `cache bench: ${line} (${idle ? 'idle' : 'mid-turn'}) replied ${JSON.stringify(result)}, expected ${JSON.stringify(want)}`,
        )
      }
    }
  }
  const answers: ScriptedAnswer[] = script.turns.flatMap((turn) => turn.steps)
  const server = await startChatServer({ answers, onDuring: (lines) => commands(lines, false) })
  try {
    const model = createOpenAICompatibleModel({ baseURL: server.baseURL, model: 'scripted-chat', name: 'loopback' })
    root.plugin(hostPlugin, { model, maxRetries: 0, retryDelayMs: 0 })
    root.plugin(planCorePlugin)
    root.plugin(planPolicyPlugin, { section, placement })
    // The latest guidance set is the one plan-core uses: a plain text is sent in full at every entry.
    if (options.fullGuidance === true) root.require('planMode').setGuidance(section)
    root.plugin(planCommandsPlugin)
    root.plugin(planToolPlugin, { enterTool: true })
    if (options.progress === true) root.plugin(planProgressPlugin)
    root.require('systemPrompt').section({ name: 'base', order: 10, text: BASE_SYSTEM })
    const tools = root.require('tools')
    tools.register<{ path: string }, string>({
      name: 'read',
      description: 'Reads a file of the repository and returns its text.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Path from the repository root.' } },
        required: ['path'],
      },
      execute: ({ path }) => fileText(path),
    })
    tools.register<{ path: string }, string>({
      name: 'write',
      description: 'Writes a file of the repository (creates or replaces it).',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Path from the repository root.' } },
        required: ['path'],
      },
      execute: ({ path }) => `wrote ${path}`,
    })
    const asked: AskRequest[] = []
    root.require('userQuestions').registerProvider({
      async ask(request): Promise<readonly UserAnswer[]> {
        asked.push(request)
        return request.questions.map((q): UserAnswer => {
          if (q.id === 'plan-review') return { id: q.id, selected: [current?.answers?.review ?? APPROVE_LABEL] }
          if (q.id === 'plan-enter') return { id: q.id, selected: [current?.answers?.enter ?? options.enter] }
          throw new Error(`cache bench: unexpected question ${q.id}`)
        })
      },
    })

    agent = root.require('agents').create({ session: await root.require('sessions').create() })
    for (const [index, turn] of script.turns.entries()) {
      current = turn
      if (turn.before !== undefined) await commands(turn.before, true)
      const outcome = await agent.prompt(turn.prompt)
      if (outcome.reason !== 'completed' || outcome.steps !== turn.steps.length) {
        throw new Error(
          `cache bench: turn ${index + 1} ended ${JSON.stringify(outcome)} after ${outcome.steps} of ${turn.steps.length} steps`,
        )
      }
    }
    if (server.remaining() !== 0) throw new Error(`cache bench: ${server.remaining()} scripted answers were never asked for`)
    for (const event of agent.session.events) {
      if (event.type !== 'tool/result' || event.data.isError !== true) continue
      const text = event.data.content.map((block) => block.text).join('\n')
      if (!(options.toolErrors ?? []).includes(text)) problems.push(`tool ${event.data.toolName} failed: ${text}`)
    }
    if (problems.length > 0) throw new Error(`cache bench: the session logged:\n${problems.join('\n')}`)
    const first = server.requests[0]?.body.tools ?? []
    return {
      requests: server.requests,
      events: agent.session.events,
      asked,
      tools: first.map((tool) => (tool as { function: { name: string } }).function.name),
      section,
    }
  } finally {
    await server.close()
    root.dispose()
  }
}
