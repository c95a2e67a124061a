import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createDeepSeekModel, createOpenAICompatibleModel, hostPlugin, modelFromEnv } from '@planmode/host'
import type { RequestErrorPayload } from '@planmode/seams'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { recordingLogger } from './helpers.js'

type Reply = { status: 503 } | { chunks: unknown[] }

interface Loopback {
  readonly baseURL: string
  readonly bodies: Record<string, unknown>[]
  readonly paths: string[]
  readonly headers: IncomingMessage['headers'][]
  close(): Promise<void>
}

/** A chat-completions server on 127.0.0.1 answering each request with the next scripted reply, streamed as SSE. */
async function loopback(replies: Reply[]): Promise<Loopback> {
  const bodies: Record<string, unknown>[] = []
  const paths: string[] = []
  const headers: IncomingMessage['headers'][] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (raw += chunk))
    request.on('end', () => {
      paths.push(request.url ?? '')
      headers.push(request.headers)
      bodies.push(JSON.parse(raw) as Record<string, unknown>)
      const reply = replies.shift()
      if (reply === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ error: { message: 'loopback: no reply left' } }))
        return
      }
      if ('status' in reply) {
        response.writeHead(reply.status, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ error: { message: 'overloaded, try again', type: 'server_error' } }))
        return
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      for (const chunk of reply.chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`)
      response.end('data: [DONE]\n\n')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    bodies,
    paths,
    headers,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'loop-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
})

/** A tool call split across deltas, then a text answer: what a real server streams. */
const toolCallReply: Reply = {
  chunks: [
    chunk({ role: 'assistant', content: 'Let me ' }),
    chunk({ content: 'look.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'read', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"notes.md"}' } }] }),
    chunk({}, 'tool_calls', { usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } }),
  ],
}
const textReply: Reply = {
  chunks: [chunk({ role: 'assistant', content: 'The notes ' }), chunk({ content: 'say hi.' }), chunk({}, 'stop')],
}

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function runTurn(model: LanguageModelV3) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  ctx.plugin(hostPlugin, { model, retryDelayMs: 0 })
  ctx.require('systemPrompt').section({ name: 'base', order: 0, text: 'Be brief.' })
  ctx.require('tools').register<{ path: string }, string>({
    name: 'read',
    description: 'Reads a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    execute: ({ path }) => `${path}: hi`,
  })
  const errors: RequestErrorPayload[] = []
  ctx.on('agent/request-error', async (payload, next) => {
    errors.push(payload)
    return next()
  })
  const deltas: string[] = []
  ctx.on('agent/stream', ({ part }) => {
    if (part.type === 'text-delta') deltas.push(part.delta)
  })
  const session = await ctx.require('sessions').create()
  const outcome = await ctx.require('agents').create({ session }).prompt('What do the notes say?')
  return { ctx, session, outcome, errors, deltas }
}

describe('OpenAI-compatible and DeepSeek models against a loopback server', () => {
  it('streams text and tool-call deltas, and retries a 503 with the same request', async () => {
    server = await loopback([{ status: 503 }, toolCallReply, textReply])
    const model = createOpenAICompatibleModel({ baseURL: server.baseURL, model: 'loop-model', name: 'loop', apiKey: 'k-test' })
    const { session, outcome, errors, deltas } = await runTurn(model)
    expect(outcome).toEqual({ turn: 1, reason: 'completed', steps: 2 })

    expect(errors.map((e) => [e.attempt, e.retryable, e.step])).toEqual([[1, true, 1]])
    expect(server.paths).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/chat/completions'])
    expect(server.headers[0]!.authorization).toBe('Bearer k-test')
    // The retry re-sent the frozen request byte for byte.
    expect(server.bodies[1]).toEqual(server.bodies[0])
    expect(server.bodies[0]).toMatchObject({
      model: 'loop-model',
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What do the notes say?' },
      ],
      tools: [{ type: 'function', function: { name: 'read', description: 'Reads a file' } }],
    })
    expect(server.bodies[2]!.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What do the notes say?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'read', arguments: '{"path":"notes.md"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: 'notes.md: hi' },
    ])

    const logged = session.events.map((e) => e.type)
    expect(logged).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const header = session.events.find((e) => e.type === 'request/header')!
    expect(header.data).toMatchObject({ reason: 'initial', model: 'loop.chat:loop-model' })
    const answers = session.events.filter((e) => e.type === 'assistant/message').map((e) => e.data.content)
    expect(answers).toEqual([
      [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool-call', toolCallId: 'call_abc', toolName: 'read', input: { path: 'notes.md' } },
      ],
      [{ type: 'text', text: 'The notes say hi.' }],
    ])
    expect(deltas.join('')).toBe('Let me look.The notes say hi.')
  })

  it('gives up after the retry budget when the server keeps failing', async () => {
    server = await loopback([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }])
    const model = createOpenAICompatibleModel({ baseURL: server.baseURL, model: 'loop-model' })
    const { outcome, errors } = await runTurn(model)
    expect(outcome.reason).toBe('error')
    expect(outcome.error).toMatch(/overloaded/)
    expect(errors.map((e) => e.attempt)).toEqual([1, 2, 3])
    expect(server.bodies).toHaveLength(3)
  })

  it('drives the DeepSeek provider the same way', async () => {
    server = await loopback([{ status: 503 }, toolCallReply, textReply])
    const model = createDeepSeekModel({ baseURL: server.baseURL, apiKey: 'ds-test', model: 'deepseek-chat' })
    const { outcome, session } = await runTurn(model)
    expect(outcome).toMatchObject({ reason: 'completed', steps: 2 })
    expect(server.headers[0]!.authorization).toBe('Bearer ds-test')
    expect(server.bodies[1]).toEqual(server.bodies[0])
    expect(session.events.find((e) => e.type === 'request/header')!.data).toMatchObject({ model: 'deepseek.chat:deepseek-chat' })
  })

  it('picks a model from the environment', () => {
    expect(modelFromEnv({})).toBeUndefined()
    expect(modelFromEnv({ DEEPSEEK_API_KEY: 'x' })).toMatchObject({ provider: 'deepseek.chat', modelId: 'deepseek-chat' })
    expect(modelFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_MODEL: 'm', DEEPSEEK_API_KEY: 'x' })).toMatchObject({
      modelId: 'm',
    })
    expect(() => modelFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' })).toThrow(/OPENAI_MODEL/)
    expect(() => createOpenAICompatibleModel({ baseURL: '', model: 'm' })).toThrow(/baseURL/)
  })
})
