/**
 * `--users users.json`: the file is read and checked at start, with clear
 * errors that never echo a token, through the real command line (the built
 * server as a child process) and `parseUsers` itself.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseUsers, topLevelKeys } from '../../server/users.js'
import { SERVER_ENTRY, startServer } from '../browser/support/server.js'
import { call, cleanup, tempDir } from './support.js'

afterAll(() => cleanup())

const OLGA = 'olga-owner-token-0123456789abcdefghijkl'
const RITA = 'rita-reviewer-token-0123456789abcdefghij'

/** Runs `pnpm web --users <file>` on `content` and returns how it exited. */
function runWith(content: string, env: Record<string, string> = {}) {
  const dir = tempDir('planmode-web-users-')
  const file = join(dir, 'users.json')
  writeFileSync(file, content)
  return spawnSync(process.execPath, [SERVER_ENTRY, '--offline', '--port', '0', '--session-dir', join(dir, 's'), '--users', file], {
    encoding: 'utf8',
    env: { ...process.env, PLANMODE_WEB_TOKEN: '', ...env },
    timeout: 60_000,
  })
}

describe('the users file is checked at start', () => {
  it.each<[string, string, RegExp]>([
    ['not JSON', '{ nope', /not valid JSON/],
    [
      'an array',
      JSON.stringify([{ token: OLGA, id: 'olga', name: 'Olga', role: 'owner' }]),
      /must be a JSON object mapping each user's access token to \{ "id", "name", "role" \}/,
    ],
    ['no user', '{}', /names no user/],
    [
      'a short token',
      JSON.stringify({ short: { id: 'olga', name: 'Olga', role: 'owner' } }),
      /the token of user "olga" must be 32 to 256 characters of A-Z a-z 0-9 - _ \(it is 5 characters\)/,
    ],
    [
      'a token with other characters',
      JSON.stringify({ [`${OLGA}!`]: { id: 'olga', name: 'Olga', role: 'owner' } }),
      /the token of user "olga" must be 32 to 256 characters .*with others among them/,
    ],
    [
      'a token given twice',
      `{ "${OLGA}": { "id": "olga", "name": "Olga", "role": "owner" }, "${OLGA}": { "id": "rita", "name": "Rita", "role": "reviewer" } }`,
      /a token is given more than once \(the last entry with it is user "rita"\): every user needs a token of their own/,
    ],
    [
      'a bad role',
      JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga', role: 'admin' } }),
      /user "olga": "role" must be "owner" or "reviewer", not "admin"/,
    ],
    [
      'no role',
      JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga' } }),
      /user "olga": "role" must be "owner" or "reviewer", not undefined/,
    ],
    ['a blank id', JSON.stringify({ [OLGA]: { id: ' ', name: 'Olga', role: 'owner' } }), /user 1: "id" must be a non-blank string/],
    ['no name', JSON.stringify({ [OLGA]: { id: 'olga', role: 'owner' } }), /user "olga": "name" must be a non-blank string/],
    ['a name with a line break', JSON.stringify({ [OLGA]: { id: 'olga', name: 'Ol\nga', role: 'owner' } }), /without control characters/],
    [
      'a name with a bidirectional override',
      JSON.stringify({ [OLGA]: { id: 'olga', name: 'Ol\u202Ega', role: 'owner' } }),
      /user "olga": "name" must be .*bidirectional controls/,
    ],
    [
      'an id with a lone surrogate',
      JSON.stringify({ [OLGA]: { id: 'ol\ud800ga', name: 'Olga', role: 'owner' } }),
      /user 1: "id" must be .*lone surrogates/,
    ],
    [
      'a name that shows nothing',
      JSON.stringify({ [OLGA]: { id: 'olga', name: '\u200B\u200B', role: 'owner' } }),
      /user "olga": "name" must be a non-blank string/,
    ],
    [
      'an unknown member',
      JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga', role: 'owner', rol: 'x' } }),
      /user 1: unknown member "rol"/,
    ],
    [
      'an id given twice',
      JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga', role: 'owner' }, [RITA]: { id: 'olga', name: 'Rita', role: 'reviewer' } }),
      /the id "olga" is given twice/,
    ],
    [
      'no owner',
      JSON.stringify({ [RITA]: { id: 'rita', name: 'Rita', role: 'reviewer' } }),
      /names no owner: only owners can approve or stop a plan/,
    ],
  ])('%s: exit 2 with a clear error naming the file, never a token', (_name, content, message) => {
    const run = runWith(content)
    expect(run.status, run.stderr).toBe(2)
    expect(run.stderr).toMatch(/^planmode web: --users \S+users\.json: /)
    expect(run.stderr).toMatch(message)
    expect(run.stderr).not.toContain(OLGA)
    expect(run.stderr).not.toContain(RITA)
    expect(run.stdout).not.toMatch(/http:\/\//)
  })

  it('a file that cannot be read exits 2 naming it', () => {
    const missing = join(tempDir('planmode-web-users-'), 'missing.json')
    const run = spawnSync(
      process.execPath,
      [SERVER_ENTRY, '--offline', '--port', '0', '--session-dir', join(tempDir('planmode-web-users-'), 's'), '--users', missing],
      { encoding: 'utf8', timeout: 60_000 },
    )
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(`--users ${missing}: cannot be read (ENOENT)`)
  })

  it('PLANMODE_WEB_TOKEN beside --users is a usage error that does not echo it', () => {
    const single = 'single-token-0123456789abcdefghijklmnopq'
    const run = runWith(JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga', role: 'owner' } }), { PLANMODE_WEB_TOKEN: single })
    expect(run.status).toBe(2)
    expect(run.stderr).toMatch(/PLANMODE_WEB_TOKEN gives the app its one token; with --users every user has their own in the file/)
    expect(run.stderr).not.toContain(single)
  })

  it('a good file starts the server: the start line names the users, not their tokens; only their tokens open it', async () => {
    const dir = tempDir('planmode-web-users-')
    const file = join(dir, 'users.json')
    writeFileSync(
      file,
      JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga', role: 'owner' }, [RITA]: { id: 'rita', name: 'Rita', role: 'reviewer' } }),
    )
    const server = await startServer({ args: ['--users', file], env: { PLANMODE_WEB_TOKEN: '' } })
    try {
      const line = server
        .output()
        .split('\n')
        .find((text) => text.includes(server.origin))!
      expect(line).toBe(
        `planmode web: ${server.origin}/ — 2 users from ${file}: owner Olga; reviewer Rita; each opens it with ?token=<their token>`,
      )
      expect(server.output()).not.toContain(OLGA)
      expect(server.token).toBe('')
      const endpoint = { port: server.port, token: OLGA }
      expect((await call(endpoint, 'GET', '/api/me')).body).toEqual({ id: 'olga', name: 'Olga', role: 'owner' })
      expect((await call({ ...endpoint, token: RITA }, 'GET', '/api/me')).body).toEqual({ id: 'rita', name: 'Rita', role: 'reviewer' })
      expect((await call({ ...endpoint, token: 'x'.repeat(40) }, 'GET', '/api/me')).status).toBe(401)
      expect((await call(endpoint, 'GET', '/api/me', { token: null })).status).toBe(401)
      // The page takes a user's token as it takes the single one, and sets its cookie to it.
      const page = await call(endpoint, 'GET', `/?token=${RITA}`, { token: null })
      expect(page.status).toBe(200)
      expect(page.headers['set-cookie']?.[0]).toBe(`planmode_token_${server.port}=${RITA}; HttpOnly; SameSite=Strict; Path=/`)
      expect((await call(endpoint, 'GET', '/', { token: null, headers: { Cookie: `planmode_token_${server.port}=${RITA}` } })).status).toBe(
        200,
      )
      expect(
        (await call(endpoint, 'GET', '/api/me', { token: null, headers: { Cookie: `planmode_token_${server.port}=${RITA}` } })).status,
      ).toBe(401)
    } finally {
      await server.stop()
    }
  })
})

describe('parseUsers', () => {
  it('reads each token’s { id, name, role }, in file order', () => {
    expect(
      parseUsers(
        JSON.stringify({ [OLGA]: { id: 'olga', name: 'Olga', role: 'owner' }, [RITA]: { role: 'reviewer', name: 'Rita', id: 'rita' } }),
        'f',
      ),
    ).toEqual([
      { token: OLGA, id: 'olga', name: 'Olga', role: 'owner' },
      { token: RITA, id: 'rita', name: 'Rita', role: 'reviewer' },
    ])
  })

  it('a user that is not an object, and a token of 257 characters, are refused', () => {
    expect(() => parseUsers(JSON.stringify({ [OLGA]: 'owner' }), 'f')).toThrow('f: user 1: must be { "id", "name", "role" }')
    expect(() => parseUsers(JSON.stringify({ ['a'.repeat(257)]: { id: 'olga', name: 'Olga', role: 'owner' } }), 'f')).toThrow(
      /it is 257 characters/,
    )
    expect(parseUsers(JSON.stringify({ ['a'.repeat(256)]: { id: 'olga', name: 'Olga', role: 'owner' } }), 'f')).toHaveLength(1)
  })

  it('topLevelKeys keeps repeated keys and reads escapes, nested objects and strings with braces', () => {
    expect(topLevelKeys('{ "a": { "a": 1, "b": [ "}", { "c": "\\"," } ] }, "b\\u0041": "x,\\"y", "a": null }')).toEqual(['a', 'bA', 'a'])
    expect(topLevelKeys('{}')).toEqual([])
  })
})
