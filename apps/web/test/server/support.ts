import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chooseModel } from '@planmode/demo/model-choice'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent } from '@planmode/seams'
import { startWebServer, type WebServer, type WebServerOptions } from '../../server/http-server.js'
import { sampleWorkspaceDir } from '../../server/options.js'

/** A temp folder removed by {@link cleanup}. */
const made: string[] = []

/** A fresh temp folder. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Removes every temp folder made so far. */
export function cleanup(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Starts the real server in-process with the offline model, a temp session dir and a copy of the sample workspace (shared by its sessions, unless `workspaces` asks for one per session). */
export async function startTestServer(options: Partial<WebServerOptions> = {}): Promise<WebServer> {
  const sessionDir = options.sessionDir ?? tempDir('planmode-web-sessions-')
  // One shared copy of the sample project, unless the test asks for a copy per session (`workspaces`).
  const shared = options.workspaces !== undefined ? undefined : (options.workspace ?? join(tempDir('planmode-web-ws-'), 'ws'))
  if (shared !== undefined && options.workspace === undefined) cpSync(sampleWorkspaceDir(), shared, { recursive: true })
  const section = options.section ?? RECOMMENDED_PLAN_SECTION
  return startWebServer({
    sessionDir,
    ...(shared === undefined ? {} : { workspace: shared }),
    section,
    model: options.model ?? chooseModel({ offline: true }, section).model,
    keepAliveSeconds: 0,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...options,
  })
}

/** Where a server listens and its token: a {@link WebServer}, or one running in a child process. */
export interface Endpoint {
  readonly port: number
  readonly token: string
}

/** A response: status, headers and the parsed JSON body (or the text). */
export interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: any
  readonly text: string
}

/** Options of {@link call}. */
export interface CallOptions {
  /** The token (sent as `Authorization: Bearer`); `null` sends none. Defaults to the server's. */
  readonly token?: string | null
  readonly body?: unknown
  /** A raw body, sent as is. */
  readonly raw?: string | Buffer
  readonly headers?: Record<string, string>
}

/** One HTTP request to the server through node:http (so `Host` and `Origin` can be anything). */
export function call(server: Endpoint, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const token = options.token === undefined ? server.token : options.token
  const headers: Record<string, string> = { Host: `127.0.0.1:${server.port}` }
  if (token !== null) headers.Authorization = `Bearer ${token}`
  let payload: string | Buffer | undefined = options.raw
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body)
    headers['Content-Type'] = 'application/json'
  }
  if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload))
  Object.assign(headers, options.headers)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** A POST with a JSON body. */
export const post = (server: Endpoint, path: string, body: unknown, options: CallOptions = {}): Promise<Reply> =>
  call(server, 'POST', path, { ...options, body })

/** One Server-Sent Event. */
export interface SseItem {
  readonly event: string
  readonly id?: string
  readonly data: any
}

/** A Server-Sent Events client over node:http that keeps every item it received. */
export class SseClient {
  readonly items: SseItem[] = []
  private buffer = ''
  private waiters: { test: (item: SseItem) => boolean; from: number; resolve: (item: SseItem) => void }[] = []
  private constructor(
    private readonly response: IncomingMessage,
    private readonly destroy: () => void,
  ) {
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => this.feed(chunk))
  }

  /** Opens `GET path` with the server's token (or `headers` as given) and resolves once the response headers are in. */
  static open(server: Endpoint, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          path,
          headers: { Host: `127.0.0.1:${server.port}`, Authorization: `Bearer ${server.token}`, Accept: 'text/event-stream', ...headers },
        },
        (res) => {
          if (res.statusCode !== 200) {
            let text = ''
            res.on('data', (chunk: Buffer) => (text += chunk.toString()))
            res.on('end', () => reject(new Error(`stream refused: ${res.statusCode} ${text}`)))
            return
          }
          resolve(new SseClient(res, () => req.destroy()))
        },
      )
      req.on('error', reject)
      req.end()
    })
  }

  private feed(chunk: string): void {
    this.buffer += chunk
    for (;;) {
      const end = this.buffer.indexOf('\n\n')
      if (end < 0) return
      const block = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(end + 2)
      let event = 'message'
      let id: string | undefined
      const data: string[] = []
      for (const line of block.split('\n')) {
        if (line.startsWith(':') || line === '') continue
        const at = line.indexOf(':')
        const field = at < 0 ? line : line.slice(0, at)
        const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '')
        if (field === 'event') event = value
        else if (field === 'id') id = value
        else if (field === 'data') data.push(value)
      }
      if (data.length === 0) continue
      const item: SseItem = { event, ...(id === undefined ? {} : { id }), data: JSON.parse(data.join('\n')) }
      this.items.push(item)
      for (const waiter of [...this.waiters]) {
        if (this.items.length - 1 >= waiter.from && waiter.test(item)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1)
          waiter.resolve(item)
        }
      }
    }
  }

  /** The first item (from index `from`) that passes `test`, now or when it arrives. */
  waitFor(test: (item: SseItem) => boolean, from = 0): Promise<SseItem> {
    const found = this.items.slice(from).find(test)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve) => this.waiters.push({ test, from, resolve }))
  }

  /** The appended events received, in order. */
  events(): SessionEvent[] {
    return this.items.filter((item) => item.event === 'append').map((item) => item.data.event as SessionEvent)
  }

  /** The projection frames received, in order. */
  frames(): { asOfSeq: number; values: Record<string, any> }[] {
    return this.items.filter((item) => item.event === 'frame').map((item) => item.data)
  }

  close(): void {
    this.response.destroy()
    this.destroy()
  }
}

/** Waits for an appended event of the stream that passes `test`. */
export function waitForEvent(client: SseClient, test: (event: SessionEvent) => boolean): Promise<SessionEvent> {
  return client
    .waitFor((item) => item.event === 'append' && test(item.data.event as SessionEvent))
    .then((item) => item.data.event as SessionEvent)
}

/** The `turn/end` of turn `turn`. */
export const turnEnded = (turn: number) => (event: SessionEvent) => event.type === 'turn/end' && event.data.turn === turn

/** Reads a JSONL session log. */
export function readLog(dir: string, id: string): SessionEvent[] {
  return readFileSync(join(dir, `${id}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SessionEvent)
}

/** A tiny valid PNG (1×1), base64. */
export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/**
 * Appends to a JSONL log what hosts before `reason: 'interrupted'` wrote when
 * they closed a turn a dead process left open: `step/end` for its open step,
 * then `turn/end { reason: 'error', error: 'interrupted: …' }`. Returns them.
 */
export function appendLegacyClose(sessionDir: string, id: string, events: readonly SessionEvent[]): SessionEvent[] {
  const step = events.filter((event) => event.type === 'step/start').at(-1)!.data as { turn: number; step: number }
  const last = events.at(-1)!
  const added = [
    { type: 'step/end', seq: last.seq + 1, time: last.time, data: { turn: step.turn, step: step.step } },
    {
      type: 'turn/end',
      seq: last.seq + 2,
      time: last.time,
      data: { turn: step.turn, reason: 'error', error: 'interrupted: the process running this turn ended before the turn did' },
    },
  ] as unknown as SessionEvent[]
  appendFileSync(join(sessionDir, `${id}.jsonl`), added.map((event) => `${JSON.stringify(event)}\n`).join(''))
  return added
}
