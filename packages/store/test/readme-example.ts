import { Context, type Plugin } from '@planmode/context'
import type { SessionStore } from '@planmode/store'

/** Opens a first session in any store plugin (e.g. `postgresSessions({ connection })`) and logs a message. */
export async function firstSession(store: Plugin<void>): Promise<number> {
  const ctx = new Context()
  ctx.plugin(store)
  const sessions: SessionStore = ctx.require('sessions')
  const session = await sessions.create()
  ctx.on('session/event', ({ event }) => console.log(`${session.id} #${event.seq} ${event.type}`))
  await session.append('user/message', { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } })
  await sessions.close(session)
  ctx.dispose()
  return session.events.length
}
