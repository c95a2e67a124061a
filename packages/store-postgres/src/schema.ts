import pg from 'pg'
import { SessionLogError } from '@planmode/store'

/** The schema version this release of the package reads and writes. @public */
export const SCHEMA_VERSION = 3

/** A connection string or `pg` pool options. @public */
export type Connection = string | pg.PoolConfig

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Throws `TypeError` unless `schema` is a plain lower-case identifier. */
export function checkSchema(schema: string): void {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(
      `store-postgres: schema must be a lower-case identifier (letters, digits, "_", at most 63), got ${JSON.stringify(schema)}`,
    )
  }
}

/** `pg` options for a connection given as a string or options. */
export function poolConfig(connection: Connection): pg.PoolConfig {
  if (typeof connection === 'string') return { connectionString: connection }
  if (typeof connection === 'object' && connection !== null) return { ...connection }
  throw new TypeError(`store-postgres: connection must be a connection string or pg pool options, got ${String(connection)}`)
}

/**
 * The LISTEN/NOTIFY channel of the answers of `schema` (answers sent to
 * writers, payload `s <session id>`, and their replies, `r <answer id>`):
 * `planmode_answers_<schema>`, shortened with a hash like {@link channelOf}.
 */
export function answersChannelOf(schema: string): string {
  const channel = `planmode_answers_${schema}`
  if (channel.length <= 63) return channel
  return `planmode_answers_${schema.slice(0, 37)}_${(fnv1a(schema) >>> 0).toString(16).padStart(8, '0')}`
}

/** A 32-bit FNV-1a hash of `text`. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (const char of text) {
    hash ^= char.charCodeAt(0)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash | 0
}

/**
 * The first key of the advisory locks of `schema`: a 32-bit FNV-1a hash of
 * `planmode:<schema>` (the store's leases use its top 31 bits). Two schemas
 * of one database share it with a probability of about 2^-31; another
 * application's two-key advisory locks with the same first key would
 * collide with the leases too.
 */
export function lockClass(schema: string): number {
  return fnv1a(`planmode:${schema}`)
}

/**
 * The LISTEN/NOTIFY channel of `schema`: `planmode_<schema>`, or for a
 * schema too long for a 63-byte identifier, its first 45 characters and a
 * hash of the whole name, so two long schemas do not share a channel.
 */
export function channelOf(schema: string): string {
  const channel = `planmode_${schema}`
  if (channel.length <= 63) return channel
  return `planmode_${schema.slice(0, 45)}_${(fnv1a(schema) >>> 0).toString(16).padStart(8, '0')}`
}

/** Each migration takes the schema from version `index` to `index + 1`. */
function migrations(schema: string): readonly string[] {
  const s = `"${schema}"`
  return [
    `
    CREATE TABLE ${s}.sessions (
      id         text PRIMARY KEY,
      lock_key   integer GENERATED ALWAYS AS IDENTITY UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      head       bigint NOT NULL DEFAULT -1,
      epoch      bigint NOT NULL DEFAULT 0,
      holder     text,
      leased_at  timestamptz
    );
    COMMENT ON COLUMN ${s}.sessions.head IS 'seq of the last event, -1 while the log is empty';
    COMMENT ON COLUMN ${s}.sessions.epoch IS 'bumped by every lease taken; an insert must name the current epoch';
    CREATE TABLE ${s}.events (
      session_id text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
      seq        bigint NOT NULL,
      time       double precision NOT NULL,
      type       text NOT NULL,
      data       json NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    `,
    `
    ALTER TABLE ${s}.sessions ADD COLUMN holder_pid integer;
    COMMENT ON COLUMN ${s}.sessions.holder_pid IS 'backend pid of the lease connection of holder: holder is current only while that pid holds the lock';
    `,
    `
    CREATE TABLE ${s}.answers (
      id           text PRIMARY KEY,
      session_id   text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
      question_id  text NOT NULL,
      answers      json NOT NULL,
      answered_by  json,
      db_user      text NOT NULL DEFAULT current_user,
      submitted_at timestamptz NOT NULL DEFAULT now(),
      status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'refused')),
      code         text,
      message      text,
      reply_by     json,
      seq          bigint,
      decided_at   timestamptz
    );
    CREATE INDEX answers_pending ON ${s}.answers (session_id, submitted_at) WHERE status = 'pending';
    CREATE INDEX events_questions ON ${s}.events (session_id, (data->>'questionId'), seq) WHERE type IN ('question/asked', 'question/settled');
    COMMENT ON TABLE ${s}.answers IS 'answers sent to a session''s writer by other processes; the log decides: an answer is applied exactly when its question/settled names it (submission)';
    COMMENT ON COLUMN ${s}.answers.status IS 'pending until the writer (or, once the writer is gone, the submitter or the next writer, from the log) decides it';
    `,
  ]
}

