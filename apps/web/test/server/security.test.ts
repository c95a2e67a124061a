import { mkdirSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { allowedHosts, sameToken } from '../../server/security.js'
import { call, cleanup, post, SseClient, startTestServer, tempDir, turnEnded, waitForEvent } from './support.js'

let server: WebServer
let id: string
let clientDir: string

beforeAll(async () => {
  const base = tempDir('planmode-web-client-')
  clientDir = join(base, 'client')
  mkdirSync(join(clientDir, 'assets'), { recursive: true })
  writeFileSync(join(base, 'secret.txt'), 'TOP-SECRET-CONTENT')
  writeFileSync(join(clientDir, 'index.html'), '<!doctype html><title>client</title><script type="module" src="./assets/app.js"></script>')
  writeFileSync(join(clientDir, 'assets', 'app.js'), 'console.log("app")')
  server = await startTestServer({ clientDir })
  id = (await post(server, '/api/sessions', {})).body.id
})

afterAll(async () => {
  await server.close()
  cleanup()
})

/** The session's event count, read through the API. */
async function eventCount(): Promise<number> {
  const page = await call(server, 'GET', `/api/sessions/${id}?tail=100000`)
  return page.body.events.length
}

describe('the access token', () => {
  it('is 32 random bytes in base64url, printed in the URL', () => {
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`)
  })

  it('refuses every API request and the page without it (401): JSON for the API, a small HTML page for the page', async () => {
    for (const path of ['/api/sessions', `/api/sessions/${id}`, `/api/sessions/${id}/stream`]) {
      const reply = await call(server, 'GET', path, { token: null })
      expect(reply.status, path).toBe(401)
      expect(reply.body.error).toMatch(/access token is required/)
    }
    for (const path of ['/', '/index.html', '/assets/app.js', '/missing.txt']) {
      const reply = await call(server, 'GET', path, { token: null })
      expect(reply.status, path).toBe(401)
      expect(reply.headers['content-type'], path).toMatch(/^text\/html/)
      expect(reply.text, path).toContain('No access token: open the URL the server printed at start')
      expect(reply.text, path).not.toContain('console.log')
      expect(reply.headers['set-cookie'], path).toBeUndefined()
    }
    const head = await call(server, 'HEAD', '/', { token: null })
    expect([head.status, head.text]).toEqual([401, ''])
    const before = await eventCount()
    const refused = await post(server, `/api/sessions/${id}/command`, { line: '/plan' }, { token: null })
    expect(refused.status).toBe(401)
    expect(await eventCount()).toBe(before)
  })

  it('refuses a wrong token (401), one character off or of another length', async () => {
    const wrong = `${server.token.slice(0, -1)}${server.token.endsWith('A') ? 'B' : 'A'}`
    for (const token of [wrong, 'x', `${server.token}x`, '']) {
      const reply = await call(server, 'GET', '/api/sessions', { token })
      expect(reply.status).toBe(401)
    }
    const query = await call(server, 'GET', `/api/sessions?token=${wrong}`, { token: null })
    expect(query.status).toBe(401)
    expect(query.body.error).toBe('the access token is wrong')
    // A page opened with an old URL (a restarted server has a new token) says so in HTML, and sets no cookie.
    const page = await call(server, 'GET', `/?token=${wrong}`, { token: null })
    expect(page.status).toBe(401)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.text).toContain('Wrong or old token: the server prints a new URL every time it starts; open the latest one.')
    expect(page.headers['set-cookie']).toBeUndefined()
    const stale = await call(server, 'GET', '/assets/app.js', {
      token: null,
      headers: { Cookie: `planmode_token_${server.port}=${wrong}` },
    })
    expect(stale.status).toBe(401)
    expect(stale.text).toContain('Wrong or old token')
  })

  it('takes the cookie only for the page and its static files, never for the API or the stream (401)', async () => {
    const cookie = { Cookie: `other=1; planmode_token_${server.port}=${server.token}` }
    expect((await call(server, 'GET', '/', { token: null, headers: cookie })).status).toBe(200)
    expect((await call(server, 'GET', '/assets/app.js', { token: null, headers: cookie })).status).toBe(200)
    // What a page on another port of 127.0.0.1 (or curl) would send: the cookie alone.
    for (const path of ['/api/sessions', `/api/sessions/${id}`, `/api/sessions/${id}/stream`, `/api/sessions/${id}/stream?from=-1`]) {
      const reply = await call(server, 'GET', path, { token: null, headers: cookie })
      expect(reply.status, path).toBe(401)
      expect(reply.body.error, path).toMatch(/access token is required/)
    }
    const sessions = (await call(server, 'GET', '/api/sessions')).body.sessions.length
    const before = await eventCount()
    expect((await post(server, '/api/sessions', {}, { token: null, headers: cookie })).status).toBe(401)
    expect((await post(server, `/api/sessions/${id}/command`, { line: '/plan' }, { token: null, headers: cookie })).status).toBe(401)
    expect((await post(server, `/api/sessions/${id}/prompt`, { text: 'hi' }, { token: null, headers: cookie })).status).toBe(401)
    expect(await eventCount()).toBe(before)
    expect((await call(server, 'GET', '/api/sessions')).body.sessions).toHaveLength(sessions)
  })

  it('takes the token as a bearer header, as ?token=, and for static files as the cookie the page sets', async () => {
    expect((await call(server, 'GET', '/api/sessions')).status).toBe(200)
    expect((await call(server, 'GET', `/api/sessions?token=${server.token}`, { token: null })).status).toBe(200)
    const page = await call(server, 'GET', `/?token=${server.token}`, { token: null })
    expect(page.status).toBe(200)
    expect(page.text).toContain('<title>client</title>')
    const cookie = String(page.headers['set-cookie']).split(';')[0]!
    expect(cookie).toBe(`planmode_token_${server.port}=${server.token}`)
    expect(String(page.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/)
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    const asset = await call(server, 'GET', '/assets/app.js', { token: null, headers: { Cookie: cookie } })
    expect(asset.status).toBe(200)
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/)
    expect(
      (await call(server, 'GET', '/api/sessions', { token: null, headers: { Cookie: `planmode_token_1=${server.token}` } })).status,
    ).toBe(401)
  })

  it('compares in constant time over hashes, so any length is just unequal', () => {
    expect(sameToken('abc', 'abc')).toBe(true)
    expect(sameToken('abc', 'abd')).toBe(false)
    expect(sameToken('', 'abc')).toBe(false)
  })
})

describe('Host and Origin', () => {
  it('refuses a Host that is not the server (DNS rebinding): 403, nothing done', async () => {
    const before = await eventCount()
    for (const host of [
      'evil.example',
      `evil.example:${server.port}`,
      `127.0.0.1:${server.port + 1}`,
      '127.0.0.1',
      `127.0.0.2:${server.port}`,
    ]) {
      const reply = await call(server, 'GET', '/api/sessions', { headers: { Host: host } })
      expect(reply.status, host).toBe(403)
      expect(reply.body.error).toMatch(/is not this server/)
      const posted = await post(server, `/api/sessions/${id}/command`, { line: '/plan' }, { headers: { Host: host } })
      expect(posted.status).toBe(403)
    }
    expect(await eventCount()).toBe(before)
  })

  it('answers to 127.0.0.1, localhost and [::1] with its port', async () => {
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `LOCALHOST:${server.port}`, `[::1]:${server.port}`]) {
      expect((await call(server, 'GET', '/api/sessions', { headers: { Host: host } })).status, host).toBe(200)
    }
    expect(allowedHosts('0.0.0.0', 8080)).toEqual(new Set(['127.0.0.1:8080', 'localhost:8080', '[::1]:8080']))
    expect(allowedHosts('::1', 8080).has('[::1]:8080')).toBe(true)
    expect(allowedHosts('192.168.1.5', 8080).has('192.168.1.5:8080')).toBe(true)
  })

  it('refuses a cross-site Origin (403) and takes its own', async () => {
    const before = await eventCount()
    for (const origin of ['http://evil.example', `http://localhost:${server.port + 1}`, `https://127.0.0.1:${server.port}`, 'null']) {
      const reply = await post(server, `/api/sessions/${id}/command`, { line: '/plan' }, { headers: { Origin: origin } })
      expect(reply.status, origin).toBe(403)
      expect(reply.body.error).toMatch(/cross-site requests are refused/)
    }
    expect(await eventCount()).toBe(before)
    const own = await call(server, 'GET', '/api/sessions', { headers: { Origin: `http://127.0.0.1:${server.port}` } })
    expect(own.status).toBe(200)
  })
})

