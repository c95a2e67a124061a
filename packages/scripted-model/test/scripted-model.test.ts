import { APICallError } from '@ai-sdk/provider'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createScriptedModel, requestSystem, type ScriptedResponse } from '@planmode/scripted-model'
import { partsOf, requestOf } from './support.js'

describe('createScriptedModel', () => {
  it('answers doGenerate and doStream from one queue, in order, and records every request as passed', async () => {
    const model = createScriptedModel([
      { text: 'one', finishReason: 'length' },
      { reasoning: 'think', text: 'two', toolCalls: [{ toolName: 'read', input: { path: 'a' } }] },
    ])
    expect(model.specificationVersion).toBe('v3')
    expect([model.provider, model.modelId]).toEqual(['scripted', 'script'])
    expect(model.remaining).toBe(2)
    const first = requestOf('first')
    const generated = await model.doGenerate(first)
    expect(generated.content).toEqual([{ type: 'text', text: 'one' }])
    expect(generated.finishReason).toEqual({ unified: 'length', raw: undefined })
    const second = requestOf('second')
    const parts = await partsOf((await model.doStream(second)).stream)
    expect(parts.map((part) => part.type)).toEqual([
      'stream-start',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-end',
      'text-start',
      'text-delta',
      'text-end',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-end',
      'tool-call',
      'finish',
    ])
    expect(parts[1]).toEqual({ type: 'reasoning-start', id: '0' })
    expect(parts[4]).toEqual({ type: 'text-start', id: '1' })
    expect(parts[10]).toEqual({ type: 'tool-call', toolCallId: 'call_1', toolName: 'read', input: '{"path":"a"}' })
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'tool-calls' } })
    expect(model.requests).toEqual([first, second])
    expect(model.requests[0]).toBe(first)
    expect(model.remaining).toBe(0)
  })

  it('streams text in deltas of chunkSize characters (8 by default, at least 1), and an empty text as no delta', async () => {
    const deltas = async (chunkSize: number | undefined, text: string) => {
      const model = createScriptedModel([{ text }], chunkSize === undefined ? {} : { chunkSize })
      return (await partsOf((await model.doStream(requestOf())).stream)).flatMap((part) => (part.type === 'text-delta' ? [part.delta] : []))
    }
    expect(await deltas(undefined, 'streamed in parts')).toEqual(['streamed', ' in part', 's'])
    expect(await deltas(4, 'streamed')).toEqual(['stre', 'amed'])
    expect(await deltas(0, 'abc')).toEqual(['a', 'b', 'c'])
    expect(await deltas(4, '')).toEqual([])
  })

  it('the deltas of any text join to it, ceil(length / chunkSize) of them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), fc.integer({ min: 1, max: 20 }), async (text, chunkSize) => {
        const model = createScriptedModel([{ text }], { chunkSize })
        const deltas = (await partsOf((await model.doStream(requestOf())).stream)).flatMap((part) =>
          part.type === 'text-delta' ? [part.delta] : [],
        )
        expect(deltas.join('')).toBe(text)
        expect(deltas).toHaveLength(Math.ceil(text.length / chunkSize))
      }),
      { numRuns: 50 },
    )
  })

  it('names tool calls call_<n> across the whole script unless the script names them; a string input goes out as it is', async () => {
    const model = createScriptedModel([
      {
        toolCalls: [
          { toolName: 'a', input: { x: 1 } },
          { toolName: 'b', input: '{not json', toolCallId: 'mine' },
        ],
      },
      { toolCalls: [{ toolName: 'c', input: undefined }] },
    ])
    const first = await model.doGenerate(requestOf())
    const second = await model.doGenerate(requestOf())
    expect(first.content).toEqual([
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'a', input: '{"x":1}' },
      { type: 'tool-call', toolCallId: 'mine', toolName: 'b', input: '{not json' },
    ])
    expect(second.content).toEqual([{ type: 'tool-call', toolCallId: 'call_3', toolName: 'c', input: '{}' }])
    expect(first.finishReason.unified).toBe('tool-calls')
  })

  it('throws a scripted failure as an APICallError (retryable 503, else 400, or the given status), and an Error as it is', async () => {
    const own = new Error('own')
    const model = createScriptedModel(
      [{ error: 'overloaded', retryable: true }, { error: 'bad request' }, { error: 'gone', statusCode: 410 }, { error: own }],
      { provider: 'p', modelId: 'm' },
    )
    const failures = []
    for (let index = 0; index < 4; index += 1)
      failures.push(await Promise.resolve(model.doGenerate(requestOf())).catch((error: unknown) => error))
    const [retryable, plain, status, thrown] = failures as [APICallError, APICallError, APICallError, Error]
    expect(
      APICallError.isInstance(retryable) && retryable.isRetryable && retryable.statusCode === 503 && retryable.message === 'overloaded',
    ).toBe(true)
    expect(retryable.url).toBe('scripted://p/m')
    expect(APICallError.isInstance(plain) && !plain.isRetryable && plain.statusCode === 400).toBe(true)
    expect(status.statusCode).toBe(410)
    expect(thrown).toBe(own)
    expect(model.requests).toHaveLength(4)
  })

  it('calls a response function with the request and its 0-based index, and awaits it', async () => {
    const seen: [string, number][] = []
    const answer: ScriptedResponse = async (request, index) => {
      seen.push([requestSystem(request), index])
      return { text: requestSystem(request).includes('plan') ? 'planning' : 'doing' }
    }
    const model = createScriptedModel([answer, answer])
    expect((await model.doGenerate(requestOf('a', 'You plan.'))).content).toEqual([{ type: 'text', text: 'planning' }])
    expect((await model.doGenerate(requestOf('b'))).content).toEqual([{ type: 'text', text: 'doing' }])
    expect(seen).toEqual([
      ['You plan.', 0],
      ['', 1],
    ])
  })

  it('a response function that throws, at once or later, rejects the request with its error', async () => {
    const model = createScriptedModel([
      () => {
        throw new Error('at once')
      },
      async () => {
        throw new Error('later')
      },
    ])
    await expect(model.doStream(requestOf())).rejects.toThrow('at once')
    await expect(model.doGenerate(requestOf())).rejects.toThrow('later')
  })

  it('push() appends responses; a request past the script throws naming its number and the script length', async () => {
    const model = createScriptedModel()
    model.push({ text: 'one' }, { text: 'two' })
    expect(model.remaining).toBe(2)
    await model.doGenerate(requestOf())
    await model.doGenerate(requestOf())
    await expect(model.doGenerate(requestOf())).rejects.toThrow(
      'scripted model: no response left for request #3 (the script had 2 response(s); push more or shorten the scenario)',
    )
    expect(model.requests).toHaveLength(3)
  })

  it('an aborted request rejects with the signal reason, before taking a response or while a function still works', async () => {
    const model = createScriptedModel([{ text: 'kept' }, () => new Promise(() => {})])
    const before = new AbortController()
    const reason = new Error('stopped before')
    before.abort(reason)
    await expect(model.doGenerate({ ...requestOf(), abortSignal: before.signal })).rejects.toBe(reason)
    expect(model.remaining).toBe(2)
    await model.doGenerate(requestOf())
    const during = new AbortController()
    const pending = Promise.resolve(model.doStream({ ...requestOf(), abortSignal: during.signal })).catch((error: unknown) => error)
    during.abort()
    expect(await pending).toBeInstanceOf(DOMException)
  })

  it('requestSystem joins the system messages with a blank line, and is empty without one', () => {
    const request = {
      prompt: [{ role: 'system' as const, content: 'a' }, ...requestOf().prompt, { role: 'system' as const, content: 'b' }],
    }
    expect(requestSystem(request)).toBe('a\n\nb')
    expect(requestSystem(requestOf())).toBe('')
  })
})
