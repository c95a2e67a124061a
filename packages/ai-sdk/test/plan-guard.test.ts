import { describe, expect, it } from 'vitest'
import { jsonSchema, tool } from 'ai'
import { createPlanModeAgent } from '@planmode/ai-sdk'
import { planGuardPlugin } from '@planmode/plan-guard'
import { APPROVE, PLAN, compose, eventsOf } from './support/compose.js'
import { scriptedMock } from './support/mock-model.js'

describe('plan-guard through the adapter (every call goes through the tool/execute waterfall)', () => {
  it('refuses a host AI SDK tool in plan mode with the exact text, runs it after the approved plan', async () => {
    const host = compose({ answers: [APPROVE] })
    host.ctx.plugin(planGuardPlugin)
    const session = await host.session()
    const writes: string[] = []
    const write_file = tool({
      description: 'Writes a file.',
      inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
      execute: async ({ path }) => {
        writes.push(path)
        return 'written'
      },
    })
    const model = scriptedMock([
      { calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] },
      { calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] },
      { calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] },
      { text: 'Done.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file } })
    await planner.command('/plan')
    await planner.generate('Add a --verbose flag.')

    const results = eventsOf(session, 'tool/result').map((event) => event.data)
    expect(results[0]).toMatchObject({
      toolName: 'write_file',
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.',
        },
      ],
    })
    expect(results[1]).toMatchObject({ toolName: 'exit_plan_mode', isError: false })
    expect(results[2]).toMatchObject({ toolName: 'write_file', isError: false, content: [{ type: 'text', text: 'written' }] })
    expect(writes).toEqual(['cli.ts'])
    // The catalog never changed (the headers differ only in the system text the guidance left).
    const headers = eventsOf(session, 'request/header').map((event) => event.data)
    expect(new Set(headers.map((header) => JSON.stringify(header.tools))).size).toBe(1)
  })
})
