/**
 * The run's PostgreSQL for the tests that start servers over `--store`:
 * the URL the root vitest global setup provides (also in `PLANMODE_PG_URL`
 * for the server processes), a fresh schema per test file, dropped after.
 * The helpers are `@planmode/testkit`'s, imported by path: apps/web does
 * not list testkit among its dependencies.
 */
export { dropSchema, freshSchemaName, pgTestUrl } from '../../../../../packages/testkit/src/postgres.js'
