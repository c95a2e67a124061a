import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import { jsonSchema, tool, type ToolModelMessage } from 'ai'
import { APPROVAL_DENIED, APPROVAL_NOT_ANSWERED, PlanModeAgentError, createPlanModeAgent, pendingApprovals } from '@planmode/ai-sdk'
import { planGuardPlugin } from '@planmode/plan-guard'
import type { Session } from '@planmode/seams'
import { APPROVE, PLAN, compose, eventsOf, indexOf, types } from './support/compose.js'
import { scriptedMock } from './support/mock-model.js'

const GUARD_REFUSAL =
  'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A write tool that asks for approval (as the SDK's `needsApproval` does), recording what it wrote and what it was asked. */
function writeTool(needsApproval: boolean | ((input: { path: string }) => boolean) = true) {
  const writes: string[] = []
  const asked: string[] = []
  const write_file = tool({
    description: 'Writes a file.',
    inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    needsApproval: async ({ path }: { path: string }) => {
      asked.push(path)
      return typeof needsApproval === 'function' ? needsApproval({ path }) : needsApproval
    },
    execute: async ({ path }) => {
      writes.push(path)
      return `wrote ${path}`
    },
  })
  return { write_file, writes, asked }
}

/** The SDK's tool message answering approvals, as `convertToModelMessages` makes it of a `useChat` answer. */
function answer(...responses: { approvalId: string; approved: boolean; reason?: string }[]): ToolModelMessage {
  return { role: 'tool', content: responses.map((response) => ({ type: 'tool-approval-response', ...response })) }
}

/** The tool results a model request carries: call id → `text:` or `error-text:` and the value. */
function toolResultsOf(request: LanguageModelV3CallOptions): Record<string, string> {
  const results: Record<string, string> = {}
  for (const message of request.prompt) {
    if (message.role !== 'tool') continue
    for (const part of message.content) {
      if (part.type === 'tool-result' && (part.output.type === 'text' || part.output.type === 'error-text'))
        results[part.toolCallId] = `${part.output.type}: ${part.output.value}`
    }
  }
  return results
}

function approvalIdOf(session: Session): string {
  const request = eventsOf(session, 'ai-sdk/approval-request').at(-1)
  if (request === undefined) throw new Error('no approval request logged')
  return request.data.approvalId
}

