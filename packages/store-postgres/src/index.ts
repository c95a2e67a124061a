/**
 * `@planmode/store-postgres`: sessions of the planmode reference host in
 * PostgreSQL. One writer per session (a session-level advisory lock, and an
 * epoch every commit names), read-only followers fed by LISTEN/NOTIFY, and
 * failover by reopening from the log.
 *
 * @packageDocumentation
 */
export { asPostgresStore, postgresSessions, postgresSessionsPlugin } from './plugin.js'
export { postgresAnswers } from './answers-client.js'
export type { PostgresAnswers, PostgresAnswersConfig } from './answers-client.js'
export { SCHEMA_VERSION, setup } from './schema.js'
export type { Connection, SetupOptions, SetupResult } from './schema.js'
export type { FollowerSession, LeaseInfo, PostgresSession, PostgresSessionStore, PostgresSessionsConfig } from './store-types.js'
