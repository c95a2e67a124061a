/** Returned by {@link plainCopy} for a value JSON would not read back as it is. */
export const NOT_PLAIN: unique symbol = Symbol('not plain JSON')

/**
 * A deep copy of `value` when it is plain JSON data that `JSON.parse(JSON.stringify(value))`
 * gives back unchanged (plain objects and arrays, strings, booleans, `null`,
 * finite numbers other than `-0`, no `undefined`, no `toJSON`); otherwise
 * {@link NOT_PLAIN}. One walk, cheaper than a stringify and a parse.
 */
export function plainCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) && (value !== 0 || 1 / value > 0) ? value : NOT_PLAIN
    case 'object':
      break
    default:
      return NOT_PLAIN
  }
  if (value === null) return null
  if (depth > 64) return NOT_PLAIN
  if (Array.isArray(value)) {
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN
    const out: unknown[] = []
    for (let index = 0; index < value.length; index++) {
      const item = plainCopy(value[index], depth + 1)
      if (item === NOT_PLAIN) return NOT_PLAIN
      out.push(item)
    }
    return out
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN
  const record = value as Record<string, unknown>
  if (typeof record.toJSON === 'function') return NOT_PLAIN
  const out: Record<string, unknown> = {}
  for (const key in record) {
    if (key === '__proto__' || !Object.hasOwn(record, key)) return NOT_PLAIN
    const item = plainCopy(record[key], depth + 1)
    if (item === NOT_PLAIN) return NOT_PLAIN
    out[key] = item
  }
  return out
}
