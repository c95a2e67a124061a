import { randomUUID } from 'node:crypto'
import type { CommandDefinition, CommandRegistry, CommandResult } from '@planmode/seams'

/**
 * The command registry. `execute` logs `command/run` before the handler and
 * `command/done` after it; `args` is always a string (`''` for a bare
 * `/plan`). A line naming no registered command logs nothing and resolves
 * `undefined`. Image attachments are not passed on (no command of the
 * example takes them).
 */
export function createCommandRegistry(): CommandRegistry {
  const commands = new Map<string, CommandDefinition>()
  return {
    register(command) {
      if (commands.has(command.name)) throw new Error(`command "/${command.name}" is already registered`)
      commands.set(command.name, command)
      return () => void (commands.get(command.name) === command && commands.delete(command.name))
    },
    list: () => [...commands.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
    async execute({ agent, line, source = { kind: 'user' } }) {
      const match = /^\/(\S+)(.*)$/s.exec(line)
      const command = match === null ? undefined : commands.get(match[1]!)
      if (command === undefined) return undefined
      const args = match![2]!.trim() === '' ? '' : match![2]! // always a string: '' after a bare `/plan`
      const commandId = `cmd_${randomUUID()}`
      await agent.session.append('command/run', { commandId, name: command.name, args, source })
      let result: CommandResult
      try {
        result = await command.handler({ agent, rawInput: args, attachments: [], commandId })
      } catch (error) {
        result = { kind: 'error', text: error instanceof Error ? error.message : String(error) }
      }
      await agent.session.append('command/done', { commandId, kind: result.kind, text: result.text })
      return result
    },
  }
}
