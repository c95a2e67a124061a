import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import type { Agent } from '@planmode/seams'
import type { HostDuty } from './duties.js'

/**
 * What the kit gives a host factory for one case.
 *
 * @public
 */
export interface ConformanceEnvironment {
  /** The scripted model every agent of the host must send its requests to (an AI SDK `LanguageModelV3`). */
  readonly model: LanguageModelV3
  /**
   * A fresh, empty directory for this case's logs. A restart case closes the
   * first host and calls the factory again with the same `dir`: a host whose
   * log lives elsewhere (memory, a database) keys it by `dir`.
   */
  readonly dir: string
  /**
   * The models a handoff may choose (SPEC §18), by id: give them to your
   * host (`@planmode/host`'s `models` option) so that the id of
   * `agent/handoff` resolves. They answer from the same script as `model`,
   * under the model name `conformance:handoff`. A host without handoffs
   * ignores them and skips the duties `handoff-model` and `handoff-fresh`.
   */
  readonly models: Readonly<Record<string, LanguageModelV3>>
}

/**
 * The host as the kit drives it: its context, and the three things the seams
 * leave to each host (creating an agent, opening a logged session,
 * running a turn). Everything else goes through the seams' services on
 * `context`.
 *
 * @remarks
 * The kit compares each request with the log: every block of a logged
 * `user/message` must reach the model as one part of a user message, in log
 * order, a text block as a text part with exactly the logged text.
 * Consecutive messages may share one model message; texts joined into one
 * part fail `transcript-from-log`.
 *
 * @public
 */
export interface ConformanceHost<A extends Agent = Agent> {
  /**
   * The context holding the host's services (`systemPrompt`, `tools`,
   * `commands`, `userQuestions`, `sessionProjections`) and emitting its events
   * (`agent/pre-step`, `session/event`). The kit loads the plan layers into it.
   */
  readonly context: Context
  /** A new, empty session and an idle agent over it; with `owner`, a child agent owned by that live agent. */
  createAgent(options?: { readonly owner?: A }): A | Promise<A>
  /**
   * An idle agent over the session logged as `sessionId` (by an earlier host
   * with the same `dir`), opened for writing: a turn the log left open is
   * closed by the time it resolves (`step/end` of an open step, then
   * `turn/end { reason: 'interrupted' }`). Leave it out and the restart
   * cases fail, naming `restart-from-log`, unless that duty is skipped.
   */
  openAgent?(sessionId: string): A | Promise<A>
  /**
   * Runs one turn with `text` as its user message; resolves once the turn's
   * `turn/end` is logged. For a turn that a pre-step rejected it may reject
   * instead (as `@planmode/ai-sdk`'s `generate` does), once `turn/end` is
   * logged: the kit's rejection case accepts either.
   */
  prompt(agent: A, text: string): Promise<unknown>
  /**
   * Compacts what `agent`'s next requests carry, as the host does when a
   * conversation grows too long (summarising or dropping what the model
   * already read). Leave it out for a host that never compacts. With it,
   * the case of duty `compaction` compacts while plan mode is on and checks
   * that the model still reads the full plan guidance afterwards, and on
   * its next re-entry (SPEC §24).
   */
  compact?(agent: A): void | Promise<void>
  /** Releases the host (files, locks, timers). Called at the end of every case and before a restart. */
  close?(): void | Promise<void>
}

/**
 * Builds a fresh host for one case. It may be async.
 *
 * @public
 */
export type HostFactory<A extends Agent = Agent> = (environment: ConformanceEnvironment) => ConformanceHost<A> | Promise<ConformanceHost<A>>

/**
 * Options of the kit.
 *
 * @public
 */
export interface HostConformanceOptions {
  /** Duties not to check (their cases are reported skipped, never passed). */
  readonly skip?: readonly HostDuty[]
  /**
   * How long one host operation (the factory, a prompt, a command, an open)
   * may take before the case fails naming its duty. Default 4 000 ms, below
   * the 5 s test timeout of vitest and jest. The runner's timeout for a case
   * must exceed it, or a hanging host ends in the runner's bare timeout
   * instead of a named duty: see `testTimeoutMs`.
   */
  readonly operationTimeoutMs?: number
  /**
   * The timeout each case asks its runner for
   * ({@link HostConformanceCase.timeoutMs}; `describeHostConformance` passes
   * it as the third argument of `it`, which vitest and jest read). Default
   * `2 × operationTimeoutMs + 2 000` (10 000 ms); it must exceed
   * `operationTimeoutMs`.
   */
  readonly testTimeoutMs?: number
}
