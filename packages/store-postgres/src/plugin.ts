import type { Plugin } from '@planmode/context'
import { createStore } from './store.js'
import type { PostgresSessionStore, PostgresSessionsConfig } from './store-types.js'

const marker = Symbol.for('@planmode/store-postgres/store')

/**
 * Provides service `sessions`: sessions in PostgreSQL (run {@link setup}
 * once first), and services `answerDesk` and `answerInbox`: answers to the
 * sessions' questions from any process. The store connects on first use. Disposing the plugin starts
 * {@link PostgresSessionStore.end}; await `end()` yourself to know every
 * lease is released.
 *
 * @public
 */
export const postgresSessionsPlugin: Plugin<PostgresSessionsConfig> = {
  name: '@planmode/store-postgres',
  apply(ctx, config) {
    const store = createStore(ctx, config)
    Object.defineProperty(store, marker, { value: true })
    ctx.provide('sessions', store)
    // Answers from other processes: this store's writer side, and the submitter side for any session.
    ctx.provide('answerDesk', store.answerDesk)
    ctx.provide('answerInbox', store.answers)
    ctx.effect(() => {
      store.end().catch((error: unknown) => ctx.logger.error('store-postgres: ending the store failed', error))
    })
  },
}

/**
 * {@link postgresSessionsPlugin} with its config bound, for `hostPlugin`'s
 * `sessions` option.
 *
 * @example
 * ```ts
 * root.plugin(hostPlugin, { sessions: postgresSessions({ connection: process.env.DATABASE_URL! }), model })
 * ```
 *
 * @public
 */
export function postgresSessions(config: PostgresSessionsConfig): Plugin<void> {
  return {
    name: '@planmode/store-postgres/sessions',
    apply(ctx) {
      ctx.plugin(postgresSessionsPlugin, config)
    },
  }
}

/**
 * The store when `sessions` is a {@link PostgresSessionStore}, else `undefined`
 * (service `sessions` is typed as the host's plain store).
 *
 * @public
 */
export function asPostgresStore(sessions: unknown): PostgresSessionStore | undefined {
  return typeof sessions === 'object' && sessions !== null && (sessions as Record<symbol, unknown>)[marker] === true
    ? (sessions as PostgresSessionStore)
    : undefined
}
