// `--users users.json`: each user's own access token, mapped to who they are and what they may do.
import { readFileSync } from 'node:fs'
import { isPersonName } from '@planmode/seams'
import { sameToken } from './security.js'
import { TOKEN_SHAPE } from './options.js'

/** What a user may do: owners everything; reviewers read, comment on plans and send them back with Keep planning. */
export type WebRole = 'owner' | 'reviewer'

/** The roles, in the order the usage lists them. */
export const WEB_ROLES: readonly WebRole[] = ['owner', 'reviewer']

/** One user of `--users`: their token and who they are. */
export interface WebUser {
  /** Their own access token (the key of their entry in the file). */
  readonly token: string
  /** A stable id (recorded as `by.id` of what they answer). */
  readonly id: string
  /** The name shown to everyone and recorded as `by.name`. */
  readonly name: string
  /** What they may do. */
  readonly role: WebRole
}

/**
 * Who sent a request: a user of `--users` (with `by`, the `{ id, name }`
 * their answers carry), or, without `--users`, the one anonymous owner that
 * the app's single token stands for (no `by`: answers stay as they were).
 */
export interface RequestUser {
  readonly role: WebRole
  readonly by?: { readonly id: string; readonly name: string }
}

/** The user of the single access token (no `--users`). */
export const ANONYMOUS_OWNER: RequestUser = Object.freeze({ role: 'owner' })

const MAX_FIELD = 200

/**
 * A string of at most {@link MAX_FIELD} characters that a person may be
 * called (SPEC §22.4, the seams' `isPersonName`): a visible character, no
 * control character, U+0000, lone surrogate or bidirectional control. It is
 * shown in every tab, printed and logged as `by`.
 */
const isField = (value: unknown): value is string => typeof value === 'string' && value.length <= MAX_FIELD && isPersonName(value)

/** What {@link isField} asks, as a refusal says it. */
const FIELD_RULE = `a non-blank string of at most ${MAX_FIELD} characters, without control characters, U+0000, lone surrogates or bidirectional controls`

/**
 * The keys of a JSON text's top-level object, in order, duplicates kept
 * (`JSON.parse` keeps only the last of a repeated key, which would hide a
 * token given twice). `text` must already be valid JSON.
 */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = []
  let depth = 0
  let at = 0
  // After `{` or `,` at depth 1 the next string is a key.
  let expectKey = false
  while (at < text.length) {
    const char = text[at]!
    if (char === '"') {
      let end = at + 1
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1
      if (depth === 1 && expectKey) keys.push(JSON.parse(text.slice(at, end + 1)) as string)
      expectKey = false
      at = end + 1
      continue
    }
    if (char === '{' || char === '[') {
      depth += 1
      expectKey = char === '{' && depth === 1
    } else if (char === '}' || char === ']') depth -= 1
    else if (char === ',') expectKey = depth === 1
    at += 1
  }
  return keys
}

const describeLength = (token: string): string =>
  `it is ${token.length} characters${/[^A-Za-z0-9_-]/.test(token) ? ', with others among them' : ''}`

/**
 * Reads and checks a users file: a JSON object mapping each token to
 * `{ id, name, role }`. Throws an `Error` naming the file and the first
 * problem — never a token: a token that does not meet the rules of
 * `PLANMODE_WEB_TOKEN` (32–256 characters of `A–Z a–z 0–9 - _`), a token
 * given twice, a missing or blank `id` or `name`, an `id` given twice, a
 * role other than `owner` / `reviewer`, unknown members, no user, or no
 * owner (nobody could approve a plan).
 */
export function parseUsers(text: string, source: string): WebUser[] {
  const fail = (problem: string): never => {
    throw new Error(`${source}: ${problem}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message})`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail('must be a JSON object mapping each user\'s access token to { "id", "name", "role" }')
  }
  const entries = Object.entries(parsed as Record<string, unknown>)
  if (entries.length === 0) return fail('names no user: give at least one owner')
  const keys = topLevelKeys(text)
  if (keys.length !== entries.length) {
    // JSON.parse kept the last entry of a repeated key: name that one, never the token.
    const seen = new Set<string>()
    const repeated = keys.find((key) => seen.has(key) || !seen.add(key))!
    const last = (parsed as Record<string, { id?: unknown }>)[repeated]?.id
    fail(
      `a token is given more than once${typeof last === 'string' ? ` (the last entry with it is user ${JSON.stringify(last)})` : ''}: every user needs a token of their own`,
    )
  }
  const users: WebUser[] = []
  const ids = new Set<string>()
  entries.forEach(([token, value], index) => {
    const where = `user ${index + 1}`
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(`${where}: must be { "id", "name", "role" }`)
    const entry = value as Record<string, unknown>
    const extra = Object.keys(entry).find((key) => key !== 'id' && key !== 'name' && key !== 'role')
    if (extra !== undefined) return fail(`${where}: unknown member ${JSON.stringify(extra)} (a user is { "id", "name", "role" })`)
    const { id, name, role } = entry
    if (!isField(id)) return fail(`${where}: "id" must be ${FIELD_RULE}`)
    const who = `user ${JSON.stringify(id)}`
    if (!isField(name)) return fail(`${who}: "name" must be ${FIELD_RULE}`)
    if (typeof role !== 'string' || !(WEB_ROLES as readonly string[]).includes(role)) {
      return fail(`${who}: "role" must be ${WEB_ROLES.map((known) => JSON.stringify(known)).join(' or ')}, not ${JSON.stringify(role)}`)
    }
    if (ids.has(id)) return fail(`the id ${JSON.stringify(id)} is given twice: each user once, with one token`)
    ids.add(id)
    if (!TOKEN_SHAPE.test(token))
      return fail(`the token of ${who} must be 32 to 256 characters of A-Z a-z 0-9 - _ (${describeLength(token)})`)
    users.push({ token, id, name, role: role as WebRole })
  })
  if (!users.some((user) => user.role === 'owner')) fail('names no owner: only owners can approve or stop a plan, so give at least one')
  return users
}

/** Reads `--users FILE` (see {@link parseUsers}); a file that cannot be read is an error naming it. */
export function loadUsers(path: string): WebUser[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new Error(`--users ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  // An editor's byte-order mark is not part of the JSON.
  return parseUsers(text.replace(/^\uFEFF/, ''), `--users ${path}`)
}

/**
 * The user whose token `given` is, compared in constant time with every
 * user's (no early exit, so the time says nothing about which matched).
 */
export function userOfToken(users: readonly WebUser[], given: string): WebUser | undefined {
  let found: WebUser | undefined
  for (const user of users) if (sameToken(given, user.token) && found === undefined) found = user
  return found
}

/** How a user's request is seen by the routes. */
export function requestUserOf(user: WebUser): RequestUser {
  return { role: user.role, by: { id: user.id, name: user.name } }
}
