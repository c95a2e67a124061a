import type { Disposer } from '@planmode/context'
import type { Agent } from './agent.js'
import type { ImageAttachment } from './messages.js'
import type { CommandSource } from './session.js'

/** How a command takes input. @public */
export interface CommandInput {
  /** Shown after the name in help, e.g. `[off|message]`. */
  readonly hint?: string
  /** Whether composer image attachments may accompany the command. */
  readonly images?: boolean
}

/** What a handler receives. @public */
export interface CommandInvocation {
  /** The agent the command was run for. */
  readonly agent: Agent
  /** Everything after `/name`, untrimmed; `''` when nothing follows (the `args` of `command/run`). */
  readonly rawInput: string
  /** Image attachments sent with the command (empty unless `input.images`). */
  readonly attachments: readonly ImageAttachment[]
  /** Pairs the logged `command/run` and `command/done`. */
  readonly commandId: string
}

/** A handler's reply, shown to the user and never to the model. @public */
export interface CommandResult {
  /** Whether the command did what was asked. */
  readonly kind: 'success' | 'error'
  /** The reply, for the person who ran it. */
  readonly text: string
}

/** A slash command. @public */
export interface CommandDefinition {
  /** The name without the slash. */
  readonly name: string
  /** One line for help listings. */
  readonly description: string
  /** What input it takes. */
  readonly input?: CommandInput
  /** Runs the command. A throw becomes an `error` result. */
  handler(invocation: CommandInvocation): CommandResult | Promise<CommandResult>
}

/** A request to run one command line. @public */
export interface CommandRequest {
  /** The agent to run it for. */
  readonly agent: Agent
  /** The whole line, starting with `/`. */
  readonly line: string
  /** Composer images sent with the line. */
  readonly attachments?: readonly ImageAttachment[]
  /** Who ran it; defaults to `{ kind: 'user' }`. */
  readonly source?: CommandSource
}

/**
 * The command registry (service `commands`).
 *
 * @remarks
 * `execute` logs `command/run { commandId, name, args, source }` before the
 * handler (`args` always a string and the handler's `rawInput`, `''` after
 * a bare name) and `command/done { commandId, kind }` after it; an unknown
 * command logs nothing (host duty `command-args` of
 * `@planmode/host-conformance`). Without `args`, a bare `/plan` typed
 * mid-turn is lost on restart: readers take a missing one for "no
 * arguments recorded".
 *
 * @public
 */
export interface CommandRegistry {
  /** Adds a command. Throws if the name is taken. The disposer removes exactly this registration (duty `composition`). */
  register(command: CommandDefinition): Disposer
  /** Registered commands, sorted by name. */
  list(): readonly CommandDefinition[]
  /**
   * Runs a `/name args` line: logs `command/run` (with `args`, the text after
   * `/name` as typed, `''` when nothing follows), runs the handler with that
   * `args` as its `rawInput`, then logs `command/done` with the result's
   * `kind`. Resolves `undefined` when the line names no registered command
   * (nothing is logged then). A throwing handler becomes an `error` result.
   */
  execute(request: CommandRequest): Promise<CommandResult | undefined>
}
