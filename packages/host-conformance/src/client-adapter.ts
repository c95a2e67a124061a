import type { LanguageModelV3 } from '@ai-sdk/provider'
import { CodedError, type Context } from '@planmode/context'

/**
 * The duties of an adapter that serves plan mode to a client over a
 * protocol (SPEC §23 states them for the Agent Client Protocol;
 * `@planmode/acp` is checked by them):
 *
 * - `client-mode`: every `plan/mode` logged for the session's root agent,
 *   whatever its cause (the user, an approved review, an approved entry),
 *   is published to the client as the logged state, in log order, and a
 *   selection still queued is not;
 * - `client-unknown-outcome`: an answer to a review that the adapter did
 *   not offer is never an approval;
 * - `client-replay`: a client that attaches after the fact is shown what a
 *   client attached from the start was shown (the replay equals the log).
 *
 * @public
 */
export type ClientAdapterDuty = 'client-mode' | 'client-unknown-outcome' | 'client-replay'

/**
 * How the kit's client answers a review it is asked: an option the adapter
 * offered (`approve`, `keep`, `stop`; for the entry question `approve`
 * enters and `keep` declines), or `unknown`, an outcome the adapter did
 * not offer (for ACP: an option id that was not in the permission request).
 *
 * @public
 */
export type ClientAnswer = 'approve' | 'keep' | 'stop' | 'unknown'

/** What the kit's client is asked: a plan review, or the entry question. @public */
export interface ClientQuestion {
  readonly kind: 'plan-review' | 'plan-enter'
}

/**
 * One client the adapter serves, attached to one session: what it was
 * told, read back in a form the adapter chooses.
 *
 * @public
 */
export interface ServedClient {
  /** The plan mode the client was told is current, each time it was told, in order (`true`: plan mode). */
  modes(): readonly boolean[]
  /**
   * What the client shows of the session now, as plain JSON data compared
   * by deep equality (messages, tool calls with their last status, the mode,
   * the plan): two clients shown the same session give equal views.
   */
  view(): unknown
  /** Resolves once the client received everything the adapter sent so far. */
  settle(): Promise<void>
}

/** A client of a new session, and the two things the kit does through it. @public */
export interface ClientSession {
  /** The session's id in the host's store. */
  readonly sessionId: string
  readonly client: ServedClient
  /** Sends `text` as the person's message and resolves once the turn it starts ended. */
  prompt(text: string): Promise<void>
  /** Switches the mode as the person would in the client (for ACP: `session/set_mode`). */
  setMode(active: boolean): Promise<void>
}

/**
 * The adapter as the kit drives it: a host with the plan layers
 * (plan-core, plan-tool with its entry tool, plan-commands) whose agents
 * send their requests to the kit's model, served to clients the adapter
 * connects.
 *
 * @public
 */
export interface ClientAdapter {
  /** The host's context (the kit reads `planMode` and the logs there). */
  readonly context: Context
  /** A new session served to a new client, which answers each question it is asked with `answer`. */
  open(answer: (question: ClientQuestion) => ClientAnswer): Promise<ClientSession>
  /** A new client that attaches to session `sessionId` after the fact (for ACP: `session/load`). */
  attach(sessionId: string): Promise<ServedClient>
  /** Releases the adapter and the host. */
  close(): Promise<void>
}

/**
 * Builds a fresh adapter for one case; `model` is the scripted model every
 * agent of its host must use, `dir` a fresh folder for its logs.
 *
 * @public
 */
export type ClientAdapterFactory = (environment: {
  readonly model: LanguageModelV3
  readonly dir: string
}) => ClientAdapter | Promise<ClientAdapter>

const marker = Symbol.for('@planmode/host-conformance/ClientAdapterConformanceError')

/**
 * What a failing client-adapter case throws: the duty broken, and a message
 * that starts with `duty "<name>": `.
 *
 * @public
 */
export class ClientAdapterConformanceError extends CodedError<'DUTY_BROKEN'> {
  /** The duty the adapter broke. */
  readonly duty: ClientAdapterDuty
  private readonly [marker] = true

  constructor(duty: ClientAdapterDuty, message: string, options?: { cause?: unknown }) {
    super('DUTY_BROKEN', `duty "${duty}": ${message}`, options)
    this.name = 'ClientAdapterConformanceError'
    this.duty = duty
  }

  /** True for any `ClientAdapterConformanceError`, from any copy of this package. */
  static override isInstance(error: unknown): error is ClientAdapterConformanceError {
    return CodedError.hasMarker(error, marker)
  }
}
