import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Reply } from './mock-model.js'

/** A chat-completions request body as the provider sent it. */
export interface ChatRequest {
  readonly model: string
  readonly stream?: boolean
  readonly messages: readonly {
    readonly role: string
    readonly content?: unknown
    readonly tool_calls?: unknown
    readonly tool_call_id?: string
  }[]
  readonly tools?: readonly { readonly type: string; readonly function: { readonly name: string } }[]
}

export interface ChatServer {
  /** The base URL, ending in `/v1`. */
  readonly url: string
  /** Every request body, parsed, in order. */
  readonly requests: ChatRequest[]
  close(): Promise<void>
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function toolCalls(reply: Reply, n: number) {
  return (reply.calls ?? []).map((call, index) => ({
    id: call.id ?? `call_${n}_${index + 1}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.input === 'string' ? call.input : JSON.stringify(call.input) },
  }))
}

function sse(response: ServerResponse, reply: Reply, n: number): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const chunk = (delta: unknown, finish: string | null, extra: object = {}) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 1, model: 'loopback-model', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
  response.write(chunk({ role: 'assistant', content: '' }, null))
  if (reply.text !== undefined) {
    // Split the text over several chunks, as a real server streams it.
    for (const piece of reply.text.match(/.{1,8}/gs) ?? []) response.write(chunk({ content: piece }, null))
  }
  toolCalls(reply, n).forEach((call, index) => {
    // Arguments in two deltas: the provider must join them.
    const half = Math.ceil(call.function.arguments.length / 2)
    response.write(
      chunk(
        {
          tool_calls: [
            {
              index,
              id: call.id,
              type: 'function',
              function: { name: call.function.name, arguments: call.function.arguments.slice(0, half) },
            },
          ],
        },
        null,
      ),
    )
    response.write(chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] }, null))
  })
  const finish = (reply.calls?.length ?? 0) > 0 ? 'tool_calls' : 'stop'
  response.write(chunk({}, finish, { usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }))
  response.end('data: [DONE]\n\n')
}

function json(response: ServerResponse, reply: Reply, n: number): void {
  const calls = toolCalls(reply, n)
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(
    JSON.stringify({
      id: `chatcmpl-${n}`,
      object: 'chat.completion',
      created: 1,
      model: 'loopback-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply.text ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
          finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    }),
  )
}

/**
 * A chat-completions server on 127.0.0.1 (port 0): each POST to
 * `/v1/chat/completions` takes the next reply, sent as server-sent events
 * when the body asks for `stream: true`, else as one JSON completion.
 */
export async function startChatServer(replies: Reply[]): Promise<ChatServer> {
  const requests: ChatRequest[] = []
  let next = 0
  const server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404).end()
        return
      }
      const body = JSON.parse(await readBody(request)) as ChatRequest
      requests.push(body)
      const n = ++next
      const reply = replies[n - 1]
      if (reply === undefined) {
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no reply left for request #${n}` } }))
        return
      }
      if (body.stream === true) sse(response, reply, n)
      else json(response, reply, n)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      }),
  }
}
