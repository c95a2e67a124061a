import { readdir } from 'node:fs/promises'
import { Context } from '@planmode/context'
import { asPostgresStore, postgresSessionsPlugin } from '@planmode/store-postgres'
import type { StoreChoice } from './arguments.js'

const silent = { debug() {}, info() {}, warn() {}, error() {} }

/** The ids of the folder's JSONL sessions (`<id>.jsonl`, as the host's store names them); none when the folder does not exist. */
async function folderSessions(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith('.jsonl')).map((name) => name.slice(0, -'.jsonl'.length))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/**
 * The ids of every session of the store, sorted. For PostgreSQL, the
 * store's own `list()` (one query; nothing is opened or leased), from a
 * store that is ended before this resolves. Rejects with the store's
 * `SessionLogError` when the store cannot be read.
 */
export async function sessionIdsOf(store: StoreChoice): Promise<string[]> {
  if (store.kind === 'dir') return (await folderSessions(store.dir)).sort()
  const root = new Context({ logger: silent })
  root.plugin(postgresSessionsPlugin, { connection: store.url, ...(store.schema === undefined ? {} : { schema: store.schema }) })
  const sessions = asPostgresStore(root.require('sessions'))!
  try {
    return await sessions.list()
  } finally {
    await sessions.end()
    root.dispose()
  }
}
