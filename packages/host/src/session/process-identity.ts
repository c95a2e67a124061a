import { readFileSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { procStat } from './process-stat.js'

// Who a process is, written into a file another process reads later (a
// session lock, an answer channel's announcement), and the one rule that
// tells from such a record whether that process still runs.
// - A record names the process by pid, host name, machine id
//   (`/etc/machine-id`), boot id, start time (field 22 of /proc/<pid>/stat)
//   and pid namespace (the inode of /proc/self/ns/pid). Fields past the
//   host name are absent where /proc is missing (macOS), and in records of
//   older versions.
// - It is gone only when that is provable: same host name and another boot
//   id (the machine restarted; same machine id too, when both sides have
//   one), or same boot and pid namespace with the pid not running, a
//   zombie, or running with another start time (the pid was reused).
// - Another host name, another machine id under the same host name (cloned
//   VMs, "localhost" sharing a folder) or another pid namespace cannot be
//   checked from here: never gone. Without /proc the rule falls back to the
//   pid and the host name.
// - This very process (same pid and start time) is `self`: whoever wrote
//   the record decides whether it still stands behind it.

/** Who a process is, as a lock or an announcement records it. */
export interface ProcessIdentity {
  readonly pid: number
  readonly host: string
  /** `/etc/machine-id`: tells apart machines that share a host name. */
  readonly machine?: string
  /** `/proc/sys/kernel/random/boot_id`. */
  readonly boot?: string
  /** Field 22 of `/proc/<pid>/stat`: start time in clock ticks after boot. */
  readonly start?: number
  /** Inode of `/proc/self/ns/pid`. */
  readonly pidns?: number
}

/**
 * What {@link processState} can tell of a recorded process: this very
 * process; running (or not provably gone); provably gone (`why` says how);
 * or on another host, machine or pid namespace, where it cannot be
 * checked (`where`).
 */
export type ProcessState =
  | { readonly state: 'self' }
  | { readonly state: 'alive' }
  | { readonly state: 'gone'; readonly why: string }
  | { readonly state: 'unchecked'; readonly where: 'host' | 'machine' | 'namespace'; readonly why: string }

interface Here extends Required<Pick<ProcessIdentity, 'pid' | 'host'>> {
  readonly machine: string | undefined
  readonly boot: string | undefined
  readonly start: number | undefined
  readonly pidns: number | undefined
  /** Whether `/proc/<pid>` names processes of our pid namespace (false under `unshare --pid` without a new `/proc`). */
  readonly procIsOurs: boolean
}

let here: Here | undefined

function readTrimmed(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** This process as it is now (read once; again after a fork changes the pid or the host name changes). */
function me(): Here {
  if (here !== undefined && here.host === hostname() && here.pid === process.pid) return here
  let pidns: number | undefined
  try {
    pidns = statSync('/proc/self/ns/pid').ino
  } catch {
    pidns = undefined
  }
  const stat = procStat('self')
  here = {
    pid: process.pid,
    host: hostname(),
    machine: readTrimmed('/etc/machine-id'),
    boot: readTrimmed('/proc/sys/kernel/random/boot_id'),
    start: stat?.start,
    pidns,
    procIsOurs: stat?.pid === process.pid,
  }
  return here
}

/** This process, as a record names it. */
export function thisProcess(): ProcessIdentity {
  const { pid, host, machine, boot, start, pidns } = me()
  return {
    pid,
    host,
    ...(machine === undefined ? {} : { machine }),
    ...(boot === undefined ? {} : { boot }),
    ...(start === undefined ? {} : { start }),
    ...(pidns === undefined ? {} : { pidns }),
  }
}

/** The problem with the identity fields of a parsed record, or `undefined` when they are well formed. */
export function identityProblem(record: Record<string, unknown>): string | undefined {
  if (typeof record.pid !== 'number' || !Number.isSafeInteger(record.pid) || record.pid <= 0)
    return `"pid" is ${JSON.stringify(record.pid)}; expected a positive integer`
  if (typeof record.host !== 'string' || record.host === '') return `"host" is ${JSON.stringify(record.host)}; expected a non-empty string`
  if (record.machine !== undefined && typeof record.machine !== 'string')
    return `"machine" is ${JSON.stringify(record.machine)}; expected a string`
  if (record.boot !== undefined && typeof record.boot !== 'string') return `"boot" is ${JSON.stringify(record.boot)}; expected a string`
  if (record.start !== undefined && (typeof record.start !== 'number' || !Number.isSafeInteger(record.start)))
    return `"start" is ${JSON.stringify(record.start)}; expected an integer`
  if (record.pidns !== undefined && (typeof record.pidns !== 'number' || !Number.isSafeInteger(record.pidns)))
    return `"pidns" is ${JSON.stringify(record.pidns)}; expected an integer`
  return undefined
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Whether the process `who` names still runs, by the rule at the top of this file. */
export function processState(who: ProcessIdentity): ProcessState {
  const self = me()
  if (who.host !== self.host) return { state: 'unchecked', where: 'host', why: 'another host' }
  if (who.machine !== undefined && self.machine !== undefined && who.machine !== self.machine) {
    return { state: 'unchecked', where: 'machine', why: `another machine with the same host name, machine id ${who.machine}` }
  }
  // Without a machine id on either side, a same host name with another boot id is taken for this machine restarted.
  if (who.boot !== undefined && self.boot !== undefined && who.boot !== self.boot)
    return { state: 'gone', why: 'the machine has restarted since' }
  if (who.pidns !== undefined && self.pidns !== undefined && who.pidns !== self.pidns) {
    return { state: 'unchecked', where: 'namespace', why: 'another pid namespace (a container?)' }
  }
  const sameStart = (start: number | undefined): boolean => who.start === undefined || start === undefined || who.start === start
  if (who.pid === self.pid && sameStart(self.start)) return { state: 'self' }
  if (!running(who.pid)) return { state: 'gone', why: 'not running' }
  if (self.procIsOurs) {
    const stat = procStat(who.pid)
    if (stat === undefined) {
      // Gone between the two checks, or /proc hides it: trust the signal check.
      if (!running(who.pid)) return { state: 'gone', why: 'not running' }
    } else {
      if (stat.state === 'Z' || stat.state === 'X') return { state: 'gone', why: 'exited, not yet reaped' }
      if (!sameStart(stat.start)) return { state: 'gone', why: 'not running: that pid is now another process' }
    }
  }
  return { state: 'alive' }
}
