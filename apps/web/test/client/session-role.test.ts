/**
 * The session header's words about who writes a session (sessions in
 * PostgreSQL, several servers): nothing on the writer, the holder's URL on
 * a follower, a takeover hint once the writer is gone; and a follower whose
 * writer is gone has no running turn, whatever the log left open.
 */
import { describe, expect, it } from 'vitest'
import { effectiveRunning, roleNotice } from '../../client/src/session-role.js'

describe('session role notice', () => {
  it('says nothing for the writer or before the server said, names the holder on a follower, and the takeover once it is gone', () => {
    expect(roleNotice(null)).toBeNull()
    expect(roleNotice({ role: 'writer', holder: 'http://127.0.0.1:1' })).toBeNull()
    expect(roleNotice({ role: 'follower', holder: 'http://127.0.0.1:2' })).toBe(
      'Read-only here: written by http://127.0.0.1:2. This view follows it live, and answers its questions from here; to send messages, open the page that server printed at start.',
    )
    expect(roleNotice({ role: 'follower', holder: null })).toMatch(/has stopped\. Your next message here takes the session over\.$/)
    // A lease that could not be read is not a stopped writer.
    expect(roleNotice({ role: 'follower', holder: null, holderUnknown: true })).toMatch(
      /^Read-only here: which server writes this session is unknown/,
    )
  })

  it('a turn left open by a writer that is gone is not running', () => {
    expect(effectiveRunning(true, null)).toBe(true)
    expect(effectiveRunning(true, { role: 'writer', holder: 'x' })).toBe(true)
    expect(effectiveRunning(true, { role: 'follower', holder: 'x' })).toBe(true)
    expect(effectiveRunning(true, { role: 'follower', holder: null })).toBe(false)
    expect(effectiveRunning(true, { role: 'follower', holder: null, holderUnknown: true })).toBe(true)
    expect(effectiveRunning(false, { role: 'follower', holder: 'x' })).toBe(false)
  })
})
