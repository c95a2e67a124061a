import type { UserMessage } from '@planmode/seams'

/**
 * The steered messages of an agent that are not logged yet, in the order the
 * user typed them: the batch proposed to a running `agent/pre-step`
 * waterfall (in flight: taken from the queue, not logged yet) first, then
 * the ones still waiting. Whoever logs them — the step that takes them, the
 * turn's end, the agent's dispose — takes them out first, so each is logged
 * exactly once.
 */
export class SteeredMessages {
  private waiting: UserMessage[] = []
  private inFlight: UserMessage[] | undefined

  /** How many wait for a step (the in-flight batch not counted). */
  get waitingCount(): number {
    return this.waiting.length
  }

  /** How many are not logged yet, in flight included. */
  get size(): number {
    return this.waiting.length + (this.inFlight?.length ?? 0)
  }

  push(message: UserMessage): void {
    this.waiting.push(message)
  }

  /**
   * Takes the waiting messages for a pre-step. They stay in flight — seen by
   * {@link SteeredMessages.takeAll} — until {@link SteeredMessages.settle}
   * says the step queued its messages for logging.
   */
  propose(): readonly UserMessage[] {
    const batch = this.inFlight === undefined ? this.waiting : [...this.inFlight, ...this.waiting]
    this.waiting = []
    this.inFlight = batch
    return batch
  }

  /** True while `batch` is in flight: nobody has taken it to log it. */
  holds(batch: readonly UserMessage[]): boolean {
    return this.inFlight === batch
  }

  /** The step queued the decision's messages for logging: `batch` is no longer in flight. */
  settle(batch: readonly UserMessage[]): void {
    if (this.inFlight === batch) this.inFlight = undefined
  }

  /** Takes every message not logged yet, in flight first, oldest first. */
  takeAll(): UserMessage[] {
    const all = this.inFlight === undefined ? this.waiting : [...this.inFlight, ...this.waiting]
    this.inFlight = undefined
    this.waiting = []
    return all
  }
}
