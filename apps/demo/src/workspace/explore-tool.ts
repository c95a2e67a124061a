import type { Context } from '@planmode/context'
import type { AgentRegistry, SessionStore, TurnOutcome } from '@planmode/host'
import type { Agent, SessionEvent, ToolDefinition, ToolPresentation, ToolResult } from '@planmode/seams'

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * Log-only, the first event of a helper agent's session: which call of
     * `explore` started it (the parent's session, agent and tool call) and
     * the question it was given. UIs use it to show the helper's work under
     * that call.
     */
    'demo/explore': {
      readonly parent: { readonly session: string; readonly agent: string; readonly toolCallId: string }
      readonly question: string
    }
  }
}

/** The event type a helper's session opens with. */
export const EXPLORE_EVENT = 'demo/explore'

/** The explore tool's name. */
export const EXPLORE_TOOL_NAME = 'explore'

/** Steps a helper may take before its turn ends `step-limit`. */
export const HELPER_MAX_STEPS = 8

/** One tool call a helper made, and how it went. */
export interface HelperCall {
  /** The tool called. */
  readonly tool: string
  /** Its title (the tool's `presentCall`), else the tool name. */
  readonly title: string
  /** `done`, `failed`, or `refused` (plan-guard's refusal in plan mode, SPEC §14). */
  readonly status: 'done' | 'failed' | 'refused'
  /** The first line of the failure, when it failed or was refused. */
  readonly error?: string
}

/** What `explore` returns: the helper's report and how it got there. */
export interface ExploreValue {
  /** The helper's session id (its log holds the whole run). */
  readonly session: string
  /** Whether the helper ran in plan mode: it inherited it from the calling agent (SPEC §21). */
  readonly planMode: boolean
  /** How the helper's turn ended. */
  readonly reason: TurnOutcome['reason']
  /** The tool calls it made, in order. */
  readonly calls: readonly HelperCall[]
  /** Its last message: what it found. */
  readonly findings: string
}

const REFUSED = /is not available in plan mode/

/** The helper's calls, with their outcomes, and its last text, read from its log. */
function readRun(
  events: readonly SessionEvent[],
  title: (name: string, input: unknown) => string,
): { calls: HelperCall[]; findings: string } {
  const calls: HelperCall[] = []
  const at = new Map<string, number>()
  let findings = ''
  for (const event of events) {
    if (event.type === 'assistant/message') {
      const text = event.data.content
        .flatMap((block) => (block.type === 'text' ? [block.text] : []))
        .join('')
        .trim()
      if (text !== '') findings = text
      for (const block of event.data.content) {
        if (block.type !== 'tool-call') continue
        at.set(block.toolCallId, calls.length)
        calls.push({ tool: block.toolName, title: title(block.toolName, block.input), status: 'done' })
      }
    } else if (event.type === 'tool/result' && event.data.isError) {
      const index = at.get(event.data.toolCallId)
      if (index === undefined) continue
      const text = event.data.content
        .map((block) => block.text)
        .join('\n')
        .replace(/^Error: /, '')
      calls[index] = { ...calls[index]!, status: REFUSED.test(text) ? 'refused' : 'failed', error: text.split('\n')[0]! }
    }
  }
  return { calls, findings }
}

const MARK: Record<HelperCall['status'], string> = { done: '✓', failed: '✗', refused: '✗ refused' }

/** The markdown a UI shows for an explore result: the helper's calls, then its findings. */
export function presentExploreValue(value: ExploreValue): string {
  const lines = [
    `**Helper agent** — ${value.planMode ? 'plan mode, inherited from this agent' : 'default mode'}; session \`${value.session}\``,
    '',
  ]
  for (const call of value.calls) lines.push(`- ${MARK[call.status]} \`${call.title}\`${call.error === undefined ? '' : `: ${call.error}`}`)
  if (value.calls.length === 0) lines.push('- (no tool calls)')
  lines.push('', '**Findings**', '', value.findings === '' ? '(the helper said nothing)' : value.findings)
  if (value.reason !== 'completed') lines.push('', `_The helper's turn ended: ${value.reason}._`)
  return lines.join('\n')
}

