/**
 * A loopback chat-completions server for the prompt-cache bench: it answers
 * `POST /v1/chat/completions` with scripted streaming SSE chunks in the OpenAI
 * wire format (text deltas, tool-call deltas, a finish reason, `[DONE]`) and
 * records every request body exactly as received.
 *
 * The answers come from a fixed queue, one per request, in order. An answer
 * may name command lines the user types while that request is in flight
 * (`during`): the server runs them through `onDuring` and waits for them
 * before it streams the answer, so the commands land mid-turn, after the
 * step's pre-step and before the next one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One scripted tool call of an answer. */
export interface ScriptedCall {
  readonly name: string
  readonly args: Readonly<Record<string, unknown>>
}

/** One scripted model answer (one request's response). */
export interface ScriptedAnswer {
  /** Text the model says (streamed in a few deltas). */
  readonly text?: string
  /** Tool calls, streamed after the text. */
  readonly calls?: readonly ScriptedCall[]
  /** Command lines the user types, in order, while this request is in flight. */
  readonly during?: readonly string[]
}

/** A captured request: the body as received, and parsed. */
export interface CapturedRequest {
  /** The body exactly as received (UTF-8). */
  readonly raw: string
  /** The parsed body. */
  readonly body: ChatBody
}

/** The part of an OpenAI chat-completions body the bench reads. */
export interface ChatBody {
  readonly model: string
  readonly messages: readonly unknown[]
  readonly tools?: readonly unknown[]
  readonly [key: string]: unknown
}

/** The running server. */
export interface ChatServer {
  /** `http://127.0.0.1:<port>/v1`, the provider's `baseURL`. */
  readonly baseURL: string
  /** Every request, in arrival order. */
  readonly requests: CapturedRequest[]
  /** Answers not sent yet. */
  readonly remaining: () => number
  close(): Promise<void>
}

/** Options of {@link startChatServer}. */
export interface ChatServerOptions {
  /** The answers, one per request, in order. */
  readonly answers: readonly ScriptedAnswer[]
  /** Runs an answer's `during` command lines before the answer is streamed. */
  readonly onDuring?: (lines: readonly string[]) => Promise<void>
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/** Splits `text` into about `parts` pieces, as a model streams deltas. */
function pieces(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts))
  const out: string[] = []
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size))
  return out
}

/** The SSE `data:` lines of one answer: role, text deltas, tool-call deltas (name first, arguments in pieces), finish. */
export function answerChunks(answer: ScriptedAnswer, id: string, model: string, callIds: () => string): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: 1_764_547_200,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  const lines = [chunk({ role: 'assistant', content: '' })]
  for (const piece of pieces(answer.text ?? '', 3)) lines.push(chunk({ content: piece }))
  const calls = answer.calls ?? []
  calls.forEach((call, index) => {
    lines.push(chunk({ tool_calls: [{ index, id: callIds(), type: 'function', function: { name: call.name, arguments: '' } }] }))
    for (const piece of pieces(JSON.stringify(call.args), 3)) lines.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  lines.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'))
  return lines
}

/** Starts the server on 127.0.0.1, port 0 (any free port). */
export async function startChatServer(options: ChatServerOptions): Promise<ChatServer> {
  const queue = [...options.answers]
  const requests: CapturedRequest[] = []
  let calls = 0
  const callIds = (): string => `call_${++calls}`

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req)
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
      return
    }
    const body = JSON.parse(raw) as ChatBody
    requests.push({ raw, body })
    const answer = queue.shift()
    if (answer === undefined) {
      // Not retryable (400): the session asked for more answers than the script holds.
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'the script has no answer left' } }))
      return
    }
    if (answer.during !== undefined) await options.onDuring?.(answer.during)
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    for (const line of answerChunks(answer, `chatcmpl-${requests.length}`, body.model, callIds)) res.write(`data: ${line}\n\n`)
    res.end('data: [DONE]\n\n')
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: String(error) } }))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      }),
  }
}
