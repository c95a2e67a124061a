import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One scripted answer of the loopback server. */
export type ScriptedReply =
  | { readonly status: number }
  | { readonly text: string }
  | { readonly toolCalls: readonly { readonly name: string; readonly args: unknown }[] }

/** A request the server received. */
export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: {
    model: string
    stream?: boolean
    messages: { role: string; content: unknown }[]
    tools?: { function: { name: string } }[]
  }
}

/**
 * A chat-completions server on 127.0.0.1 that answers from a script, in the
 * OpenAI streaming protocol (SSE chunks, then `[DONE]`) or as one JSON body.
 */
export async function startChatServer(
  replies: ScriptedReply[],
): Promise<{ url: string; requests: ReceivedRequest[]; close(): Promise<void> }> {
  const requests: ReceivedRequest[] = []
  let calls = 0
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()))
    req.on('end', () => {
      const body = JSON.parse(raw) as ReceivedRequest['body']
      requests.push({ path: req.url ?? '', headers: req.headers, body })
      const reply = replies.shift() ?? { text: 'The script has ended.' }
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }))
        return
      }
      const id = `chatcmpl-${++calls}`
      const base = { id, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model }
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
      const toolCalls =
        'toolCalls' in reply
          ? reply.toolCalls.map((call, index) => ({
              index,
              id: `call_${calls}_${index}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            }))
          : undefined
      const finish = toolCalls === undefined ? 'stop' : 'tool_calls'
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: 'text' in reply ? reply.text : null, tool_calls: toolCalls },
                finish_reason: finish,
              },
            ],
            usage,
          }),
        )
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      const send = (chunk: unknown): void => {
        res.write(`data: ${JSON.stringify(chunk)}\n\n`)
      }
      send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })
      if ('text' in reply) {
        for (const piece of reply.text.match(/.{1,8}/gs) ?? [])
          send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })
      } else {
        for (const call of toolCalls!) {
          const args = call.function.arguments
          const half = Math.ceil(args.length / 2)
          send({
            ...base,
            choices: [
              {
                index: 0,
                delta: { tool_calls: [{ ...call, function: { name: call.function.name, arguments: args.slice(0, half) } }] },
                finish_reason: null,
              },
            ],
          })
          send({
            ...base,
            choices: [
              { index: 0, delta: { tool_calls: [{ index: call.index, function: { arguments: args.slice(half) } }] }, finish_reason: null },
            ],
          })
        }
      }
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })
      res.write('data: [DONE]\n\n')
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
