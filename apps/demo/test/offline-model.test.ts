import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { LanguageModelV3FunctionTool, LanguageModelV3Prompt } from '@ai-sdk/provider'
import { afterEach, describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { foldPlanning } from '../src/model/planning-state.js'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'
import { createWorkspaceTools } from '../src/workspace/workspace-tools.js'

const SECTION = 'PLAN MODE IS ON. Explore read-only and submit a plan with exit_plan_mode.'
const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** A minimal loop in the shape of the host's, to exercise the model alone. */
async function simulate(goal: string, reviews: { selected: string[]; custom?: string }[]) {
  const root = copySampleWorkspace()
  roots.push(root)
  const workspaceTools = createWorkspaceTools(root)
  const tools: LanguageModelV3FunctionTool[] = [
    ...workspaceTools.map((tool) => ({ type: 'function' as const, name: tool.name, inputSchema: tool.parameters as never })),
    { type: 'function', name: 'exit_plan_mode', inputSchema: { type: 'object' } },
  ]
  const model = createOfflineModel({ planSection: SECTION })
  let planMode = true
  const history: LanguageModelV3Prompt = [{ role: 'user', content: [{ type: 'text', text: goal }] }]
  const trace: string[] = []
  for (let step = 0; step < 20; step++) {
    const system = planMode ? `You are a coding agent.\n\n${SECTION}` : 'You are a coding agent.'
    const result = await model.doGenerate({ prompt: [{ role: 'system', content: system }, ...history], tools })
    const calls = result.content.flatMap((part) => (part.type === 'tool-call' ? [part] : []))
    const text = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
    history.push({
      role: 'assistant',
      content: [
        ...(text === '' ? [] : [{ type: 'text' as const, text }]),
        ...calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.toolName, input: JSON.parse(call.input) })),
      ],
    })
    if (calls.length === 0) {
      trace.push(`text:${text.slice(0, 40)}`)
      break
    }
    let leave = false
    const results = []
    for (const call of calls) {
      const input = JSON.parse(call.input)
      trace.push(call.toolName === 'exit_plan_mode' ? 'exit' : `${call.toolName}${input.path ? ` ${input.path}` : ''}`)
      let value: string
      let isError = false
      if (call.toolName === 'exit_plan_mode') {
        trace.push(`plan:${input.plan.split('\n')[0]}`)
        const review = reviews.shift()!
        if (review.selected[0] === 'Approve') {
          value = 'Plan approved.'
          leave = true
        } else {
          isError = true
          value = review.custom
            ? `Error: The user chose to keep planning; their feedback: ${review.custom}`
            : 'Error: The user chose to keep planning; revise the plan and present it again.'
        }
      } else {
        const tool = workspaceTools.find((candidate) => candidate.name === call.toolName)!
        try {
          const output = await (tool.execute as (input: unknown, execution: unknown) => unknown)(input, {})
          value = (tool.toModelOutput as (output: unknown) => string)(output)
        } catch (error) {
          isError = true
          value = `Error: ${(error as Error).message}`
        }
      }
      results.push({ type: 'tool-result' as const, toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'text' as const, value } })
      if (isError) trace.push(`error:${value.slice(0, 50)}`)
    }
    history.push({ role: 'tool', content: results })
    if (leave) planMode = false
  }
  return { root, trace, history }
}

