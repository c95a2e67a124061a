import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * How the loopback server answers one request: stream `chunks` as SSE and
 * end; or stream them and then go silent with the response open (`stall`);
 * or send nothing at all, not even headers (`hang`); or send one chunk of
 * `chunks` every `trickleMs`, cycling, without ever ending.
 */
export type LoopbackReply =
  { readonly chunks: readonly unknown[]; readonly stall?: boolean; readonly trickleMs?: number } | { readonly hang: true }

export interface LoopbackServer {
  readonly baseURL: string
  /** The parsed request bodies, in arrival order. */
  readonly bodies: Record<string, unknown>[]
  /**
   * Resolves once `count` responses were closed by the client before they
   * ended (a cancelled stream); rejects with what was seen instead when that
   * has not happened within `withinMs` (default 5 s), so a test never hangs
   * until the runner's timeout.
   */
  abandoned(count: number, withinMs?: number): Promise<void>
  close(): Promise<void>
}

/** A chat-completions server on 127.0.0.1 answering each request with the next reply. */
export async function loopbackServer(replies: LoopbackReply[]): Promise<LoopbackServer> {
  const bodies: Record<string, unknown>[] = []
  let abandonedCount = 0
  const waiters: { count: number; resolve: () => void }[] = []
  const timers = new Set<ReturnType<typeof setInterval>>()
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (raw += chunk))
    request.on('end', () => {
      bodies.push(JSON.parse(raw) as Record<string, unknown>)
      const reply = replies.shift()
      response.on('close', () => {
        if (response.writableEnded) return
        abandonedCount += 1
        for (const waiter of waiters.filter((w) => w.count <= abandonedCount)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      })
      if (reply === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ error: { message: 'loopback: no reply left' } }))
        return
      }
      if ('hang' in reply) return
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      const send = (chunk: unknown): void => {
        response.write(`data: ${JSON.stringify(chunk)}\n\n`)
      }
      if (reply.trickleMs !== undefined) {
        let index = 0
        const timer = setInterval(() => send(reply.chunks[index++ % reply.chunks.length]), reply.trickleMs)
        timers.add(timer)
        response.on('close', () => {
          clearInterval(timer)
          timers.delete(timer)
        })
        return
      }
      for (const chunk of reply.chunks) send(chunk)
      if (!reply.stall) response.end('data: [DONE]\n\n')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    bodies,
    abandoned: (count, withinMs = 5_000) => {
      if (abandonedCount >= count) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          reject(
            new Error(
              `loopback: expected ${count} responses abandoned by the client within ${withinMs} ms, saw ${abandonedCount} (${bodies.length} requests received)`,
            ),
          )
        }, withinMs)
        const waiter = {
          count,
          resolve: () => {
            clearTimeout(timer)
            resolve()
          },
        }
        waiters.push(waiter)
      })
    },
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearInterval(timer)
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** One chat-completions stream chunk. */
export const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'loop-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
})
