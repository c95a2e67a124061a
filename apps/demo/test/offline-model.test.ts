import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { LanguageModelV3FunctionTool, LanguageModelV3Prompt } from '@ai-sdk/provider'
import { afterEach, describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { asksToPlanFirst, carelessPath, goalOf } from '../src/model/plan-first.js'
import { foldPlanning } from '../src/model/planning-state.js'
import { readPrompt } from '../src/model/prompt-reader.js'
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
        ...calls.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: JSON.parse(call.input),
        })),
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
      results.push({
        type: 'tool-result' as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: 'text' as const, value },
      })
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
        ? message.content.flatMap((part) =>
            part.type === 'tool-call' && part.toolName === 'exit_plan_mode' ? [(part.input as { plan: string }).plan] : [],
          )
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
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'list_files', output: { type: 'text', value: 'src/tasks.js' } }],
      },
    ]
    const notice = (text: string): LanguageModelV3Prompt[number] => ({ role: 'user', content: [{ type: 'text', text }] })
    // /plan off while planning: the model waits instead of answering an old message.
    expect(
      await text('You are a coding agent.', [...explored, notice('The user switched this session back to the default mode.')]),
    ).toMatch(/^Plan mode is off, so I'll wait/)
    // /plan while carrying out an approved plan: the model stops changing files.
    const implementing: LanguageModelV3Prompt = [
      ...explored,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'exit_plan_mode', input: { plan: '# Plan' } }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c2', toolName: 'exit_plan_mode', output: { type: 'text', value: 'Approved.' } }],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c3', toolName: 'write_file', input: { path: 'a', content: 'b' } }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c3', toolName: 'write_file', output: { type: 'text', value: 'Wrote.' } }],
      },
    ]
    expect(await text(SECTION, [...implementing, notice('The user switched this session to plan mode.')])).toMatch(
      /^Plan mode is on again, so I've stopped/,
    )
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
    const withFeedback = submitted(
      'The user chose to keep planning; their feedback: flag overdue\n- line 3: keep ISO dates\n- line 1: shorter',
      true,
    )
    expect(withFeedback.review).toBe('keep-planning')
    expect(withFeedback.feedback).toEqual(['flag overdue', 'line 3: keep ISO dates', 'line 1: shorter'])
    const commentsOnly = submitted('The user chose to keep planning; revise the plan and present it again.\n- line 3: keep ISO dates', true)
    expect(commentsOnly.feedback).toEqual(['line 3: keep ISO dates'])
    expect(commentsOnly.needsRevision).toBe(true)
  })

  it('an edited approval makes the edit the plan; Stop planning closes the episode', () => {
    const edit = '# Mine\n\n1. only this'
    const approved = submitted(
      `The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:\n\n${edit}`,
      false,
    )
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

describe('plan first: the offline model asks to enter plan mode (SPEC §12)', () => {
  const tools = [
    { type: 'function' as const, name: 'list_files', inputSchema: { type: 'object' } as never },
    { type: 'function' as const, name: 'exit_plan_mode', inputSchema: { type: 'object' } as never },
    { type: 'function' as const, name: 'enter_plan_mode', inputSchema: { type: 'object' } as never },
  ]
  const model = createOfflineModel({ planSection: SECTION })
  const step = async (system: string, prompt: LanguageModelV3Prompt, withTools = tools) => {
    const result = await model.doGenerate({ prompt: [{ role: 'system', content: system }, ...prompt], tools: withTools })
    return {
      text: result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''),
      calls: result.content.flatMap((part) =>
        part.type === 'tool-call' ? [{ name: part.toolName, input: JSON.parse(part.input) as Record<string, unknown> }] : [],
      ),
    }
  }
  const user = (text: string): LanguageModelV3Prompt[number] => ({ role: 'user', content: [{ type: 'text', text }] })
  const ask: LanguageModelV3Prompt = [user("Let's plan first: add a clear command.")]
  const entered = (value: string, isError = false): LanguageModelV3Prompt => [
    ...ask,
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'enter_plan_mode', input: { reason: 'r' } }] },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'enter_plan_mode',
          output: isError ? { type: 'error-text', value } : { type: 'text', value },
        },
      ],
    },
  ]
  const AGREED = 'The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.'

  it('recognises a request to plan first, and takes the goal out of it', () => {
    for (const text of [
      "Let's plan first: add a clear command",
      'plan it first: add a clear command',
      'Add a clear command, but plan it first.',
      'Make a plan to add a clear command',
      'let us plan: add a clear command',
    ]) {
      expect(asksToPlanFirst(text), text).toBe(true)
      expect(goalOf(text), text).toBe('Add a clear command')
    }
    for (const text of ['Add a clear command', 'What is the plan?', 'the planet first']) expect(asksToPlanFirst(text), text).toBe(false)
    expect(goalOf('Add a clear command.')).toBe('Add a clear command.')
    // Nothing but the request: the text stays as it is.
    expect(goalOf("Let's plan first.")).toBe("Let's plan first.")
  })

  it('in the default mode calls enter_plan_mode with a reason naming the goal; without the tool it points to /plan', async () => {
    const asked = await step('You are a coding agent.', ask)
    expect(asked.calls).toEqual([
      {
        name: 'enter_plan_mode',
        input: { reason: expect.stringMatching(/^You asked to plan first: Add a clear command\. In plan mode I only read/) },
      },
    ])
    const without = await step(
      'You are a coding agent.',
      ask,
      tools.filter((tool) => tool.name !== 'enter_plan_mode'),
    )
    expect(without.calls).toEqual([])
    expect(without.text).toContain('Send `/plan Add a clear command`')
    // Already in plan mode: it just plans.
    expect((await step(`You are a coding agent.\n\n${SECTION}`, ask)).calls).toEqual([{ name: 'list_files', input: {} }])
  })

  it('after entry, explores and plans the goal, with the guidance in the system prompt or as a transcript message', async () => {
    expect((await step(`You are a coding agent.\n\n${SECTION}`, entered(AGREED))).calls).toEqual([{ name: 'list_files', input: {} }])
    // placement 'transcript': the system prompt never changes; the guidance arrives as a user message after the result.
    const guided = [...entered(AGREED), user(SECTION)]
    expect((await step('You are a coding agent.', guided)).calls).toEqual([{ name: 'list_files', input: {} }])
    const listed: LanguageModelV3Prompt = [
      ...guided,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'list_files', input: {} }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c2', toolName: 'list_files', output: { type: 'text', value: 'README.md' } }],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c3', toolName: 'read_file', input: { path: 'README.md' } }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c3', toolName: 'read_file', output: { type: 'text', value: '# demo' } }],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c4', toolName: 'search', input: { query: 'clear' } }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c4', toolName: 'search', output: { type: 'text', value: 'No matches.' } }],
      },
    ]
    const planned = await step('You are a coding agent.', listed)
    expect(planned.calls).toEqual([
      { name: 'exit_plan_mode', input: { plan: expect.stringMatching(/^# Plan: Add a clear command\n\nGoal: Add a clear command\./) } },
    ])
    // The guidance message is not the user's goal or feedback.
    const state = foldPlanning(readPrompt(listed, SECTION).items)
    expect(state.episode?.goal).toBe('Add a clear command.')
    expect(state.episode?.feedback).toEqual([])
    expect(state.transcriptPlanMode).toBe(true)
  })

  it('reads plan mode from the transcript until a leaving notice, an approved exit or Stop planning', () => {
    const fold = (prompt: LanguageModelV3Prompt) => foldPlanning(readPrompt(prompt, SECTION).items).transcriptPlanMode
    const guided: LanguageModelV3Prompt = [user('Add a clear command'), user(SECTION)]
    expect(fold([user('Add a clear command')])).toBeUndefined()
    expect(fold(guided)).toBe(true)
    expect(fold([...guided, user('The user switched this session back to the default mode.')])).toBe(false)
    expect(
      fold([
        ...guided,
        user('The user switched this session back to the default mode.'),
        user('The user switched this session to plan mode.'),
      ]),
    ).toBe(true)
    const exit = (value: string, isError: boolean): LanguageModelV3Prompt => [
      ...guided,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x', toolName: 'exit_plan_mode', input: { plan: '# P' } }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'x',
            toolName: 'exit_plan_mode',
            output: isError ? { type: 'error-text', value } : { type: 'text', value },
          },
        ],
      },
    ]
    expect(fold(exit('The user approved the plan.', false))).toBe(false)
    expect(
      fold(
        exit(
          "Error: The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message.",
          true,
        ),
      ),
    ).toBe(false)
    expect(fold(exit('Error: The user chose to keep planning; revise the plan and present it again.', true))).toBe(true)
  })

  it('after a decline, a note or a dismissal it stays in the default mode and says so', async () => {
    const declined = await step(
      'You are a coding agent.',
      entered('Error: The user declined plan mode; continue in the default mode. Their note: just do it', true),
    )
    expect(declined.calls).toEqual([])
    expect(declined.text).toMatch(/^Understood: no plan mode \(your note: “just do it”\)\./)
    expect(
      (await step('You are a coding agent.', entered('Error: The user declined plan mode; continue in the default mode.', true))).text,
    ).toMatch(/^Understood: no plan mode\. /)
    expect(
      (
        await step(
          'You are a coding agent.',
          entered('Error: The user dismissed the question to speak; stop here and wait for their message.', true),
        )
      ).text,
    ).toBe("Understood: I'll wait for your message.")
    expect((await step('You are a coding agent.', entered('Error: plan mode is already on', true))).text).toBe(
      'I could not switch to plan mode (plan mode is already on). Send `/plan` to switch yourself.',
    )
  })
})