describe('offline planning model', () => {
  it('explores, plans, revises on feedback, and carries out the approved plan', async () => {
    const { root, trace, history } = await simulate('Add due dates to tasks, settable from the command line.', [
      { selected: ['Keep planning'], custom: 'Also flag overdue tasks in the list output.' },
      { selected: ['Approve'] },
    ])
    expect(trace.slice(0, 5)).toEqual(['list_files', 'read_file src/tasks.js', 'read_file src/format.js', 'read_file src/cli.js', 'search'])
    expect(trace).toContain('plan:# Plan: due dates for tasks')
    const plans = history.flatMap((message) =>
      message.role === 'assistant'
        ? message.content.flatMap((part) => (part.type === 'tool-call' && part.toolName === 'exit_plan_mode' ? [(part.input as { plan: string }).plan] : []))
        : [],
    )
    expect(plans).toHaveLength(2)
    expect(plans[0]).not.toMatch(/overdue/i)
    expect(plans[1]).toMatch(/Revision 2/)
    expect(plans[1]).toMatch(/## Feedback addressed\n- "Also flag overdue tasks in the list output.": /)
    expect(trace.filter((entry) => entry.startsWith('error:')).length).toBe(1)
    expect(trace.at(-1)).toMatch(/^text:Done\./)
    expect(readFileSync(join(root, 'src/format.js'), 'utf8')).toContain('OVERDUE')
    expect(readFileSync(join(root, 'test/due-dates.test.js'), 'utf8')).toContain('isOverdue')
    const tests = spawnSync(process.execPath, ['--test'], { cwd: root, encoding: 'utf8' })
    expect(tests.stdout).toMatch(/# pass 8/)
    expect(tests.status).toBe(0)
  })

  it('answers plain chat plainly outside plan mode', async () => {
    const model = createOfflineModel({ planSection: SECTION })
    const result = await model.doGenerate({
      prompt: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
      ],
    })
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Hello!/) }])
    expect(result.finishReason.unified).toBe('stop')
  })

  it('streams the same decision it generates', async () => {
    const model = createOfflineModel({ planSection: SECTION })
    const options = {
      prompt: [
        { role: 'system' as const, content: SECTION },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'Add due dates' }] },
      ],
    }
    const { stream } = await model.doStream(options)
    const parts = []
    for await (const part of stream as unknown as AsyncIterable<{ type: string }>) parts.push(part)
    expect(parts.map((part) => part.type)).toEqual(
      expect.arrayContaining(['stream-start', 'text-delta', 'tool-input-start', 'tool-call', 'finish']),
    )
    const generated = await model.doGenerate(options)
    expect(generated.content.find((part) => part.type === 'tool-call')).toMatchObject({ toolName: 'list_files' })
  })

  it('reads a mode change notice in the light of what came before it', async () => {
    const model = createOfflineModel({ planSection: SECTION })
    const text = async (system: string, prompt: LanguageModelV3Prompt) => {
      const result = await model.doGenerate({ prompt: [{ role: 'system', content: system }, ...prompt] })
      return result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
    }
    const goal: LanguageModelV3Prompt = [{ role: 'user', content: [{ type: 'text', text: 'Add due dates to tasks' }] }]
    const explored: LanguageModelV3Prompt = [
      ...goal,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'list_files', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'list_files', output: { type: 'text', value: 'src/tasks.js' } }] },
    ]
    const notice = (text: string): LanguageModelV3Prompt[number] => ({ role: 'user', content: [{ type: 'text', text }] })
    // /plan off while planning: the model waits instead of answering an old message.
    expect(await text('You are a coding agent.', [...explored, notice('The user switched this session back to the default mode.')])).toMatch(/^Plan mode is off, so I'll wait/)
    // /plan while carrying out an approved plan: the model stops changing files.
    const implementing: LanguageModelV3Prompt = [
      ...explored,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'exit_plan_mode', input: { plan: '# Plan' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c2', toolName: 'exit_plan_mode', output: { type: 'text', value: 'Approved.' } }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c3', toolName: 'write_file', input: { path: 'a', content: 'b' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c3', toolName: 'write_file', output: { type: 'text', value: 'Wrote.' } }] },
    ]
    expect(await text(SECTION, [...implementing, notice('The user switched this session to plan mode.')])).toMatch(/^Plan mode is on again, so I've stopped/)
  })
})

describe('what the offline model reads from the review decisions (SPEC §10 texts)', () => {
  const plan = '# Plan: due dates for tasks\n\n1. a\n'
  const submitted = (resultText: string, isError: boolean) =>
    foldPlanning([
      { kind: 'user', text: 'Add due dates to tasks', notice: false },
      { kind: 'assistant', text: '', calls: [{ id: 'c1', name: 'list_files', input: {} }] },
      { kind: 'tool', results: [{ id: 'c1', name: 'list_files', text: 'src/tasks.js', isError: false }] },
      { kind: 'assistant', text: '', calls: [{ id: 'c2', name: 'exit_plan_mode', input: { plan } }] },
      { kind: 'tool', results: [{ id: 'c2', name: 'exit_plan_mode', text: resultText, isError }] },
    ]).episode!

  it('line comments after the keep-planning text become feedback, with or without custom text', () => {
    const withFeedback = submitted('The user chose to keep planning; their feedback: flag overdue\n- line 3: keep ISO dates\n- line 1: shorter', true)
    expect(withFeedback.review).toBe('keep-planning')
    expect(withFeedback.feedback).toEqual(['flag overdue', 'line 3: keep ISO dates', 'line 1: shorter'])
    const commentsOnly = submitted('The user chose to keep planning; revise the plan and present it again.\n- line 3: keep ISO dates', true)
    expect(commentsOnly.feedback).toEqual(['line 3: keep ISO dates'])
    expect(commentsOnly.needsRevision).toBe(true)
  })

  it('an edited approval makes the edit the plan; Stop planning closes the episode', () => {
    const edit = '# Mine\n\n1. only this'
    const approved = submitted(`The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:\n\n${edit}`, false)
    expect(approved.approved).toBe(true)
    expect(approved.approvedEdit).toBe(edit)
    expect(submitted('The user approved the plan and plan mode is now off.', false).approvedEdit).toBeUndefined()
    const stopped = submitted(
      "Error: The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message.",
      true,
    )
    expect(stopped.review).toBe('stopped')
    expect(stopped.approved).toBe(false)
  })
})
