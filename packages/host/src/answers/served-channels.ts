import { lstatSync, unlinkSync } from 'node:fs'
import { readAnnouncement, type Announcement } from './local-announce.js'

// The announcements and sockets this process serves, so that they go with
// it: one table per process (shared by every copy of this module through a
// global symbol), emptied when the process exits, and when SIGTERM, SIGINT
// or SIGHUP ends it. For those the table listens only while no one else
// does: it removes the files, stops listening and raises the signal again,
// so the process ends exactly as it would have. An application that
// listens for the signal itself decides when to exit, and the exit empties
// the table. (Not `signal-exit`: it also takes over SIGXFSZ and a dozen
// other signals, so a writer over its file size limit would die instead of
// getting EFBIG and settling what it owes.) A SIGKILL leaves both behind:
// see local-announce.ts.

/** The signals whose default action ends the process, and after which the channels are removed. */
const ENDING: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP']

/** A channel this process serves: its announcement, and the socket it created (by device and inode, so no other socket at that path is ever removed). */
export interface ServedChannel {
  readonly announcement: Announcement
  readonly socket: { readonly dev: number; readonly ino: number }
}

/** Announcements and sockets this process serves, removed on exit. */
const EXIT = Symbol.for('@planmode/host/answer-channels')

/** This process's table of served channels, by announcement file. */
export function served(): Map<string, ServedChannel> {
  const global = globalThis as { [EXIT]?: Map<string, ServedChannel> }
  if (global[EXIT] === undefined) {
    const table = new Map<string, ServedChannel>()
    global[EXIT] = table
    const empty = (): void => {
      for (const [file, channel] of table) removeOwn(file, channel)
      table.clear()
    }
    process.once('exit', empty)
    for (const signal of ENDING) {
      const ending = (): void => {
        // Someone else handles it (and exits when it likes: the exit hook runs then).
        if (process.listenerCount(signal) > 1) return
        empty()
        process.removeListener(signal, ending)
        process.kill(process.pid, signal)
      }
      process.on(signal, ending)
    }
  }
  return global[EXIT]
}

/**
 * Removes `file` while it still holds the channel's token, and the socket
 * while it is still the one this process created. Synchronous (also the
 * exit hook); never waits on what is at either path.
 */
export function removeOwn(file: string, channel: ServedChannel): void {
  try {
    const now = readAnnouncement(file)
    if (now !== undefined && 'announcement' in now && now.announcement.token === channel.announcement.token) unlinkSync(file)
  } catch {
    // gone already, or not ours any more
  }
  try {
    const stats = lstatSync(channel.announcement.socket)
    if (stats.isSocket() && stats.dev === channel.socket.dev && stats.ino === channel.socket.ino) unlinkSync(channel.announcement.socket)
  } catch {
    // gone already
  }
}