describe("the SDK's tool approval (needsApproval) through the adapter", () => {
  it('a call that needs approval ends the call with the SDK’s request; the log keeps it; the next call approves, the tool runs and the model goes on', async () => {
    const host = compose()
    const session = await host.session()
    const { write_file, writes } = writeTool()
    const model = scriptedMock([{ calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] }, { text: 'Written.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file } })

    const first = await planner.generate('Write cli.ts.')
    const request = first.content.find((part) => part.type === 'tool-approval-request')
    expect(request).toMatchObject({ type: 'tool-approval-request', toolCall: { toolCallId: 'call-1-1', toolName: 'write_file' } })
    expect(writes).toEqual([])
    expect(types(session).slice(-4)).toEqual(['assistant/message', 'ai-sdk/approval-request', 'step/end', 'turn/end'])
    expect(eventsOf(session, 'turn/end').at(-1)?.data.reason).toBe('completed')
    expect(eventsOf(session, 'tool/result')).toEqual([])
    expect(pendingApprovals(session.events)).toEqual([
      { approvalId: request!.approvalId, toolCallId: 'call-1-1', toolName: 'write_file', input: { path: 'cli.ts' } },
    ])

    const second = await planner.generate(answer({ approvalId: request!.approvalId, approved: true }))
    expect(second.text).toBe('Written.')
    expect(writes).toEqual(['cli.ts'])
    const start = indexOf(session, (event) => event.type === 'turn/start' && event.data.turn === 2)
    expect(types(session).slice(start, start + 4)).toEqual(['turn/start', 'ai-sdk/approval-response', 'tool/result', 'step/start'])
    expect(eventsOf(session, 'ai-sdk/approval-response')[0]?.data).toEqual({
      approvalId: request!.approvalId,
      toolCallId: 'call-1-1',
      approved: true,
      answered: true,
    })
    expect(eventsOf(session, 'tool/result')[0]?.data).toMatchObject({
      toolCallId: 'call-1-1',
      isError: false,
      content: [{ type: 'text', text: 'wrote cli.ts' }],
    })
    // The model reads the call's result, after its call, as for any call.
    expect(toolResultsOf(model.requests[1]!)).toEqual({ 'call-1-1': 'text: wrote cli.ts' })
    expect(pendingApprovals(session.events)).toEqual([])
  })

  it('a denied call gets a failed result with the reason; a call that sends something else denies what it did not answer', async () => {
    const host = compose()
    const session = await host.session()
    const { write_file, writes } = writeTool()
    const model = scriptedMock([
      { calls: [{ name: 'write_file', input: { path: 'a.ts' } }] },
      { text: 'Not written.' },
      { calls: [{ name: 'write_file', input: { path: 'b.ts' } }] },
      { text: 'Moving on.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file } })
    await planner.generate('Write a.ts.')
    await planner.generate(answer({ approvalId: approvalIdOf(session), approved: false, reason: 'not now' }))
    expect(toolResultsOf(model.requests[1]!)).toEqual({ 'call-1-1': `error-text: ${APPROVAL_DENIED}: not now` })

    await planner.generate('Write b.ts.')
    await planner.generate('Never mind, tell me about the tests.')
    expect(writes).toEqual([])
    expect(
      eventsOf(session, 'ai-sdk/approval-response').map((event) => [event.data.approved, event.data.answered, event.data.reason]),
    ).toEqual([
      [false, true, 'not now'],
      [false, false, undefined],
    ])
    expect(toolResultsOf(model.requests[3]!)).toMatchObject({ 'call-3-1': `error-text: ${APPROVAL_NOT_ANSWERED}` })
  })

  it('an answer naming no waiting approval is refused before anything is logged; a part that is no approval response is a TypeError', async () => {
    const host = compose()
    const session = await host.session()
    const { write_file } = writeTool()
    const planner = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model: scriptedMock([{ calls: [{ name: 'write_file', input: { path: 'a.ts' } }] }]),
      tools: { write_file },
    })
    await planner.generate('Write a.ts.')
    const before = session.events.length
    const refused = await planner.generate(answer({ approvalId: 'forged', approved: true })).catch((error: unknown) => error)
    expect(PlanModeAgentError.isInstance(refused) && refused.code).toBe('UNKNOWN_APPROVAL')
    const result: ToolModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call-1-1', toolName: 'write_file', output: { type: 'text', value: 'x' } }],
    }
    await expect(planner.generate(result)).rejects.toThrow(TypeError)
    expect(session.events.length).toBe(before)
    expect(pendingApprovals(session.events)).toHaveLength(1)
  })

  it('needsApproval decides per call: a call it does not ask about runs at once', async () => {
    const host = compose()
    const session = await host.session()
    const { write_file, writes, asked } = writeTool(({ path }) => path.startsWith('src/'))
    const model = scriptedMock([{ calls: [{ name: 'write_file', input: { path: 'notes.md' } }] }, { text: 'Done.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file } })
    await planner.generate('Take a note.')
    expect(asked).toEqual(['notes.md'])
    expect(writes).toEqual(['notes.md'])
    expect(eventsOf(session, 'ai-sdk/approval-request')).toEqual([])
  })

  it('in plan mode, plan-guard refuses a call that is not read-only before anyone is asked to approve it', async () => {
    const host = compose({ answers: [APPROVE] })
    host.ctx.plugin(planGuardPlugin)
    const session = await host.session()
    const { write_file, writes } = writeTool()
    const model = scriptedMock([
      { calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] },
      { calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] },
      { calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file } })
    await planner.command('/plan')
    const result = await planner.generate('Add a --verbose flag.')
    // The refused call got the guard's text at once; only the call made after the approved plan asks.
    const results = eventsOf(session, 'tool/result').map((event) => event.data)
    expect(results[0]).toMatchObject({ toolCallId: 'call-1-1', isError: true, content: [{ type: 'text', text: GUARD_REFUSAL }] })
    expect(eventsOf(session, 'ai-sdk/approval-request').map((event) => event.data.toolCallId)).toEqual(['call-3-1'])
    expect(result.content.filter((part) => part.type === 'tool-approval-request').map((part) => part.toolCall.toolCallId)).toEqual([
      'call-3-1',
    ])
    expect(writes).toEqual([])
  })

  it('inside plan mode a tool plan-guard allows asks as usual; the mode when the answer comes decides whether it runs', async () => {
    const host = compose()
    host.ctx.plugin(planGuardPlugin, { allow: ['write_file'] })
    const session = await host.session()
    const { write_file, writes } = writeTool()
    const guarded = writeTool()
    const model = scriptedMock([
      { calls: [{ name: 'write_file', input: { path: 'plan-notes.md' } }] },
      { text: 'Noted.' },
      { calls: [{ name: 'edit_file', input: { path: 'cli.ts' } }] },
      { text: 'Refused, then.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file, edit_file: guarded.write_file } })
    await planner.command('/plan')
    await planner.generate('Keep notes while planning.')
    await planner.generate(answer({ approvalId: approvalIdOf(session), approved: true }))
    expect(writes).toEqual(['plan-notes.md'])

    // Asked in the default mode, answered after /plan: the guard refuses it when it would run.
    await planner.command('/plan off')
    await planner.generate('Edit cli.ts.')
    expect(pendingApprovals(session.events).map((request) => request.toolName)).toEqual(['edit_file'])
    await planner.command('/plan')
    await planner.generate(answer({ approvalId: approvalIdOf(session), approved: true }))
    expect(guarded.writes).toEqual([])
    expect(eventsOf(session, 'tool/result').at(-1)?.data).toMatchObject({ toolName: 'edit_file', isError: true })
    expect(eventsOf(session, 'tool/result').at(-1)?.data.content[0]?.text).toContain('edit_file is not available in plan mode')
  })

  it('streams: the request part passes through, and the answering stream opens with the call’s result', async () => {
    const host = compose()
    const session = await host.session()
    const { write_file, writes } = writeTool()
    const model = scriptedMock([{ calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] }, { text: 'Written.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { write_file } })
    const first: string[] = []
    for await (const part of (await planner.stream('Write cli.ts.')).fullStream) first.push(part.type)
    expect(first).toContain('tool-approval-request')
    await planner.idle()
    const parts: { type: string; toolCallId?: string; output?: unknown }[] = []
    for await (const part of (await planner.stream(answer({ approvalId: approvalIdOf(session), approved: true }))).fullStream)
      parts.push(part as (typeof parts)[number])
    expect(parts.slice(0, 2).map((part) => part.type)).toEqual(['start', 'tool-result'])
    expect(parts[1]).toMatchObject({
      toolCallId: 'call-1-1',
      output: { isError: false, content: [{ type: 'text', text: 'wrote cli.ts' }] },
    })
    await planner.idle()
    expect(writes).toEqual(['cli.ts'])
  })

  it('an approval outlives the process that asked: a new process over the JSONL log answers it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'planmode-ai-sdk-approval-'))
    dirs.push(dir)
    const a = compose({ dir })
    const sessionA = await a.session('s1')
    const first = writeTool()
    await createPlanModeAgent({
      ctx: a.ctx,
      session: sessionA,
      model: scriptedMock([{ calls: [{ name: 'write_file', input: { path: 'cli.ts' } }] }]),
      tools: { write_file: first.write_file },
    }).generate('Write cli.ts.')
    a.ctx.dispose()

    const b = compose({ dir })
    const sessionB = await b.open('s1')
    const [waiting] = pendingApprovals(sessionB.events)
    expect(waiting).toMatchObject({ toolName: 'write_file', input: { path: 'cli.ts' } })
    const second = writeTool()
    const model = scriptedMock([{ text: 'Written.' }])
    await createPlanModeAgent({ ctx: b.ctx, session: sessionB, model, tools: { write_file: second.write_file } }).generate(
      answer({ approvalId: waiting!.approvalId, approved: true }),
    )
    expect(second.writes).toEqual(['cli.ts'])
    expect(toolResultsOf(model.requests[0]!)).toEqual({ [waiting!.toolCallId]: 'text: wrote cli.ts' })
    b.ctx.dispose()
  })
})
