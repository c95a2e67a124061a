import type { SessionNotification } from '@agentclientprotocol/sdk'

type Update = SessionNotification['update']

/** What a client shows of a session once it applied a list of updates: the state a replay must rebuild. */
export interface ClientView {
  /** Messages in order: `user: …`, `agent: …`, `thought: …` (chunks of one message id joined). */
  readonly messages: string[]
  /** Each tool call by id: title, kind, its last status and content. */
  readonly calls: Record<string, { title: string; kind: string | undefined; status: string | undefined; content: string }>
  readonly mode: string | undefined
  readonly config: string | undefined
  readonly plan: string[] | undefined
  readonly commands: string[] | undefined
}

const contentText = (content: unknown): string => {
  if (!Array.isArray(content)) return ''
  return content
    .map((block: { type?: string; content?: { text?: string } }) => (block.type === 'content' ? (block.content?.text ?? '') : ''))
    .join('\n')
}

/** Applies `updates` in order as a client would. */
export function clientView(updates: readonly Update[]): ClientView {
  const messages: { key: string; text: string }[] = []
  const calls: ClientView['calls'] = {}
  let mode: string | undefined
  let config: string | undefined
  let plan: string[] | undefined
  let commands: string[] | undefined
  for (const update of updates) {
    switch (update.sessionUpdate) {
      case 'user_message_chunk':
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const who =
          update.sessionUpdate === 'user_message_chunk' ? 'user' : update.sessionUpdate === 'agent_message_chunk' ? 'agent' : 'thought'
        const key = `${who}:${update.messageId ?? messages.length}`
        const text = update.content.type === 'text' ? update.content.text : `[${update.content.type}]`
        const last = messages.at(-1)
        if (last?.key === key) last.text += text
        else messages.push({ key, text })
        break
      }
      case 'tool_call':
        calls[update.toolCallId] = { title: update.title, kind: update.kind, status: update.status, content: contentText(update.content) }
        break
      case 'tool_call_update': {
        const call = calls[update.toolCallId] ?? { title: '', kind: undefined, status: undefined, content: '' }
        calls[update.toolCallId] = {
          title: update.title ?? call.title,
          kind: update.kind ?? call.kind,
          status: update.status ?? call.status,
          content: update.content == null ? call.content : contentText(update.content),
        }
        break
      }
      case 'current_mode_update':
        mode = update.currentModeId
        break
      case 'config_option_update':
        config = String(update.configOptions[0]?.currentValue)
        break
      case 'plan':
        plan = update.entries.map((entry) => `${entry.status}: ${entry.content}`)
        break
      case 'available_commands_update':
        commands = update.availableCommands.map((command) => command.name)
        break
      default:
        break
    }
  }
  return { messages: messages.map((message) => `${message.key.split(':')[0]}: ${message.text}`), calls, mode, config, plan, commands }
}
