import type { SessionAccess } from './wire.js'

/**
 * What the session header says about who writes the session, or null when
 * this server writes it (nothing to say). A follower names the server that
 * holds the lease; with no holder (it stopped or died) the next write here
 * takes the session over.
 */
export function roleNotice(access: SessionAccess | null): string | null {
  if (access === null || access.role === 'writer') return null
  if (access.holderUnknown === true)
    return 'Read-only here: which server writes this session is unknown for now (the database did not say). Your next message here takes the session over if nobody holds it.'
  if (access.holder === null)
    return 'Read-only here: the server that wrote this session has stopped. Your next message here takes the session over.'
  return `Read-only here: written by ${access.holder}. This view follows it live, and answers its questions from here; to send messages, open the page that server printed at start.`
}

/** Whether a turn counts as running: a follower whose writer is gone has no running turn, whatever the log left open. */
export function effectiveRunning(running: boolean, access: SessionAccess | null): boolean {
  return running && !(access?.role === 'follower' && access.holder === null && access.holderUnknown !== true)
}

/**
 * Whether the turn the log leaves open is over although no `turn/end` says
 * so yet: the server that ran it is gone. This tab lost its server for good
 * (`serverGone`: a server that once answered now refuses the tab's token or
 * does not know the session, so it is another process), or the session is
 * followed and nobody holds its lease (the writer stopped or died; the next
 * writer logs the turn as interrupted).
 */
export function openTurnOver(serverGone: boolean, access: SessionAccess | null): boolean {
  return serverGone || (access?.role === 'follower' && access.holder === null && access.holderUnknown !== true)
}
