import { describe, expectTypeOf, it } from 'vitest'
import { Context } from '@planmode/context'
import type { ToolAnnotations, ToolDefinition, ToolExecuteDecision, ToolExecutePayload, ToolSchema } from '@planmode/seams'

describe('tool/execute and annotations', () => {
  it('types the tool/execute waterfall: listeners await next and may refuse', () => {
    const ctx = new Context()
    ctx.on('tool/execute', async (payload, next) => {
      expectTypeOf(payload).toEqualTypeOf<ToolExecutePayload>()
      expectTypeOf(payload.tool.annotations).toEqualTypeOf<ToolAnnotations | undefined>()
      if (payload.execution.agent === undefined) return next()
      const decision = await next()
      expectTypeOf(decision).toEqualTypeOf<ToolExecuteDecision>()
      return payload.tool.annotations?.readOnlyHint === true ? decision : { kind: 'refuse', message: `${payload.name} is refused` }
    })
    // @ts-expect-error a refusal needs a message
    ctx.on('tool/execute', async () => ({ kind: 'refuse' }))
    // @ts-expect-error the decision is run or refuse
    ctx.on('tool/execute', async () => ({ kind: 'skip' }))
  })

  it('lets a tool declare MCP-style hints that the catalog never carries', () => {
    const tool: ToolDefinition<{ path: string }, string> = {
      name: 'read',
      description: 'Reads a file.',
      parameters: { type: 'object' },
      annotations: { readOnlyHint: true },
      execute: ({ path }) => path,
    }
    expectTypeOf(tool.annotations).toEqualTypeOf<ToolAnnotations | undefined>()
    expectTypeOf<keyof ToolSchema>().toEqualTypeOf<'name' | 'description' | 'parameters'>()
    // @ts-expect-error hints are booleans
    const bad: ToolAnnotations = { readOnlyHint: 'yes' }
    void bad
  })
})