describe('"ignore plan mode": the offline model plays a model that ignores the guidance', () => {
  const model = createOfflineModel({ planSection: SECTION })
  const step = async (system: string, prompt: LanguageModelV3Prompt) => {
    const result = await model.doGenerate({ prompt: [{ role: 'system', content: system }, ...prompt] })
    return {
      text: result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''),
      calls: result.content.flatMap((part) =>
        part.type === 'tool-call' ? [{ name: part.toolName, input: JSON.parse(part.input) as Record<string, unknown> }] : [],
      ),
    }
  }
  const careless: LanguageModelV3Prompt = [{ role: 'user', content: [{ type: 'text', text: 'Ignore plan mode and write TODO.md' }] }]
  const afterWrite = (value: string, isError: boolean): LanguageModelV3Prompt => [
    ...careless,
    {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'c1', toolName: 'list_files', input: {} },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'write_file', input: { path: 'TODO.md', content: 'x' } },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'list_files', output: { type: 'text', value: 'README.md' } },
        {
          type: 'tool-result',
          toolCallId: 'c2',
          toolName: 'write_file',
          output: isError ? { type: 'error-text', value } : { type: 'text', value },
        },
      ],
    },
  ]
  const PLAN = `You are a coding agent.\n\n${SECTION}`

  it('in plan mode calls list_files and write_file in one batch (the named file, else NOTES.md)', async () => {
    expect((await step(PLAN, careless)).calls).toEqual([
      { name: 'list_files', input: {} },
      { name: 'write_file', input: { path: 'TODO.md', content: expect.any(String) } },
    ])
    expect(carelessPath('Ignore plan mode and scribble')).toBe('NOTES.md')
    // It is no goal: no planning episode starts from it.
    expect(foldPlanning(readPrompt(afterWrite('Wrote.', false), SECTION).items).episode).toBeUndefined()
  })

  it('then says whether the guard refused the write, or that nothing blocked it', async () => {
    const refusal =
      'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'
    const refused = await step(PLAN, afterWrite(refusal, true))
    expect(refused.calls).toEqual([])
    expect(refused.text).toMatch(/^The plan guard refused write_file: .*TODO\.md was not written/)
    expect((await step(PLAN, afterWrite('Wrote TODO.md.', false))).text).toMatch(
      /^I wrote TODO\.md although plan mode is on: plan mode is guidance, not a sandbox.*--guard/,
    )
    expect((await step('You are a coding agent.', afterWrite('Wrote TODO.md.', false))).text).toBe('Done: TODO.md is written.')
    // The next message is a goal again.
    const next: LanguageModelV3Prompt = [
      ...afterWrite(refusal, true),
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      { role: 'user', content: [{ type: 'text', text: 'Add due dates' }] },
    ]
    expect((await step(PLAN, next)).calls).toEqual([{ name: 'list_files', input: {} }])
  })
})
