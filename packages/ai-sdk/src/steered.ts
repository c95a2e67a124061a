import type { UserMessage } from '@planmode/seams'

/** Messages steered into the agent and not logged yet, oldest first. */
export class SteeredQueue {
  private waiting: UserMessage[] = []

  get size(): number {
    return this.waiting.length
  }

  push(message: UserMessage): void {
    this.waiting.push(message)
  }

  /** Takes every waiting message (for a pre-step's proposal). */
  take(): UserMessage[] {
    const taken = this.waiting
    this.waiting = []
    return taken
  }

  /** Puts messages a pre-step did not log back at the front, in order. */
  restore(messages: readonly UserMessage[]): void {
    this.waiting = [...messages, ...this.waiting]
  }
}
