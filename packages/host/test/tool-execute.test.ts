import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import type { Plugin } from '@planmode/context'
import { createScriptedModel, hostPlugin, toolsPlugin } from '@planmode/host'
import type { ScriptedResponse } from '@planmode/host'
import type { SessionEvent, ToolDefinition, ToolExecuteDecision, ToolExecutePayload } from '@planmode/seams'
import { newContext, recordingLogger } from './helpers.js'

const execution = { signal: new AbortController().signal, toolCallId: 'c1' }
const errorText = (message: string) => [{ type: 'text', text: `Error: ${message}` }]

/** A `write` tool that records the inputs it ran with. */
function writeTool(
  runs: unknown[],
  extra: Partial<ToolDefinition<{ path: string }, string>> = {},
): ToolDefinition<{ path: string }, string> {
  return {
    name: 'write',
    description: 'Writes a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: (input) => {
      runs.push(input)
      return `wrote ${input.path}`
    },
    ...extra,
  }
}

function setup() {
  const { ctx, logger } = newContext()
  ctx.plugin(toolsPlugin)
  const runs: unknown[] = []
  const tools = ctx.require('tools')
  tools.register(writeTool(runs))
  return { ctx, logger, tools, runs }
}

describe('tool/execute waterfall in the tool runtime', () => {
  it('hands each listener its own run decision: mutating it in one registry changes nothing elsewhere', async () => {
    const first = setup()
    first.ctx.on('tool/execute', async (_payload, next) => {
      const decision = (await next()) as { kind: string; message?: string }
      try {
        decision.kind = 'refuse'
        decision.message = 'poisoned'
      } catch {
        // frozen: the listener's own call fails closed below, nothing else does
      }
      return decision as ToolExecuteDecision
    })
    await first.tools.execute('write', { path: 'a' }, execution)
    const second = setup()
    second.ctx.on('tool/execute', (_payload, next) => next())
    expect(await second.tools.execute('write', { path: 'b' }, execution)).toMatchObject({ isError: false })
    expect(second.runs).toEqual([{ path: 'b' }])
  })

  it('a call cancelled while the waterfall ran is cancelled even when a listener refused it', async () => {
    const { ctx, tools, runs } = setup()
    const controller = new AbortController()
    ctx.on('tool/execute', async () => {
      controller.abort()
      return { kind: 'refuse', message: 'no' }
    })
    expect(await tools.execute('write', { path: 'a' }, { signal: controller.signal, toolCallId: 'c2' })).toEqual({
      isError: true,
      content: errorText('the call was cancelled before it started'),
    })
    expect(runs).toEqual([])
  })

  it('runs the tool when no listener is registered', async () => {
    const { tools, runs } = setup()
    expect(await tools.execute('write', { path: 'a' }, execution)).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'wrote a' }],
      value: 'wrote a',
    })
    expect(runs).toEqual([{ path: 'a' }])
  })

  it('tells listeners the name, validated input, registered tool and execution, and runs on run', async () => {
    const { ctx, tools, runs } = setup()
    const seen: ToolExecutePayload[] = []
    ctx.on('tool/execute', async (payload, next) => {
      seen.push(payload)
      const decision = await next()
      expect(decision).toEqual({ kind: 'run' })
      return decision
    })
    const result = await tools.execute('write', { path: 'a' }, execution)
    expect(result.isError).toBe(false)
    expect(runs).toEqual([{ path: 'a' }])
    expect(seen).toHaveLength(1)
    expect(seen[0]!.name).toBe('write')
    expect(seen[0]!.input).toEqual({ path: 'a' })
    expect(seen[0]!.tool).toBe(tools.get('write'))
    expect(seen[0]!.execution).toBe(execution)
  })

  it('a refusal fails the call with Error: <message> and does not run the tool', async () => {
    const { ctx, tools, runs } = setup()
    ctx.on('tool/execute', async () => ({ kind: 'refuse', message: 'write is refused here' }))
    expect(await tools.execute('write', { path: 'a' }, execution)).toEqual({ isError: true, content: errorText('write is refused here') })
    expect(runs).toEqual([])
  })

  it('an outer listener that refuses without next() keeps inner listeners from seeing the call', async () => {
    const { ctx, tools, runs } = setup()
    const inner: string[] = []
    ctx.on('tool/execute', (payload, next) => {
      inner.push(payload.name)
      return next()
    })
    ctx.on('tool/execute', async () => ({ kind: 'refuse', message: 'no' }), { prepend: true })
    expect((await tools.execute('write', { path: 'a' }, execution)).content).toEqual(errorText('no'))
    expect(inner).toEqual([])
    expect(runs).toEqual([])
  })

  it('an outer listener may turn an inner refusal back into run', async () => {
    const { ctx, tools, runs } = setup()
    ctx.on('tool/execute', async () => ({ kind: 'refuse', message: 'inner says no' }))
    ctx.on(
      'tool/execute',
      async (_payload, next) => {
        const decision = await next()
        return decision.kind === 'refuse' ? { kind: 'run' } : decision
      },
      { prepend: true },
    )
    expect((await tools.execute('write', { path: 'a' }, execution)).isError).toBe(false)
    expect(runs).toEqual([{ path: 'a' }])
  })

  it('runs the tool with the original call whatever payload a listener passes downstream', async () => {
    const { ctx, tools, runs } = setup()
    const downstream: unknown[] = []
    ctx.on('tool/execute', (payload, next) => next({ ...payload, input: { path: 'replaced' } }))
    ctx.on('tool/execute', (payload, next) => {
      downstream.push(payload.input)
      return next()
    })
    await tools.execute('write', { path: 'a' }, execution)
    expect(downstream).toEqual([{ path: 'replaced' }])
    expect(runs).toEqual([{ path: 'a' }])
  })

  it('a listener that throws fails the call closed: Error: <its message>, logged, the tool does not run', async () => {
    const { ctx, logger, tools, runs } = setup()
    const dispose = ctx.on('tool/execute', () => {
      throw new Error('policy store unreachable')
    })
    expect(await tools.execute('write', { path: 'a' }, execution)).toEqual({
      isError: true,
      content: errorText('policy store unreachable'),
    })
    expect(runs).toEqual([])
    expect(logger.lines).toContainEqual({
      level: 'error',
      message: 'tool write: a tool/execute listener threw; the call fails closed and the tool does not run',
    })
    dispose()
    ctx.on('tool/execute', async (_payload, next) => {
      await next()
      throw 'not an Error'
    })
    expect((await tools.execute('write', { path: 'b' }, execution)).content).toEqual(errorText('not an Error'))
    expect(runs).toEqual([])
  })

  it('a rejected listener promise fails the call closed too', async () => {
    const { ctx, tools, runs } = setup()
    ctx.on('tool/execute', () => Promise.reject(new Error('async failure')))
    expect((await tools.execute('write', { path: 'a' }, execution)).content).toEqual(errorText('async failure'))
    expect(runs).toEqual([])
  })

  it.each([
    ['undefined', undefined],
    ['an unknown kind', { kind: 'skip' }],
    ['a refusal without a message', { kind: 'refuse' }],
  ])('a decision that is %s fails the call closed', async (_label, decision) => {
    const { ctx, logger, tools, runs } = setup()
    ctx.on('tool/execute', (async () => decision) as unknown as () => Promise<ToolExecuteDecision>)
    expect((await tools.execute('write', { path: 'a' }, execution)).content).toEqual(
      errorText('the call to tool "write" was refused by an invalid tool/execute decision'),
    )
    expect(runs).toEqual([])
    expect(logger.lines.some((line) => line.level === 'error' && line.message.includes('neither run nor refuse'))).toBe(true)
  })

  it('is not run for an unknown tool, invalid arguments or a call cancelled before it started', async () => {
    const { ctx, tools } = setup()
    const seen: string[] = []
    ctx.on('tool/execute', (payload, next) => {
      seen.push(payload.name)
      return next()
    })
    expect((await tools.execute('nope', {}, execution)).content).toEqual(errorText('unknown tool "nope"'))
    expect((await tools.execute('write', { path: 3 }, execution)).isError).toBe(true)
    const aborted = new AbortController()
    aborted.abort()
    expect((await tools.execute('write', { path: 'a' }, { signal: aborted.signal, toolCallId: 'c2' })).content).toEqual(
      errorText('the call was cancelled before it started'),
    )
    expect(seen).toEqual([])
  })

  it('a call cancelled while the waterfall runs does not start', async () => {
    const { ctx, tools, runs } = setup()
    const controller = new AbortController()
    ctx.on('tool/execute', async (_payload, next) => {
      controller.abort()
      return next()
    })
    expect((await tools.execute('write', { path: 'a' }, { signal: controller.signal, toolCallId: 'c3' })).content).toEqual(
      errorText('the call was cancelled before it started'),
    )
    expect(runs).toEqual([])
  })

  it('a listener is removed with its plugin', async () => {
    const { ctx, tools, runs } = setup()
    const refuser: Plugin = {
      name: 'refuser',
      apply(child) {
        child.on('tool/execute', async () => ({ kind: 'refuse', message: 'refused' }))
      },
    }
    const fiber = ctx.plugin(refuser)
    expect((await tools.execute('write', { path: 'a' }, execution)).isError).toBe(true)
    fiber.dispose()
    expect((await tools.execute('write', { path: 'b' }, execution)).isError).toBe(false)
    expect(runs).toEqual([{ path: 'b' }])
  })

  it('schemas() carries no annotations: the catalog is byte-identical with and without them', () => {
    const plain = newContext().ctx
    plain.plugin(toolsPlugin)
    plain.require('tools').register(writeTool([]))
    const annotated = newContext().ctx
    annotated.plugin(toolsPlugin)
    annotated.require('tools').register(writeTool([], { annotations: { readOnlyHint: false, destructiveHint: true } }))
    expect(JSON.stringify(annotated.require('tools').schemas())).toBe(JSON.stringify(plain.require('tools').schemas()))
    expect(Object.keys(annotated.require('tools').schemas()[0]!)).toEqual(['name', 'description', 'parameters'])
    expect(annotated.require('tools').get('write')!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true })
  })
})

