import { readFileSync } from 'node:fs'

/** What `/proc/<pid>/stat` says of a process: its pid, its state letter and its start time. */
export interface ProcStat {
  readonly pid: number
  readonly state: string
  /** Field 22: start time in clock ticks after boot (tells a reused pid apart). */
  readonly start: number
}

/** Fields 1, 3 and 22 of `/proc/<pid>/stat` (the name, field 2, may hold spaces and parentheses). */
export function procStat(pid: number | 'self'): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = text.lastIndexOf(')')
    const fields = text.slice(close + 2).split(' ')
    const start = Number(fields[19])
    const state = fields[0]
    if (state === undefined || !Number.isSafeInteger(start)) return undefined
    return { pid: Number.parseInt(text, 10), state, start }
  } catch {
    return undefined
  }
}
