import type { Disposer, Plugin } from '@planmode/context'
import type { CommandDefinition, CommandRegistry, CommandRequest, CommandResult } from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { newId } from '../ids.js'

/**
 * A command line split into its name and raw arguments.
 *
 * @public
 */
export interface ParsedCommandLine {
  /** The name without the slash. */
  readonly name: string
  /**
   * Always a string: `''` when nothing or only whitespace follows the name;
   * otherwise the text after the name exactly as typed (untrimmed).
   */
  readonly args: string
}

/**
 * Splits `/name args`: the name runs from after the slash to the first
 * whitespace. `args` is `''` when nothing or only whitespace follows the
 * name (`/plan`, `/plan   `); otherwise it is the text after the name
 * exactly as typed, leading and trailing whitespace included (`/plan  fix it `
 * gives `'  fix it '`). `undefined` when the line does not start with `/`
 * followed by a name.
 *
 * @public
 */
export function parseCommandLine(line: string): ParsedCommandLine | undefined {
  const match = /^\/([^\s/][^\s]*)/.exec(line)
  if (match === null) return undefined
  const name = match[1]!
  const rest = line.slice(match[0].length)
  return { name, args: rest.trim() === '' ? '' : rest }
}

/**
 * Provides service `commands`. `execute` parses the line, logs
 * `command/run { commandId, name, args, source }` (where `args` is always a
 * string: the raw text after `/name`, `''` when nothing but whitespace
 * follows it), runs the handler (its `rawInput` is that same `args`) and logs
 * `command/done { commandId, kind, text }`. An unknown command resolves
 * `undefined` and logs nothing; a throwing handler, or attachments sent to a
 * command without `input.images`, give an `error` result.
 *
 * @public
 */
export const commandsPlugin: Plugin = {
  name: '@planmode/host/commands',
  apply(ctx) {
    const commands = new Map<string, CommandDefinition>()
    const registry: CommandRegistry = {
      register(command: CommandDefinition): Disposer {
        if (typeof command?.name !== 'string' || !/^[^\s/]\S*$/.test(command.name)) {
          throw new TypeError(`commands.register: invalid command name ${JSON.stringify(command?.name)}`)
        }
        if (typeof command.handler !== 'function') throw new TypeError(`commands.register(${command.name}): handler must be a function`)
        if (commands.has(command.name)) throw new Error(`command "/${command.name}" is already registered`)
        commands.set(command.name, command)
        return () => {
          if (commands.get(command.name) === command) commands.delete(command.name)
        }
      },
      list(): readonly CommandDefinition[] {
        return [...commands.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      },
      async execute(request: CommandRequest): Promise<CommandResult | undefined> {
        const parsed = parseCommandLine(request.line)
        if (parsed === undefined) return undefined
        const command = commands.get(parsed.name)
        if (command === undefined) return undefined
        const session = request.agent.session
        const commandId = newId('cmd')
        const attachments = request.attachments ?? []
        await session.append('command/run', {
          commandId,
          name: command.name,
          args: parsed.args, // always a string, '' for a bare `/name` (SPEC §5)
          source: request.source ?? { kind: 'user' },
        })
        let result: CommandResult
        if (attachments.length > 0 && command.input?.images !== true) {
          result = { kind: 'error', text: `/${command.name} does not accept image attachments.` }
        } else {
          try {
            result = await command.handler({ agent: request.agent, rawInput: parsed.args, attachments, commandId })
            if (result === null || typeof result !== 'object' || (result.kind !== 'success' && result.kind !== 'error')) {
              throw new TypeError(`/${command.name} returned ${JSON.stringify(result)}, not a command result`)
            }
          } catch (error) {
            ctx.logger.debug(`command /${command.name} threw`, error)
            result = { kind: 'error', text: messageOf(error) }
          }
        }
        await session.append('command/done', { commandId, kind: result.kind, text: result.text })
        return result
      },
    }
    ctx.provide('commands', registry)
  },
}