describe('tool/execute through the agent loop', () => {
  function host(script: ScriptedResponse[]) {
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    const model = createScriptedModel(script)
    ctx.plugin(hostPlugin, { model, retryDelayMs: 0 })
    const runs: unknown[] = []
    ctx.require('tools').register(writeTool(runs))
    return { ctx, model, runs, sessions: ctx.require('sessions'), agents: ctx.require('agents') }
  }

  it('a refused call is logged as a failed tool/result the model reads, and the tool does not run', async () => {
    const { ctx, model, runs, sessions, agents } = host([
      { toolCalls: [{ toolName: 'write', input: { path: 'a.txt' }, toolCallId: 't1' }] },
      { text: 'I could not write.' },
    ])
    const agentsSeen: (string | undefined)[] = []
    ctx.on('tool/execute', async (payload, next) => {
      agentsSeen.push(payload.execution.agent?.id)
      return payload.execution.toolCallId === 't1' ? { kind: 'refuse', message: 'write is not allowed now' } : next()
    })
    const session = await sessions.create()
    const agent = agents.create({ session, id: 'agent-1' })
    await agent.prompt('write a.txt')
    expect(runs).toEqual([])
    expect(agentsSeen).toEqual(['agent-1'])
    const results = session.events.filter((event): event is SessionEvent<'tool/result'> => event.type === 'tool/result')
    expect(results.map((event) => event.data)).toEqual([
      { toolCallId: 't1', toolName: 'write', isError: true, content: errorText('write is not allowed now') },
    ])
    const second = JSON.stringify(model.requests[1]!.prompt)
    expect(second).toContain('Error: write is not allowed now')
  })

  it('the request headers are the same with and without a listener', async () => {
    const script = (): ScriptedResponse[] => [{ toolCalls: [{ toolName: 'write', input: { path: 'a' } }] }, { text: 'done' }]
    const headers = async (listen: boolean) => {
      const { ctx, sessions, agents } = host(script())
      if (listen) ctx.on('tool/execute', async () => ({ kind: 'refuse', message: 'no' }))
      const session = await sessions.create()
      await agents.create({ session }).prompt('go')
      return session.events
        .filter((event) => event.type === 'request/header')
        .map((event) => JSON.stringify({ ...(event.data as object), time: 0 }))
    }
    expect(await headers(true)).toEqual(await headers(false))
  })
})
