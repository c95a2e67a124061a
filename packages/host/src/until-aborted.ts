/**
 * Settles like `promise`, or rejects as soon as `signal` aborts (at once when
 * it already has), with `reason(signal)` — by default the signal's own
 * `reason`. Without a signal it is `promise`. A rejection of `promise` after
 * the abort is observed, so it never surfaces as unhandled.
 */
export function untilAborted<T>(
  promise: PromiseLike<T>,
  signal: AbortSignal | undefined,
  reason: (signal: AbortSignal) => unknown = (aborted) => aborted.reason,
): Promise<T> {
  if (signal === undefined) return Promise.resolve(promise)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reason(signal))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
