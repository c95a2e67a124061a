/** A queue of input lines shared by the prompt and the plan review: whoever asks next gets the next line. */
export class LineSource {
  private readonly lines: string[] = []
  private readonly waiters: ((line: string | undefined) => void)[] = []
  private readonly urgent: ((line: string | undefined) => void)[] = []
  private ended = false

  /** True once the input has ended and every queued line was taken. */
  get done(): boolean {
    return this.ended && this.lines.length === 0
  }

  /** Adds a line (from readline or a script). */
  push(line: string): void {
    const waiter = this.urgent.shift() ?? this.waiters.shift()
    if (waiter !== undefined) waiter(line)
    else this.lines.push(line)
  }

  /** Puts a line back in front of the queue, for the prompt (not for an urgent reader). */
  unshift(line: string): void {
    const waiter = this.waiters.shift()
    if (waiter !== undefined) waiter(line)
    else this.lines.unshift(line)
  }

  /** Marks the end of input; waiting readers get `undefined`. */
  end(): void {
    this.ended = true
    for (const waiter of [...this.urgent.splice(0), ...this.waiters.splice(0)]) waiter(undefined)
  }

  /**
   * The next line, or `undefined` at the end of input or when `signal`
   * aborts. An `urgent` reader (a plan review) is served before the prompt.
   */
  next(signal?: AbortSignal, urgent = false): Promise<string | undefined> {
    const queue = urgent ? this.urgent : this.waiters
    const queued = this.lines.shift()
    if (queued !== undefined) return Promise.resolve(queued)
    if (this.ended || signal?.aborted === true) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      const waiter = (line: string | undefined): void => {
        signal?.removeEventListener('abort', onAbort)
        resolve(line)
      }
      const onAbort = (): void => {
        const index = queue.indexOf(waiter)
        if (index >= 0) queue.splice(index, 1)
        resolve(undefined)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      queue.push(waiter)
    })
  }
}
