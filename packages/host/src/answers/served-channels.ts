import { lstatSync, unlinkSync } from 'node:fs'
import { readAnnouncement, type Announcement } from './local-announce.js'

// The announcements and sockets this process serves, so that they go with
// it: one table per process (shared by every copy of this module through a
// global symbol), emptied on exit.

/** Announcements and sockets this process serves, removed on exit. */
const EXIT = Symbol.for('@planmode/host/answer-channels')

export function served(): Map<string, Announcement> {
  const global = globalThis as { [EXIT]?: Map<string, Announcement> }
  if (global[EXIT] === undefined) {
    const table = new Map<string, Announcement>()
    global[EXIT] = table
    process.once('exit', () => {
      for (const [file, announcement] of table) removeOwn(file, announcement)
    })
  }
  return global[EXIT]
}

/** Removes `file` and its socket while the file still holds `announcement`'s token (synchronous: also the exit hook). */
export function removeOwn(file: string, announcement: Announcement): void {
  try {
    const now = readAnnouncement(file)
    if (typeof now === 'object' && now.token === announcement.token) unlinkSync(file)
  } catch {
    // gone already, or not ours any more
  }
  try {
    if (lstatSync(announcement.socket).isSocket()) unlinkSync(announcement.socket)
  } catch {
    // gone already
  }
}
