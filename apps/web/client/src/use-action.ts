import { useCallback, useEffect, useRef, useState } from 'react'

/** An action's state: `busy` while its request is in flight, `error` when it failed. */
export interface Action {
  readonly busy: boolean
  readonly error: string | null
  /**
   * Runs `task` unless one is already in flight (a synchronous guard, so a
   * double click sends once). A failure is shown and the buttons come back.
   * Resolves true when it ran and succeeded.
   */
  run(task: () => Promise<unknown>): Promise<boolean>
  clearError(): void
}

/** One in-flight-guarded action per card or form. */
export function useAction(): Action {
  const inFlight = useRef(false)
  const mounted = useRef(true)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    mounted.current = true
    return () => {
      mounted.current = false
    }
  }, [])
  const run = useCallback(async (task: () => Promise<unknown>): Promise<boolean> => {
    if (inFlight.current) return false
    inFlight.current = true
    setBusy(true)
    setError(null)
    try {
      await task()
      return true
    } catch (failure) {
      if (mounted.current) setError(failure instanceof Error ? failure.message : String(failure))
      return false
    } finally {
      inFlight.current = false
      if (mounted.current) setBusy(false)
    }
  }, [])
  const clearError = useCallback(() => setError(null), [])
  return { busy, error, run, clearError }
}
