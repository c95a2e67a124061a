// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import type { Plugin } from '@planmode/context'
import type { HostConfig } from '@planmode/host'
import { SessionLogError } from '@planmode/store'
import {
  SCHEMA_VERSION,
  asPostgresStore,
  postgresAnswers,
  type PostgresAnswers,
  postgresSessions,
  postgresSessionsPlugin,
  setup,
  type FollowerSession,
  type LeaseInfo,
  type PostgresSession,
  type PostgresSessionStore,
  type PostgresSessionsConfig,
  type SetupResult,
} from '@planmode/store-postgres'

const config: PostgresSessionsConfig = {
  connection: { host: '127.0.0.1', database: 'app' },
  schema: 'planmode',
  holder: 'http://127.0.0.1:4173',
  poolSize: 4,
}
export const sessions: Plugin<void> = postgresSessions(config)
export const host: Pick<HostConfig, 'sessions'> = { sessions }
export const plugin: Plugin<PostgresSessionsConfig> = postgresSessionsPlugin
export const version: number = SCHEMA_VERSION
export async function prepare(url: string): Promise<SetupResult> {
  return setup({ connection: url })
}
export async function writeOrFollow(store: unknown, id: string): Promise<PostgresSession | FollowerSession | undefined> {
  const typed: PostgresSessionStore | undefined = asPostgresStore(store)
  if (typed === undefined) return undefined
  try {
    return await typed.open(id)
  } catch (error) {
    if (!SessionLogError.isInstance(error) || error.code !== 'LOCKED') throw error
    const lease: LeaseInfo = await typed.lease(id)
    return lease.held ? typed.follow(id) : typed.open(id)
  }
}

// Answers from any process, without a store: a submitter with connections of its own.
export const answers: PostgresAnswers = postgresAnswers({ connection: 'postgres://127.0.0.1/app', schema: 'planmode' })