describe('bad input gets a clear 4xx with nothing changed', () => {
  it('POST bodies must be application/json (415)', async () => {
    const before = await eventCount()
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const reply = await call(server, 'POST', `/api/sessions/${id}/prompt`, { raw: '{"text":"hi"}', headers: { 'Content-Type': type } })
      expect(reply.status, type).toBe(415)
    }
    expect((await call(server, 'POST', `/api/sessions/${id}/prompt`, { raw: '{"text":"hi"}' })).status).toBe(415)
    expect(await eventCount()).toBe(before)
  })

  it('refuses malformed JSON, non-objects, unknown members and wrong types (400)', async () => {
    const before = await eventCount()
    const json = { 'Content-Type': 'application/json; charset=utf-8' }
    const cases: [string, string, RegExp][] = [
      ['prompt', '{"text":', /not valid JSON/],
      ['prompt', '[1,2]', /must be a JSON object/],
      ['prompt', '"hi"', /must be a JSON object/],
      ['prompt', '{"text":"hi","extra":1}', /unknown member "extra"/],
      ['prompt', '{"text":42}', /text must be a string/],
      ['prompt', '{"text":"   "}', /needs text or an image/],
      ['prompt', '{"text":"hi","images":"x"}', /images must be an array/],
      ['prompt', '{"text":"hi","images":[{"mediaType":"text/html","data":"aGk="}]}', /image\/\* media type/],
      ['prompt', '{"text":"hi","images":[{"mediaType":"image/png","data":"not base64!"}]}', /non-empty base64/],
      ['command', '{"line":"plan"}', /starting with \/name/],
      ['command', '{"line":42}', /starting with \/name/],
      ['command', '{}', /starting with \/name/],
      ['cancel', '{"now":true}', /unknown member "now"/],
    ]
    for (const [action, raw, message] of cases) {
      const reply = await call(server, 'POST', `/api/sessions/${id}/${action}`, { raw, headers: json })
      expect(reply.status, raw).toBe(400)
      expect(reply.body.error, raw).toMatch(message)
    }
    expect((await post(server, '/api/sessions', { fromPlan: '' })).status).toBe(400)
    expect((await post(server, '/api/sessions', { fromPlan: 3 })).status).toBe(400)
    expect((await call(server, 'GET', `/api/sessions/${id}?tail=-1`)).status).toBe(400)
    expect((await call(server, 'GET', `/api/sessions/${id}/stream?from=abc`)).status).toBe(400)
    expect((await call(server, 'GET', `/api/sessions/${id}/stream?from=999999`)).status).toBe(400)
    expect(await eventCount()).toBe(before)
  })

  it('refuses a body over the limit (413) and closes the connection instead of reading the rest', async () => {
    const small = await startTestServer({ bodyLimit: 1024 })
    try {
      const created = await post(small, '/api/sessions', {})
      const reply = await post(small, `/api/sessions/${created.body.id}/prompt`, { text: 'x'.repeat(2000) })
      expect(reply.status).toBe(413)
      expect(reply.body.error).toMatch(/larger than 1024 bytes/)
      expect(reply.headers.connection).toBe('close')
      // A huge declared body of which only a little is ever sent, and a chunked one (no length) crossing the limit:
      // the 413 comes and the server hangs up without waiting for the rest.
      const unfinished = (headers: Record<string, string>) =>
        new Promise<{ status: number; closed: boolean }>((resolve, reject) => {
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port: small.port,
              method: 'POST',
              path: `/api/sessions/${created.body.id}/prompt`,
              headers: {
                Host: `127.0.0.1:${small.port}`,
                Authorization: `Bearer ${small.token}`,
                'Content-Type': 'application/json',
                ...headers,
              },
            },
            (res) => {
              res.resume()
              res.on('end', () => req.socket?.once('close', () => resolve({ status: res.statusCode ?? 0, closed: true })))
            },
          )
          req.on('error', (error) =>
            (error as NodeJS.ErrnoException).code === 'ECONNRESET' || error.message.includes('socket hang up') ? undefined : reject(error),
          )
          req.write('{"text":"' + 'z'.repeat(4096)) // never ended
        })
      expect(await unfinished({ 'Content-Length': String(1024 * 1024 * 1024) })).toEqual({ status: 413, closed: true })
      expect(await unfinished({ 'Transfer-Encoding': 'chunked' })).toEqual({ status: 413, closed: true })
      expect((await call(small, 'GET', `/api/sessions/${created.body.id}`)).body.events).toHaveLength(1)
    } finally {
      await small.close()
    }
  })

  it('gives 404 for an unknown session or endpoint, 405 for a wrong method', async () => {
    for (const path of ['/api/sessions/nope', '/api/sessions/nope/stream', '/api/sessions/..%2F..%2Fetc']) {
      expect((await call(server, 'GET', path)).status, path).toBe(404)
    }
    expect((await post(server, '/api/sessions/nope/prompt', { text: 'hi' })).status).toBe(404)
    expect((await post(server, '/api/sessions/nope/command', { line: '/plan' })).status).toBe(404)
    expect((await call(server, 'GET', '/api/nothing')).status).toBe(404)
    expect((await post(server, `/api/sessions/${id}/nothing`, {})).status).toBe(404)
    expect((await call(server, 'GET', `/api/sessions/${id}/prompt`)).status).toBe(405)
    expect((await call(server, 'DELETE', `/api/sessions/${id}`)).status).toBe(405)
    expect((await call(server, 'PUT', '/')).status).toBe(405)
    const list = await call(server, 'GET', '/api/sessions')
    expect(list.body.sessions.map((row: { id: string }) => row.id)).toEqual([id])
  })

  it('serves only files inside the client folder', async () => {
    for (const path of [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/../../secret.txt',
      '/assets%2F..%2F..%2Fsecret.txt',
      '/..%5csecret.txt',
      '/assets/missing.js',
      '/assets',
    ]) {
      const reply = await call(server, 'GET', path)
      expect(reply.status, path).toBe(404)
      expect(reply.text).not.toContain('TOP-SECRET-CONTENT')
    }
    expect((await call(server, 'GET', '/%E0%A4%A')).status).toBe(400)
  })

  it('refuses a null byte in a static path (400) without naming any folder', async () => {
    for (const path of ['/assets/app.js%00', '/%00', '/assets/%00app.js', '/index.html%00.js']) {
      const reply = await call(server, 'GET', path)
      expect(reply.status, path).toBe(400)
      expect(reply.body.error, path).toMatch(/null byte/)
      expect(reply.text, path).not.toContain(clientDir)
      expect(reply.text, path).not.toContain(tmpdir())
    }
    expect((await call(server, 'GET', '/assets/app.js')).status).toBe(200)
  })

  it('refuses invalid answers with 400 and keeps the question open', async () => {
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      expect((await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })).body.result.kind).toBe('success')
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      const before = await eventCount()
      const bad: [unknown, RegExp][] = [
        ['Approve', /must be an array/],
        [[], /has no answer/],
        [[{ id: 'other', selected: ['Approve'] }], /is not a question of this ask/],
        [[{ id: 'plan-review', selected: ['Maybe'] }], /is not an option/],
        [[{ id: 'plan-review', selected: ['Approve', 'Keep planning'] }], /takes one option/],
        [[{ id: 'plan-review', selected: [] }], /no option and has no custom text/],
        [[{ id: 'plan-review', selected: 'Approve' }], /array of option labels/],
        [[{ id: 'plan-review', selected: ['Approve'], custom: 3 }], /custom must be a string/],
        [[{ id: 'plan-review', selected: ['Approve'], edit: 3 }], /edit must be a string/],
        [
          [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 0, text: 'x' }] }],
          /comments\[0\]\.line must be a line of the question's detail/,
        ],
        [
          [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 1.5, text: 'x' }] }],
          /comments\[0\]\.line must be a line of the question's detail/,
        ],
        [
          [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 1, text: ' ' }] }],
          /comments\[0\]\.text must be a non-blank string/,
        ],
        [[{ id: 'plan-review', selected: ['Approve'], vote: 1 }], /unknown member "vote"/],
        [
          [
            { id: 'plan-review', selected: ['Approve'] },
            { id: 'plan-review', selected: ['Approve'] },
          ],
          /answered twice/,
        ],
      ]
      for (const [answers, message] of bad) {
        const reply = await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers })
        expect(reply.status, JSON.stringify(answers)).toBe(400)
        expect(reply.body.error).toMatch(message)
      }
      expect((await post(server, `/api/sessions/${id}/questions/unknown-question`, { answers: [] })).status).toBe(404)
      expect(await eventCount()).toBe(before)
      const page = await call(server, 'GET', `/api/sessions/${id}?tail=0`)
      expect(page.body.questions.map((open: { id: string }) => open.id)).toEqual([question.id])
      expect(stream.items.some((item) => item.event === 'question-closed')).toBe(false)
      // A valid answer still closes it.
      expect(
        (
          await post(server, `/api/sessions/${id}/questions/${question.id}`, {
            answers: [{ id: 'plan-review', selected: ['Stop planning'] }],
          })
        ).status,
      ).toBe(200)
      await waitForEvent(stream, turnEnded(1))
    } finally {
      stream.close()
    }
  })
})
