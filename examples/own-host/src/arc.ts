import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { SessionEvent, ToolDefinition, UserQuestionProvider } from '@planmode/seams'
import { createOwnHost, type OwnHost } from './host.js'
import { createScriptedModel, type ScriptedModel } from './scripted-model.js'
import type { OwnAgent } from './agent.js'

/** The plan the scripted model presents. */
export const ARC_PLAN = '# Add a --verbose flag\n\n1. Parse `--verbose` in `src/cli.ts`.\n2. Log each step while it is set.'

/** The host's own system-prompt section in the arc. */
export const ARC_INSTRUCTIONS = 'You are a coding agent working in a small TypeScript CLI repository.'

/** What the user types to start the arc. */
export const ARC_COMMAND = '/plan add a --verbose flag to the CLI'

/** A tiny in-memory workspace and its two tools: `read_file` (read-only) and `write_file`. */
export function workspaceTools(files: Map<string, string>): ToolDefinition<never, unknown>[] {
  const read: ToolDefinition<{ path: string }, string> = {
    name: 'read_file',
    description: 'Read a file of the workspace.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    annotations: { readOnlyHint: true },
    execute: ({ path }) => files.get(path) ?? `no such file: ${path}`,
  }
  const write: ToolDefinition<{ path: string; content: string }, string> = {
    name: 'write_file',
    description: 'Write a file of the workspace.',
    parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    annotations: { readOnlyHint: false, destructiveHint: true },
    execute: ({ path, content }) => (files.set(path, content), `wrote ${path}`),
  }
  return [read, write] as unknown as ToolDefinition<never, unknown>[]
}

/** A reviewer that approves every plan and accepts every entry into plan mode (a terminal or web UI would ask a person). */
export const approvingReviewer: UserQuestionProvider = {
  ask: async ({ questions }) => questions.map(({ id }) => ({ id, selected: [id === 'plan-enter' ? 'Enter plan mode' : 'Approve'] })),
}

/** The model's side of the arc: explore, present the plan, then carry it out once plan mode is off. */
export function arcModel(): ScriptedModel {
  return createScriptedModel([
    { text: 'Reading the CLI first.', toolCalls: [{ toolName: 'read_file', input: { path: 'src/cli.ts' } }] },
    { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: ARC_PLAN } }] },
    { text: 'Carrying out the plan.', toolCalls: [{ toolName: 'write_file', input: { path: 'src/cli.ts', content: 'parse(--verbose)' } }] },
    { text: 'Done: `--verbose` now logs each step.' },
  ])
}

/** The scripted plan-mode arc, offline: `/plan` with a message, explore, `exit_plan_mode`, approval, carrying out. */
export async function runArc(): Promise<{ host: OwnHost; agent: OwnAgent; model: ScriptedModel; files: Map<string, string> }> {
  const files = new Map([['src/cli.ts', 'parse(argv)']])
  const model = arcModel()
  const host = createOwnHost({ model, tools: workspaceTools(files), questions: approvingReviewer })
  host.ctx.require('systemPrompt').section({ name: 'host:instructions', order: 0, text: ARC_INSTRUCTIONS }) // before plan-policy's at 50
  const agent = host.agent(await host.session('arc'))
  await host.command(agent, ARC_COMMAND) // plan mode on, and the message is steered: a turn starts
  await agent.idle()
  return { host, agent, model, files }
}

const clip = (text: string): string => JSON.stringify(text.length > 70 ? `${text.slice(0, 67)}...` : text)

/** One log line per event, for people. */
export function describeEvent(event: SessionEvent): string {
  const at = `#${String(event.seq).padStart(2, '0')}`
  switch (event.type) {
    case 'request/header': {
      const tools = event.data.tools.map((tool) => tool.name).join(', ')
      return `${at} request/header (${event.data.reason}): ${event.data.system.length} chars of system text, tools ${tools}`
    }
    case 'user/message': {
      const text = event.data.content.map((block) => (block.type === 'text' ? block.text : '[image]')).join(' ')
      return `${at} user/message (${event.data.source.kind === 'user' ? 'user' : event.data.source.form}): ${clip(text)}`
    }
    case 'assistant/message': {
      const blocks = event.data.content.map((block) => (block.type === 'tool-call' ? `calls ${block.toolName}` : clip(block.text)))
      return `${at} assistant/message: ${blocks.join(', ')}`
    }
    case 'tool/result': {
      const text = clip(event.data.content.map((block) => block.text).join(' '))
      return `${at} tool/result ${event.data.toolName}${event.data.isError ? ' (failed)' : ''}: ${text}`
    }
    case 'command/run':
      return `${at} command/run /${event.data.name}, args ${JSON.stringify(event.data.args)}`
    case 'plan/review':
      return `${at} plan/review ${event.data.outcome}`
    case 'question/asked':
      return `${at} question/asked ${event.data.question.map((question) => question.id).join(', ')}`
    case 'question/settled': {
      const answers = event.data.answer?.map((answer) => answer.selected.join('|')).join(', ')
      return `${at} question/settled ${event.data.outcome}${answers === undefined ? '' : `: ${answers}`}`
    }
    case 'command/done':
      return `${at} command/done ${event.data.kind}: ${clip(event.data.text ?? '')}`
    default:
      return `${at} ${event.type} ${JSON.stringify(event.data)}`
  }
}
