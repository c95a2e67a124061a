import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { call, cleanup, post, SseClient, startTestServer, turnEnded, waitForEvent } from './support.js'

/** A model that streams `Hello, ` and then waits for {@link release} before ` world.` and the finish. */
function pausingModel() {
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => (release = resolve))
  const model: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: 'test',
    modelId: 'pausing',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('stream only')),
    async doStream() {
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          async start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] })
            controller.enqueue({ type: 'text-start', id: 't' })
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hello, ' })
            await gate
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'world.' })
            controller.enqueue({ type: 'text-end', id: 't' })
            controller.enqueue({
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {
                inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
                outputTokens: { total: 0, text: 0, reasoning: 0 },
              },
            })
            controller.close()
          },
        }),
      }
    },
  }
  return { model, release: () => release() }
}

let server: WebServer
const paused = pausingModel()

beforeAll(async () => {
  server = await startTestServer({ model: paused.model })
})

afterAll(async () => {
  await server.close()
  cleanup()
})

describe('streamed assistant text', () => {
  it('goes out as deltas; a page loaded mid-step gets the text so far; the logged message replaces it', async () => {
    const id = (await post(server, '/api/sessions', {})).body.id
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      await post(server, `/api/sessions/${id}/prompt`, { text: 'hi' })
      const first = await stream.waitFor((item) => item.event === 'delta')
      expect(first.data).toEqual({ turn: 1, step: 1, text: 'Hello, ' })
      expect(first.id).toBeUndefined()
      // A reload now: the page has no assistant message yet, but the partial text.
      const page = await call(server, 'GET', `/api/sessions/${id}`)
      expect(page.body.running).toBe(true)
      expect(page.body.partial).toEqual({ turn: 1, step: 1, text: 'Hello, ' })
      expect(page.body.events.some((event: { type: string }) => event.type === 'assistant/message')).toBe(false)
      // A stream opened now starts with the text so far (`partial`) after its frame, so nothing between the GET and it is lost.
      const late = await SseClient.open(server, `/api/sessions/${id}/stream?from=${page.body.lastSeq}`)
      try {
        const opening = await late.waitFor((item) => item.event === 'questions')
        expect(late.items.map((item) => item.event)).toEqual(['frame', 'partial', 'questions'])
        expect(late.items[1]!.data).toEqual({ turn: 1, step: 1, text: 'Hello, ' })
        expect(opening.data).toEqual({ open: [] })
        paused.release()
        expect((await late.waitFor((item) => item.event === 'delta')).data).toEqual({ turn: 1, step: 1, text: 'world.' })
        await waitForEvent(late, (event) => event.type === 'assistant/message')
      } finally {
        late.close()
      }
      const message = await waitForEvent(stream, (event) => event.type === 'assistant/message')
      expect(message.data).toMatchObject({ content: [{ type: 'text', text: 'Hello, world.' }], turn: 1, step: 1 })
      expect(stream.items.filter((item) => item.event === 'delta').map((item) => item.data.text)).toEqual(['Hello, ', 'world.'])
      await waitForEvent(stream, turnEnded(1))
      expect((await call(server, 'GET', `/api/sessions/${id}`)).body.partial).toBeUndefined()
      // Once the step is logged, a new stream sends no partial.
      const after = await SseClient.open(server, `/api/sessions/${id}/stream`)
      try {
        await after.waitFor((item) => item.event === 'questions')
        expect(after.items.map((item) => item.event)).toEqual(['frame', 'questions'])
      } finally {
        after.close()
      }
    } finally {
      stream.close()
    }
  })
})
