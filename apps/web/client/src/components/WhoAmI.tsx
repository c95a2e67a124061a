import { namedUsers, useMe } from '../me.js'

/** With named users (`--users`): who this tab is signed in as, and their role. Nothing for the app's single token. */
export function WhoAmI() {
  const me = useMe()
  if (!namedUsers(me)) return null
  return (
    <p className="whoami" data-testid="whoami" data-user={me!.id} data-role={me!.role}>
      {me!.name ?? me!.id} <span className="role">({me!.role})</span>
    </p>
  )
}
