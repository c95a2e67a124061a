import { describe, expect, it } from 'vitest'
import { createConformanceModel } from '@planmode/scripted-model'
import { partsOf, requestOf } from './support.js'

describe('createConformanceModel', () => {
  it('answers doGenerate and doStream from one queue as provider conformance, a text part in one delta', async () => {
    const model = createConformanceModel([
      { text: 'one' },
      { text: 'a longer text than eight', toolCalls: [{ toolName: 'read', input: { path: 'a' } }] },
      { text: '' },
    ])
    expect([model.provider, model.modelId]).toEqual(['conformance', 'script'])
    const generated = await model.doGenerate(requestOf())
    expect(generated.content).toEqual([{ type: 'text', text: 'one' }])
    expect(generated.finishReason.unified).toBe('stop')
    const parts = await partsOf((await model.doStream(requestOf())).stream)
    expect(parts.slice(1, 4)).toEqual([
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'a longer text than eight' },
      { type: 'text-end', id: 'text-0' },
    ])
    expect(parts[7]).toEqual({ type: 'tool-call', toolCallId: 'conformance_call_1', toolName: 'read', input: '{"path":"a"}' })
    const empty = await partsOf((await model.doStream(requestOf())).stream)
    expect(empty.filter((part) => part.type === 'text-delta')).toEqual([{ type: 'text-delta', id: 'text-0', delta: '' }])
    expect(model.requests).toHaveLength(3)
    expect(model.remaining).toBe(0)
  })

  it('sends every tool input as JSON text, a string too', async () => {
    const model = createConformanceModel([
      {
        toolCalls: [
          { toolName: 't', input: 'raw' },
          { toolName: 't', input: undefined },
        ],
      },
    ])
    expect((await model.doGenerate(requestOf())).content).toEqual([
      { type: 'tool-call', toolCallId: 'conformance_call_1', toolName: 't', input: '"raw"' },
      { type: 'tool-call', toolCallId: 'conformance_call_2', toolName: 't', input: '{}' },
    ])
  })

  it('throws for a request past the script and records it as an overrun', async () => {
    const model = createConformanceModel([{ text: 'one' }])
    await model.doGenerate(requestOf())
    await expect(model.doGenerate(requestOf())).rejects.toThrow('conformance model: no scripted response left for request #2')
    await expect(model.doStream(requestOf())).rejects.toThrow('#3')
    expect(model.overruns).toEqual([2, 3])
  })

  it('records and rethrows what a scripted function throws, at once or later', async () => {
    const early = new Error('at once')
    const late = new Error('later')
    const model = createConformanceModel([
      () => {
        throw early
      },
      async () => {
        throw late
      },
      { text: 'fine' },
    ])
    await expect(model.doStream(requestOf())).rejects.toBe(early)
    await expect(model.doGenerate(requestOf())).rejects.toBe(late)
    await model.doGenerate(requestOf())
    expect(model.scriptErrors).toEqual([early, late])
  })

  it('lets a scripted function run to its end when the request is aborted (the kit decides when a case ends)', async () => {
    let finish!: () => void
    const model = createConformanceModel([() => new Promise((resolve) => (finish = () => resolve({ text: 'late' })))])
    const controller = new AbortController()
    const pending = model.doGenerate({ ...requestOf(), abortSignal: controller.signal })
    controller.abort()
    finish()
    expect((await pending).content).toEqual([{ type: 'text', text: 'late' }])
  })
})
