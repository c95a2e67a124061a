/** A value the log can hold as JSON, or `undefined` when JSON cannot write it. */
export function jsonValue(value: unknown): unknown {
  if (value === undefined) return undefined
  try {
    return JSON.stringify(value) === undefined ? undefined : value
  } catch {
    return undefined
  }
}
