import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import type { HostAgent } from '@planmode/host'
import { RECOMMENDED_CHILD_SECTION, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { AskRequest, SessionEvent, UserAnswer } from '@planmode/seams'
import { HELPER_PROMPT_OPENING, helperQuestion, notesFile } from '../src/model/helper.js'
import { createOfflineModel } from '../src/model/offline-model.js'
import { notReadyProblems } from '../src/model/planning-state.js'
import { basePrompt, basePromptSection, composePlanHost } from '../src/terminal/compose-host.js'
import { EXPLORE_EVENT, presentExploreValue, type ExploreValue } from '../src/workspace/explore-tool.js'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const SECTION = RECOMMENDED_PLAN_SECTION
const GOAL = 'Add due dates to tasks'
const REFUSAL =
  'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'

interface Composed {
  readonly ctx: Context
  readonly agent: HostAgent
  readonly workspace: string
  readonly asked: AskRequest[]
  /** Every session the host logged to, in creation order (the agent's first). */
  readonly sessions: () => SessionEvent[][]
}

/** The demo's composition (what `pnpm start` runs) with the offline model and a provider that answers from `answers`. */
async function compose(
  options: {
    requiredSections?: string[]
    guard?: boolean
    placement?: 'system' | 'transcript'
    model?: LanguageModelV3
    answers?: Omit<UserAnswer, 'id'>[]
  } = {},
): Promise<Composed> {
  const sessionDir = mkdtempSync(join(tmpdir(), 'planmode-demo-helper-'))
  const workspace = copySampleWorkspace()
  dirs.push(sessionDir, workspace)
  const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  composePlanHost(ctx, {
    sessionDir,
    model: options.model ?? createOfflineModel({ planSection: SECTION }),
    section: SECTION,
    workspace,
    ...(options.placement === undefined ? {} : { placement: options.placement }),
    ...(options.guard === undefined ? {} : { guard: options.guard }),
    ...(options.requiredSections === undefined ? {} : { requiredSections: options.requiredSections }),
  })
  ctx.require('systemPrompt').section({ name: 'demo:base', order: 10, text: basePromptSection(workspace) })
  const asked: AskRequest[] = []
  const answers = [...(options.answers ?? [])]
  ctx.require('userQuestions').registerProvider({
    async ask(request) {
      asked.push(request)
      const next = answers.shift()
      if (next === undefined) throw new Error('test: no answer scripted')
      return request.questions.map((question) => ({ id: question.id, ...next }))
    },
  })
  const logged: SessionEvent[][] = []
  const seen = new Map<object, SessionEvent[]>()
  ctx.on('session/event', ({ session, event }) => {
    let events = seen.get(session)
    if (events === undefined) seen.set(session, (events = []))
    if (!logged.includes(events)) logged.push(events)
    events.push(event)
  })
  const agent = ctx.require('agents').create({ session: await ctx.require('sessions').create() })
  return { ctx, agent, workspace, asked, sessions: () => logged }
}

const exitResults = (events: readonly SessionEvent[]) =>
  events.flatMap((event) => (event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode' ? [event.data.content[0]!.text] : []))
const exitPlans = (events: readonly SessionEvent[]) =>
  events.flatMap((event) =>
    event.type === 'assistant/message'
      ? event.data.content.flatMap((block) =>
          block.type === 'tool-call' && block.toolName === 'exit_plan_mode' ? [String((block.input as { plan: string }).plan)] : [],
        )
      : [],
  )
const lastText = (events: readonly SessionEvent[]) =>
  events
    .flatMap((event) =>
      event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
    )
    .at(-1)

describe('the offline model and the plan checks (SPEC §20)', () => {
  it('reads the not-ready failure, adds each missing section, submits again; only the revision is reviewed', async () => {
    const host = await compose({ requiredSections: ['Steps', 'Risks', 'Rollback'], answers: [{ selected: ['Approve'] }] })
    await host.ctx.require('commands').execute({ agent: host.agent, line: `/plan ${GOAL}` })
    await host.agent.idle()
    const events = host.agent.session.events
    expect(exitResults(events)).toEqual([
      'Error: The plan is not ready for review:\n- missing section "Risks"\n- missing section "Rollback"',
      expect.stringMatching(/^The user approved the plan/),
    ])
    const [first, second] = exitPlans(events)
    expect(first).not.toMatch(/^## (Risks|Rollback)$/m)
    expect(second).toMatch(/^## Risks\n- /m)
    expect(second).toMatch(/^## Rollback\n- /m)
    expect(second).toContain('_Revision 2: revised to pass the plan check._')
    // The reviewer saw the second plan only, exactly as submitted.
    expect(host.asked).toHaveLength(1)
    expect(host.asked[0]!.questions[0]!.detail).toBe(second)
    // Approved: carried out as usual.
    expect(existsSync(join(host.workspace, 'test/due-dates.test.js'))).toBe(true)
    host.ctx.dispose()
  })

  it('takes a listener’s problem as feedback: a step and a line of its own, then passes', async () => {
    const host = await compose({ answers: [{ selected: ['Approve'] }] })
    const checked: string[] = []
    host.ctx.on('plan/validate', async (payload, next) => {
      checked.push(payload.plan)
      return next(
        payload.plan.includes('From the plan check: name who reviews the change')
          ? payload
          : { ...payload, problems: [...payload.problems, 'name who reviews the change'] },
      )
    })
    await host.ctx.require('commands').execute({ agent: host.agent, line: `/plan ${GOAL}` })
    await host.agent.idle()
    expect(checked).toHaveLength(2)
    expect(exitResults(host.agent.session.events)[0]).toBe('Error: The plan is not ready for review:\n- name who reviews the change')
    expect(checked[1]).toContain('- "name who reviews the change": added as a step of its own.')
    expect(host.asked).toHaveLength(1)
    host.ctx.dispose()
  })

  it('stops after a check fails twice with the same problems, and says what it cannot fix', async () => {
    const host = await compose()
    host.ctx.on('plan/validate', async (payload, next) =>
      next({ ...payload, problems: [...payload.problems, 'the change needs a ticket number'] }),
    )
    await host.ctx.require('commands').execute({ agent: host.agent, line: `/plan ${GOAL}` })
    await host.agent.idle()
    const events = host.agent.session.events
    expect(exitResults(events)).toHaveLength(2)
    expect(lastText(events)).toBe(
      'The plan check still finds a problem I cannot fix myself:\n- the change needs a ticket number\nTell me how to change the plan, or leave plan mode with `/plan off`.',
    )
    expect(host.asked).toHaveLength(0)
    expect(host.ctx.require('planMode').get(host.agent).active).toBe(true)
    host.ctx.dispose()
  })

  it('reads the problem lines of a not-ready text, and nothing from other texts', () => {
    expect(notReadyProblems('Error: The plan is not ready for review:\n- missing section "A"\n- too short')).toEqual([
      'missing section "A"',
      'too short',
    ])
    expect(notReadyProblems('Error: The user chose to keep planning; revise the plan and present it again.')).toEqual([])
  })
})

describe('explore: a helper agent (SPEC §21)', () => {
  it('in plan mode: the helper inherits it, reads the child section, writes nothing under the guard, and its report is the result', async () => {
    const host = await compose({ guard: true })
    await host.ctx.require('planMode').set(host.agent, true)
    await host.agent.prompt('Ask a helper: how are tasks stored on disk? Write your notes to NOTES.md.')
    const [parent, helper] = host.sessions()
    expect(parent).toBe(host.sessions()[0])
    const call = host.agent.session.events.flatMap((event) =>
      event.type === 'assistant/message' ? event.data.content.filter((block) => block.type === 'tool-call') : [],
    )[0]
    expect(call).toMatchObject({ toolName: 'explore', input: { question: 'How are tasks stored on disk? Write your notes to NOTES.md.' } })
    expect(helper![0]).toMatchObject({
      type: EXPLORE_EVENT,
      data: {
        parent: { session: host.agent.session.id, agent: host.agent.id, toolCallId: call?.type === 'tool-call' ? call.toolCallId : '' },
        question: 'How are tasks stored on disk? Write your notes to NOTES.md.',
      },
    })
    const inherit = helper!.findIndex((event) => (event.type as string) === 'plan/mode')
    const header = helper!.findIndex((event) => event.type === 'request/header')
    expect(helper![inherit]!.data).toEqual({ active: true, cause: 'inherit' })
    expect(inherit).toBeLessThan(header)
    const system = (helper![header] as SessionEvent<'request/header'>).data.system
    expect(system.startsWith(HELPER_PROMPT_OPENING)).toBe(true)
    expect(system).toContain(RECOMMENDED_CHILD_SECTION.trim())
    expect(system).not.toContain(SECTION.trim())
    const results = helper!.flatMap((event) =>
      event.type === 'tool/result' ? [[event.data.toolName, event.data.isError ? event.data.content[0]!.text : 'ok']] : [],
    )
    expect(results).toEqual([
      ['list_files', 'ok'],
      ['read_file', 'ok'],
      ['read_file', 'ok'],
      ['read_file', 'ok'],
      ['search', 'ok'],
      ['write_file', REFUSAL],
    ])
    expect(existsSync(join(host.workspace, 'NOTES.md'))).toBe(false)
    const result = host.agent.session.events.find(
      (event): event is SessionEvent<'tool/result'> => event.type === 'tool/result' && event.data.toolName === 'explore',
    )!
    const value = result.data.value as ExploreValue
    expect(value).toMatchObject({ session: expect.any(String), planMode: true, reason: 'completed' })
    expect(value.calls.map((entry) => `${entry.tool}:${entry.status}`)).toEqual([
      'list_files:done',
      'read_file:done',
      'read_file:done',
      'read_file:done',
      'search:done',
      'write_file:refused',
    ])
    expect(result.data.content[0]!.text).toBe(lastText(helper!))
    expect(value.findings).toBe(lastText(helper!))
    expect(value.findings).toContain('`src/store.js`: Loading and saving tasks.json.')
    expect(lastText(host.agent.session.events)).toBe(`The helper reported back:\n${value.findings}`)
    // The card a UI shows: the calls with their outcomes, then the findings.
    const card = presentExploreValue(value)
    expect(card).toContain('**Helper agent** — plan mode, inherited from this agent; session `')
    expect(card).toContain('- ✗ refused `write_file NOTES.md`: write_file is not available in plan mode.')
    expect(card).toContain(`**Findings**\n\n${value.findings}`)
    // The parent stays in plan mode; nobody was asked anything.
    expect(host.ctx.require('planMode').get(host.agent).active).toBe(true)
    expect(host.asked).toHaveLength(0)
    host.ctx.dispose()
  })

  it('a helper’s own exit_plan_mode and enter_plan_mode are refused by the seam: its owner lives', async () => {
    const host = await compose()
    await host.ctx.require('planMode').set(host.agent, true)
    const parent = host.agent
    // The explore tool, run as the parent's model would call it, with a helper scripted to ask for a review.
    const scripted: LanguageModelV3 = createOfflineModel({ planSection: SECTION })
    const sessions = host.ctx.require('sessions')
    const session = await sessions.create()
    const child = host.ctx.require('agents').create({
      session,
      owner: parent,
      model: {
        ...scripted,
        doStream: async (options) => {
          const asked = options.prompt.some((message) => message.role === 'tool')
          if (asked) return scripted.doStream(options)
          const stream = new ReadableStream({
            start(controller) {
              controller.enqueue({ type: 'stream-start', warnings: [] })
              controller.enqueue({
                type: 'tool-call',
                toolCallId: 'c1',
                toolName: 'exit_plan_mode',
                input: JSON.stringify({ plan: '# A plan\n\n## Steps\n1. x' }),
              })
              controller.enqueue({ type: 'tool-call', toolCallId: 'c2', toolName: 'enter_plan_mode', input: '{}' })
              controller.enqueue({
                type: 'finish',
                finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
                usage: {
                  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
                  outputTokens: { total: 1, text: 1, reasoning: 0 },
                },
              })
              controller.close()
            },
          })
          return { stream }
        },
      },
    })
    await child.prompt('look around')
    const results = session.events.flatMap((event) =>
      event.type === 'tool/result' ? [[event.data.toolName, event.data.content[0]!.text]] : [],
    )
    expect(results[0]![0]).toBe('exit_plan_mode')
    expect(results[0]![1]).toMatch(/^Error: agent .* is a child of agent .* and cannot ask the user/)
    expect(results[1]).toEqual(['enter_plan_mode', 'Error: plan mode is already on'])
    expect(host.asked).toHaveLength(0)
    expect(host.ctx.require('planMode').get(child).active).toBe(true)
    child.dispose()
    await sessions.close(session)
    host.ctx.dispose()
  })

  it('in the default mode the helper starts in the default mode and its asked-for write happens', async () => {
    const host = await compose()
    await host.agent.prompt('Ask a helper: where are tasks formatted? Write your notes to NOTES.md.')
    const helper = host.sessions()[1]!
    expect(helper.some((event) => (event.type as string) === 'plan/mode')).toBe(false)
    const header = helper.find((event): event is SessionEvent<'request/header'> => event.type === 'request/header')!
    expect(header.data.system).not.toContain(RECOMMENDED_CHILD_SECTION.trim())
    expect(
      helper.some(
        (event) =>
          event.type === 'tool/result' &&
          event.data.toolName === 'read_file' &&
          (event.data.value as string).startsWith('// How a task is printed'),
      ),
    ).toBe(true)
    expect(readFileSync(join(host.workspace, 'NOTES.md'), 'utf8')).toMatch(/^# Notes: Where are tasks formatted\?\n\n- /)
    expect(lastText(helper)).toMatch(/My notes are in NOTES\.md\.$/)
    const value = host.agent.session.events.flatMap((event) =>
      event.type === 'tool/result' && event.data.toolName === 'explore' ? [event.data.value as ExploreValue] : [],
    )[0]!
    expect(value.planMode).toBe(false)
    expect(presentExploreValue(value)).toContain('— default mode; session `')
    host.ctx.dispose()
  })

  it('refuses a call without an agent, from a helper, and with a blank question', async () => {
    const host = await compose()
    const tools = host.ctx.require('tools')
    const signal = new AbortController().signal
    expect(await tools.execute('explore', { question: 'why?' }, { signal, toolCallId: 't1' })).toMatchObject({
      isError: true,
      content: [{ text: 'Error: explore requires a calling agent' }],
    })
    expect(await tools.execute('explore', { question: '  ' }, { agent: host.agent, signal, toolCallId: 't2' })).toMatchObject({
      isError: true,
      content: [{ text: 'Error: explore needs a non-empty question' }],
    })
    const child = host.ctx.require('agents').create({ session: await host.ctx.require('sessions').create(), owner: host.agent })
    expect(await tools.execute('explore', { question: 'why?' }, { agent: child, signal, toolCallId: 't3' })).toMatchObject({
      isError: true,
      content: [{ text: 'Error: explore is not available to a helper agent: answer with the read-only tools yourself' }],
    })
    expect(tools.get('explore')?.annotations).toEqual({ readOnlyHint: true })
    child.dispose()
    host.ctx.dispose()
  })

  it('cancelling the caller’s turn cancels the helper’s', async () => {
    let release: (() => void) | undefined
    const offline = createOfflineModel({ planSection: SECTION })
    // The helper's second request waits until its signal aborts (the caller's cancel reaches it).
    const model: LanguageModelV3 = {
      ...offline,
      async doStream(options) {
        const system = options.prompt.find((message) => message.role === 'system')?.content ?? ''
        if (system.startsWith(HELPER_PROMPT_OPENING) && options.prompt.some((message) => message.role === 'tool')) {
          release?.()
          await new Promise<void>((resolve) => options.abortSignal?.addEventListener('abort', () => resolve(), { once: true }))
        }
        return offline.doStream(options)
      },
    }
    const host = await compose({ model })
    const waiting = new Promise<void>((resolve) => (release = resolve))
    const turn = host.agent.prompt('Ask a helper: how are tasks stored?')
    await waiting
    await host.agent.cancel()
    expect((await turn).reason).toBe('cancelled')
    const helper = host.sessions()[1]!
    expect(helper.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason)).toEqual([
      'cancelled',
    ])
    host.ctx.dispose()
  })

  it('reads a helper request and its notes file; the base prompt differs for a child', () => {
    expect(helperQuestion('Ask a helper: how are tasks stored?')).toBe('How are tasks stored?')
    expect(helperQuestion('please have the helper agent to check the cli')).toBe('Check the cli')
    expect(helperQuestion('Ask a helper:')).toBeUndefined()
    expect(helperQuestion('Ask about helpers')).toBeUndefined()
    expect(notesFile('How? Write your notes to NOTES.md.')).toBe('NOTES.md')
    expect(notesFile('How are notes written?')).toBeUndefined()
    expect(basePrompt('/w', true).startsWith(`${HELPER_PROMPT_OPENING}: `)).toBe(true)
    const section = basePromptSection('/w')
    expect(section({})).toBe(basePrompt('/w'))
    const root = { id: 'a', session: { id: 's', events: [], append: async () => ({}) as never }, steer() {}, inject: async () => {} }
    expect(section({ agent: root })).toBe(basePrompt('/w'))
    expect(section({ agent: { ...root, id: 'b', owner: root } })).toBe(basePrompt('/w', true))
  })
})
