import { useCallback, useEffect, useRef, useState } from 'react'
import { ApiError, api } from '../api.js'
import { isReviewer, useMe } from '../me.js'
import { useAction } from '../use-action.js'
import type { SessionSummary } from '../wire.js'
import { ErrorLine } from './ErrorLine.js'

/** `14:05` for today, else `3 Dec 14:05`: enough to tell two sessions with the same title apart. */
function shortTime(ms: number): string {
  const when = new Date(ms)
  const time = when.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
  return when.toDateString() === new Date().toDateString()
    ? time
    : `${when.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${time}`
}

/** The whole title (the list cuts it), the id and the last activity. */
function sessionTooltip(session: SessionSummary): string {
  return [
    session.title,
    `session ${session.id}`,
    session.updatedAt !== undefined && session.updatedAt > 0 ? `updated ${new Date(session.updatedAt).toLocaleString()}` : undefined,
  ]
    .filter((line) => line !== undefined)
    .join('\n')
}

/** The sessions on the server (in its order: latest activity first), and a button for a new one (owners only). */
export function SessionList({
  current,
  onOpen,
  activity = 0,
}: {
  current: string | null
  onOpen: (id: string) => void
  activity?: number
}) {
  const [sessions, setSessions] = useState<readonly SessionSummary[] | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const create = useAction()
  // Only owners start sessions (the server refuses a reviewer's with 403): a reviewer is not offered the button.
  const reviewer = isReviewer(useMe())
  /** The server listed the sessions at least once. */
  const listed = useRef(false)
  const refresh = useCallback(async () => {
    try {
      const { sessions } = await api.listSessions()
      listed.current = true
      setSessions(sessions)
      setLoadError(null)
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        // A server that took this tab's token before refuses it: another process answers now (a restart makes a new token).
        // Nothing of the old one's runs any more; the rows stay as last listed, without "working…".
        if (listed.current) {
          setSessions((held) => (held === null ? held : held.map(({ running: _running, ...row }) => row)))
          setLoadError("The server was restarted: this tab's token is no longer taken. Open the URL it printed at start.")
          return
        }
      }
      setLoadError(error instanceof Error ? error.message : String(error))
    }
  }, [])
  useEffect(() => {
    void refresh()
    const timer = setInterval(() => void refresh(), 5000)
    const onFocus = () => void refresh()
    window.addEventListener('focus', onFocus)
    return () => {
      clearInterval(timer)
      window.removeEventListener('focus', onFocus)
    }
  }, [refresh, current, activity])
  return (
    <nav className="sessions" aria-label="Sessions" data-testid="session-list">
      {!reviewer && (
        <button
          type="button"
          className="primary new-session"
          data-testid="session-new"
          disabled={create.busy}
          onClick={() =>
            void create.run(async () => {
              const { id } = await api.createSession()
              onOpen(id)
              await refresh()
            })
          }
        >
          {create.busy ? 'Creating…' : 'New session'}
        </button>
      )}
      <ErrorLine error={create.error} testId="session-new-error" />
      <ErrorLine error={loadError} testId="session-list-error" />
      {sessions !== null && sessions.length === 0 && <p className="empty">No sessions yet.</p>}
      <ul>
        {(sessions ?? []).map((session) => (
          <li key={session.id}>
            <a
              href={`#/s/${encodeURIComponent(session.id)}`}
              title={sessionTooltip(session)}
              className={session.id === current ? 'active' : ''}
              aria-current={session.id === current ? 'page' : undefined}
              data-testid="session-item"
              data-session-id={session.id}
            >
              <span className="session-name">{session.title ?? <code>{session.id}</code>}</span>
              <span className="count">
                {session.updatedAt !== undefined && session.updatedAt > 0 && (
                  <time dateTime={new Date(session.updatedAt).toISOString()}>{shortTime(session.updatedAt)}</time>
                )}
                {session.running === true ? ' · working…' : session.events !== undefined ? ` · ${session.events} events` : ''}
              </span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}