/** What {@link setup} did. @public */
export interface SetupResult {
  /** The schema set up. */
  readonly schema: string
  /** The schema's version before, `0` when it did not exist. */
  readonly from: number
  /** The schema's version now ({@link SCHEMA_VERSION}). */
  readonly version: number
}

/** Options of {@link setup}. @public */
export interface SetupOptions {
  /** A connection string (`postgres://user@host:5432/db`) or `pg` pool options. */
  readonly connection: Connection
  /** The schema of the tables; defaults to `planmode`. */
  readonly schema?: string
}

/**
 * Creates the store's schema, or migrates it to this release's version: one
 * transaction under a transaction-level advisory lock, so processes that
 * call it at once are safe (one migrates, the others see it done). Rejects
 * with `SCHEMA` when the database holds a newer version than this package
 * knows, and with `UNAVAILABLE` when the database cannot be reached.
 *
 * @example
 * ```ts
 * await setup({ connection: 'postgres://localhost/app' })
 * ```
 *
 * @public
 */
export async function setup(options: SetupOptions): Promise<SetupResult> {
  const schema = options.schema === undefined ? 'planmode' : options.schema
  checkSchema(schema)
  const client = new pg.Client(poolConfig(options.connection))
  // A failure reaches the statement that meets it; the event alone must not be uncaught.
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    throw unavailable(`cannot connect to set up schema ${schema}`, error)
  }
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1, 0)', [lockClass(schema)])
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".meta (key text PRIMARY KEY, value text NOT NULL)`)
    const row = await client.query<{ value: string }>(`SELECT value FROM "${schema}".meta WHERE key = 'version'`)
    const from = row.rows.length === 0 ? 0 : Number(row.rows[0]!.value)
    if (!Number.isInteger(from) || from > SCHEMA_VERSION) {
      throw new SessionLogError(
        'SCHEMA',
        `schema ${schema} is at version ${row.rows[0]!.value}, newer than this @planmode/store-postgres knows (${SCHEMA_VERSION}); upgrade the package`,
      )
    }
    const steps = migrations(schema)
    for (let version = from; version < SCHEMA_VERSION; version++) await client.query(steps[version]!)
    await client.query(
      `INSERT INTO "${schema}".meta (key, value) VALUES ('version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [String(SCHEMA_VERSION)],
    )
    await client.query('COMMIT')
    return { schema, from, version: SCHEMA_VERSION }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    if (SessionLogError.isInstance(error)) throw error
    throw unavailable(`setting up schema ${schema} failed`, error)
  } finally {
    await client.end().catch(() => {})
  }
}

/** The schema's version, `0` when it was never set up. */
export async function schemaVersion(client: pg.ClientBase | pg.Pool, schema: string): Promise<number> {
  const exists = await client.query<{ table: string | null }>(`SELECT to_regclass($1) AS table`, [`"${schema}".meta`])
  if (exists.rows[0]?.table == null) return 0
  const row = await client.query<{ value: string }>(`SELECT value FROM "${schema}".meta WHERE key = 'version'`)
  return row.rows.length === 0 ? 0 : Number(row.rows[0]!.value)
}

/** `UNAVAILABLE`: the database could not be reached or failed a statement. */
export function unavailable(what: string, error: unknown): SessionLogError {
  const reason = error instanceof Error ? error.message : String(error)
  return new SessionLogError('UNAVAILABLE', `${what}: ${reason}`, { cause: error })
}
