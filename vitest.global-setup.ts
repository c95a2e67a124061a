/**
 * One PostgreSQL server for the whole test run (see
 * packages/testkit/src/postgres.ts for the order in which it is found):
 * provided to test files as `inject('planmodePgUrl')` and to the processes
 * they spawn as `PLANMODE_PG_URL`. An embedded server started here is stopped
 * when the run ends.
 */
import type { TestProject } from 'vitest/node'
import { PG_URL_ENV, resolvePostgres } from './packages/testkit/src/postgres.js'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now()
  const server = await resolvePostgres()
  project.provide('planmodePgUrl', server.url)
  process.env[PG_URL_ENV] = server.url
  if (server.source === 'embedded') {
    console.log(`PostgreSQL for the tests: embedded, started in ${Date.now() - started} ms`)
  }
  return async () => {
    await server.stop()
  }
}
