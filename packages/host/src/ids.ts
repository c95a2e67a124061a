import { randomBytes } from 'node:crypto'

/**
 * A new identifier: `prefix`, then the time in base 36 (so ids sort by
 * creation), then random hex. Only `[a-z0-9_-]`, safe as a file name.
 */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(5).toString('hex')}`
}
