import { isAbsolute } from 'node:path'
import type { AcpAgentSource, AcpSessionStore } from './ports.js'

/**
 * The config of {@link acpPlugin}.
 *
 * @public
 */
export interface AcpConfig {
  /** Where each served session's root agent comes from: the one host-specific piece. */
  readonly agents: AcpAgentSource
  /**
   * The session store. Default: the host's `sessions` service (the
   * session-store contract, which `@planmode/host` and
   * `@planmode/store-postgres` provide), looked up at each request.
   */
  readonly sessions?: AcpSessionStore
  /** What `initialize` says the agent is (`agentInfo`). Default: `{ name: 'planmode', version: <this package's version> }`. */
  readonly agentInfo?: { readonly name?: string; readonly title?: string; readonly version?: string }
  /** The working directory `session/list` reports for a session whose log names none (it was not made over ACP). Default: `process.cwd()`. Absolute. */
  readonly cwd?: string
  /** Sessions per `session/list` page (default 50). */
  readonly pageSize?: number
}

const KEYS = new Set(['agents', 'sessions', 'agentInfo', 'cwd', 'pageSize'])
const STORE_MEMBERS = ['create', 'open', 'list', 'get', 'close'] as const

/**
 * Checks {@link AcpConfig} at load: `agents.open` a function, `sessions`
 * (when given) with the store members `@planmode/acp` calls, `cwd` an
 * absolute path, `pageSize` a positive integer, and no other key. Throws a
 * `TypeError` naming what is wrong.
 *
 * @public
 */
export function resolveAcpConfig(config: unknown): AcpConfig {
  if (typeof config !== 'object' || config === null)
    throw new TypeError("@planmode/acp: needs a config object with `agents` (where each session's root agent comes from)")
  const unknown = Object.keys(config).filter((key) => !KEYS.has(key))
  if (unknown.length > 0) throw new TypeError(`@planmode/acp: unknown key(s) ${unknown.join(', ')}`)
  const value = config as AcpConfig
  if (typeof value.agents?.open !== 'function')
    throw new TypeError('@planmode/acp: needs `agents` with an `open(session, options)` function')
  if (value.sessions !== undefined) {
    const missing = STORE_MEMBERS.filter((member) => typeof (value.sessions as unknown as Record<string, unknown>)?.[member] !== 'function')
    if (missing.length > 0) throw new TypeError(`@planmode/acp: \`sessions\` lacks ${missing.join(', ')}`)
  }
  if (value.cwd !== undefined && (typeof value.cwd !== 'string' || !isAbsolute(value.cwd)))
    throw new TypeError(`@planmode/acp: \`cwd\` must be an absolute path, not ${JSON.stringify(value.cwd)}`)
  if (value.pageSize !== undefined && (!Number.isSafeInteger(value.pageSize) || value.pageSize < 1))
    throw new TypeError(`@planmode/acp: \`pageSize\` must be a positive integer, not ${JSON.stringify(value.pageSize)}`)
  const info = value.agentInfo
  if (info !== undefined) {
    for (const key of ['name', 'title', 'version'] as const) {
      if (info[key] !== undefined && (typeof info[key] !== 'string' || info[key].trim() === ''))
        throw new TypeError(`@planmode/acp: \`agentInfo.${key}\` must be a non-empty string`)
    }
  }
  return value
}
