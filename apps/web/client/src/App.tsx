import { useCallback, useEffect, useState } from 'react'
import { token } from './api.js'
import { SessionList } from './components/SessionList.js'
import { SessionView } from './components/SessionView.js'
import { WhoAmI } from './components/WhoAmI.js'

/** The open session, from the address's hash (`#/s/<id>`), so a reload reopens it. */
function sessionFromHash(): string | null {
  const match = /^#\/s\/(.+)$/.exec(window.location.hash)
  if (match === null) return null
  try {
    return decodeURIComponent(match[1]!)
  } catch {
    return null
  }
}

/** The app: session list beside the open session. */
export function App() {
  const [current, setCurrent] = useState<string | null>(sessionFromHash)
  useEffect(() => {
    const onHash = () => setCurrent(sessionFromHash())
    window.addEventListener('hashchange', onHash)
    return () => window.removeEventListener('hashchange', onHash)
  }, [])
  const [activity, setActivity] = useState(0)
  const onActivity = useCallback(() => setActivity((count) => count + 1), [])
  const open = useCallback((id: string) => {
    window.location.hash = `#/s/${encodeURIComponent(id)}`
    setCurrent(id)
  }, [])
  if (token() === null)
    return (
      <main className="no-token" data-testid="no-token">
        <h1>planmode</h1>
        <p role="alert">No access token — this tab has no token: open the printed URL again, or duplicate the tab.</p>
        <p>
          The token is kept per tab and removed from the address bar, so a tab opened by typing or pasting an address (<code>/#/s/…</code>)
          starts without it. The URL the server printed at start ends with <code>?token=…</code>.
        </p>
      </main>
    )
  return (
    <div className="app" data-testid="app">
      <aside className="sidebar">
        <p className="brand">planmode</p>
        <WhoAmI />
        <SessionList current={current} onOpen={open} activity={activity} />
      </aside>
      {current === null ? (
        <main className="welcome" data-testid="welcome">
          <h1>planmode</h1>
          <p>
            Open a session or start a new one. In a session, <code>/plan</code> enters plan mode and <code>/plan off</code> leaves it.
          </p>
        </main>
      ) : (
        <SessionView key={current} id={current} onOpenSession={open} onActivity={onActivity} />
      )}
    </div>
  )
}
