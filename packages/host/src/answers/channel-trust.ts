import { lstatSync, type Stats } from 'node:fs'
import { dirname } from 'node:path'
import type { ReadAnnouncement } from './local-announce.js'
import { processUid, trustedFolderProblem } from './socket-folder.js'

// Whom a submitter trusts with its answer, its token and its `by`: the
// writer an announcement names, but only when the files say that writer
// could have made them. A user who may write the session folder but not
// the log, or who may swap a folder on the socket's path, must not be able
// to stand in for the writer (they would take the answer, and tell the
// submitter it was logged).
// - The announcement is a regular file (read-time: local-announce.ts) that
//   nobody but its owner can write.
// - Its owner is root, the submitter's own user, or the log's owner; or,
//   when the log's group may write the log, anyone who gave the
//   announcement and the socket the log's group (only root and members of
//   a group can give a file that group), i.e. someone who may write the log
//   anyway.
// - The socket it names is a socket (never followed) of the same owner, in
//   a folder private to that owner on its whole path (socket-folder.ts).

/**
 * Why the channel `read` announces for the session log whose stats are
 * `log` must not be trusted, or `undefined` when it may be. Synchronous: a
 * few `lstat`s.
 */
export function untrustedChannel(read: ReadAnnouncement, log: Stats): string | undefined {
  const { announcement, stats } = read
  if ((stats.mode & 0o022) !== 0)
    return `its announcement can be written by others than its owner (mode ${(stats.mode & 0o777).toString(8)})`
  const byGroup = (log.mode & 0o020) !== 0 && stats.gid === log.gid
  const me = processUid()
  if (stats.uid !== 0 && stats.uid !== me && stats.uid !== log.uid && !byGroup) {
    return `its announcement belongs to user ${stats.uid}, who neither owns the log nor may write it through its group`
  }
  let socket: Stats
  try {
    socket = lstatSync(announcement.socket)
  } catch (error) {
    return `its socket ${announcement.socket} cannot be looked at (${(error as Error).message})`
  }
  if (!socket.isSocket()) return `${announcement.socket} is not a socket`
  if (socket.uid !== stats.uid)
    return `its socket ${announcement.socket} belongs to user ${socket.uid}, not to the announcement's owner ${stats.uid}`
  if (stats.uid !== 0 && stats.uid !== me && stats.uid !== log.uid && socket.gid !== log.gid)
    return `its socket ${announcement.socket} does not have the log's group`
  const folder = trustedFolderProblem(dirname(announcement.socket), stats.uid)
  if (folder !== undefined) return `its socket's folder is not private to user ${stats.uid}: ${folder}`
  return undefined
}