function present(title: string, text: string): ToolPresentation {
  return { card: 'generic', title, kind: 'read', content: [{ type: 'text', text }] }
}

/**
 * The `explore` tool: runs a helper agent — a child of the calling agent
 * (`agents.create({ session, owner })`), in a session of its own that
 * opens with a `demo/explore` event — on one question, and returns its
 * findings. Annotated read-only: the tool itself changes nothing, and
 * plan-guard lets it run in plan mode; the helper inherits the caller's
 * plan mode at its first step (SPEC §21), so it reads the child guidance
 * and is guarded by its own session. A helper cannot call `explore` again.
 * Cancelling the caller's turn cancels the helper's.
 */
export function createExploreTool(ctx: Context): ToolDefinition<{ question: string }, ExploreValue> {
  const titleOf = (name: string, input: unknown): string => {
    try {
      return (
        ctx
          .get('tools')
          ?.get(name)
          ?.presentCall?.(input as never)?.title ?? name
      )
    } catch {
      return name
    }
  }
  return {
    name: EXPLORE_TOOL_NAME,
    annotations: { readOnlyHint: true },
    description:
      'Ask a helper agent one question about the workspace. It explores with the read-only tools on its own and answers with what it found; in plan mode it stays in plan mode too. Use it for a side investigation; it cannot ask the user anything.',
    parameters: {
      type: 'object',
      properties: { question: { type: 'string', description: 'What the helper should find out, in one or two sentences.' } },
      required: ['question'],
      additionalProperties: false,
    },
    async execute(input, execution) {
      const parent: Agent | undefined = execution.agent
      if (parent === undefined) throw new Error('explore requires a calling agent')
      if (parent.owner !== undefined)
        throw new Error('explore is not available to a helper agent: answer with the read-only tools yourself')
      const question = input.question.trim()
      if (question === '') throw new Error('explore needs a non-empty question')
      const sessions: SessionStore = ctx.require('sessions')
      const agents: AgentRegistry = ctx.require('agents')
      const session = await sessions.create()
      try {
        await session.append(EXPLORE_EVENT, {
          parent: { session: parent.session.id, agent: parent.id, toolCallId: execution.toolCallId },
          question,
        })
        const helper = agents.create({ session, owner: parent, maxSteps: HELPER_MAX_STEPS })
        const cancel = (): void => void helper.cancel()
        execution.signal.addEventListener('abort', cancel, { once: true })
        let outcome: TurnOutcome
        try {
          outcome = execution.signal.aborted ? { turn: 0, reason: 'cancelled', steps: 0 } : await helper.prompt(question)
        } finally {
          execution.signal.removeEventListener('abort', cancel)
          helper.dispose()
        }
        const planMode = session.events.some(
          (event) => (event.type as string) === 'plan/mode' && (event.data as { active?: unknown }).active === true,
        )
        const { calls, findings } = readRun(session.events, titleOf)
        if (outcome.reason === 'error') throw new Error(`the helper failed: ${outcome.error ?? 'unknown error'}`)
        return { session: session.id, planMode, reason: outcome.reason, calls, findings }
      } finally {
        await sessions.close(session)
      }
    },
    toModelOutput: (value) =>
      `${value.findings === '' ? '(the helper said nothing)' : value.findings}${value.reason === 'completed' ? '' : `\n(The helper's turn ended: ${value.reason}.)`}`,
    presentCall: (input) => present(`explore “${input.question}”`, input.question),
    presentResult: (result: ToolResult) => {
      const value = result.value as ExploreValue | undefined
      if (result.isError || value === undefined) return present('explore', result.content.map((block) => block.text).join('\n'))
      return present('Helper agent', presentExploreValue(value))
    },
  }
}
