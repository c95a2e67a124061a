/**
 * The run's PostgreSQL for the tests that start servers over `--store`:
 * the URL the root vitest global setup provides (also in `PLANMODE_PG_URL`
 * for the server processes), a fresh schema per test file, dropped after.
 */
export { dropSchema, freshSchemaName, pgTestUrl } from '@planmode/testkit'
