import { createConformanceModel, hostConformanceCases } from '@planmode/host-conformance'
import { planModeNotice } from '@planmode/plan-core'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES } from '@planmode/plan-tool'
import { isInterruptedTurnEnd, type AskRequest, type SessionEventMap } from '@planmode/seams'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  ARC_COMMAND,
  ARC_INSTRUCTIONS,
  ARC_PLAN,
  approvingReviewer,
  createOwnHost,
  createScriptedModel,
  describeEvent,
  runArc,
  workspaceTools,
  type OwnHost,
} from '../src/index.js'
import { deferred, eventsOf, recordingLogger, systemOf, types, userTexts } from './helpers.js'
import { ownHostFactory } from './own-host-factory.js'

const ENTER_NOTICE = (planModeNotice(true).content[0] as { text: string }).text
const hosts: OwnHost[] = []
afterEach(() => {
  for (const host of hosts.splice(0)) host.dispose()
})

describe('the plan-mode arc through the example host', () => {
  it('/plan with a message turns plan mode on and starts a turn whose requests carry the guidance', async () => {
    const { host, agent, model } = await runArc()
    hosts.push(host)
    const log = types(agent.session)
    const [run] = eventsOf(agent.session, 'command/run')
    expect(run!.data).toMatchObject({ name: 'plan', args: ' add a --verbose flag to the CLI', source: { kind: 'user' } })
    expect(eventsOf(agent.session, 'plan/mode')[0]!.data).toEqual({ active: true, cause: 'user' })
    expect(log.indexOf('plan/mode')).toBeLessThan(log.indexOf('request/header'))
    const [first] = eventsOf(agent.session, 'request/header')
    expect(first!.data).toMatchObject({ reason: 'initial', turn: 1, step: 1, model: 'scripted:own-host' })
    expect(first!.data.system).toBe(`${ARC_INSTRUCTIONS}\n\n${RECOMMENDED_PLAN_SECTION}`)
    expect(first!.data.tools.map((tool) => tool.name)).toEqual(['enter_plan_mode', EXIT_PLAN_MODE, 'read_file', 'write_file'])
    // The steered message is the first step's user message; no notice, as no header told the model anything before.
    expect(userTexts(model.requests[0]!)).toEqual(['add a --verbose flag to the CLI'])
    expect(systemOf(model.requests[0]!)).toContain(RECOMMENDED_PLAN_SECTION)
    expect(systemOf(model.requests[1]!)).toContain(RECOMMENDED_PLAN_SECTION)
  })

  it('the review is approved through the questions seam, recorded, and plan mode is left silently at the next step', async () => {
    const asked: AskRequest[] = []
    const reviewer = { ask: (request: AskRequest) => (asked.push(request), approvingReviewer.ask(request)) }
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'read_file', input: { path: 'src/cli.ts' } }] },
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: ARC_PLAN } }] },
      { text: 'Carrying out the plan.', toolCalls: [{ toolName: 'write_file', input: { path: 'src/cli.ts', content: 'verbose' } }] },
      { text: 'Done.' },
    ])
    const files = new Map([['src/cli.ts', 'parse(argv)']])
    const host = createOwnHost({ model, tools: workspaceTools(files), questions: reviewer })
    hosts.push(host)
    const agent = host.agent(await host.session())
    await host.command(agent, ARC_COMMAND)
    await agent.idle()

    expect(asked).toHaveLength(1)
    expect(asked[0]!.agent).toBe(agent)
    expect(asked[0]!.questions[0]).toMatchObject({ id: 'plan-review', header: 'Plan review', detail: ARC_PLAN })
    const results = eventsOf(agent.session, 'tool/result').map((event) => event.data)
    expect(results[0]).toMatchObject({ toolName: 'read_file', isError: false, content: [{ type: 'text', text: 'parse(argv)' }] })
    expect(results[1]).toMatchObject({
      toolName: EXIT_PLAN_MODE,
      isError: false,
      value: { approved: true },
      content: [{ type: 'text', text: EXIT_PLAN_MODE_MESSAGES.approved }],
    })
    expect(eventsOf(agent.session, 'plan/review')[0]!.data).toMatchObject({ outcome: 'approved' })
    // Silent exit: cause `review`, applied after the approving step and before the next header; never narrated.
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    const log = types(agent.session)
    const exit = log.lastIndexOf('plan/mode')
    expect(log[exit - 1]).toBe('step/end')
    expect(log[exit + 1]).toBe('request/header')
    expect(eventsOf(agent.session, 'user/message').map((event) => event.data.source.kind)).toEqual(['user'])
    // The carrying-out steps: no guidance, the same tool catalog, the write ran.
    const [third, fourth] = [model.requests[2]!, model.requests[3]!]
    expect(systemOf(third)).not.toContain(RECOMMENDED_PLAN_SECTION)
    expect(systemOf(fourth)).not.toContain(RECOMMENDED_PLAN_SECTION)
    const headers = eventsOf(agent.session, 'request/header')
    expect(headers.map((header) => header.data.reason)).toEqual(['initial', 'change'])
    expect(JSON.stringify(headers[1]!.data.tools)).toBe(JSON.stringify(headers[0]!.data.tools))
    expect(files.get('src/cli.ts')).toBe('verbose')
    expect(host.ctx.require('planMode').get(agent)).toEqual({ active: false })
    const values = host.ctx.require('sessionProjections').snapshot(agent.session).values
    expect(values.plan).toEqual({ active: false, pending: false })
    expect(values.planHistory?.revisions.map((revision) => [revision.rev, revision.status, revision.title])).toEqual([
      [1, 'approved', 'Add a --verbose flag'],
    ])
    expect(eventsOf(agent.session, 'turn/end').map((event) => event.data)).toEqual([{ turn: 1, reason: 'completed' }])
  })

  it('every request is the transcript of the log: the tool results of earlier steps are in it, the approval text included', async () => {
    const { host, model } = await runArc()
    hosts.push(host)
    const third = model.requests[2]!
    const results = third.prompt.flatMap((message) => (message.role === 'tool' ? message.content : []))
    expect(results.map((part) => (part.type === 'tool-result' ? [part.toolName, part.output] : []))).toEqual([
      ['read_file', { type: 'text', value: 'parse(argv)' }],
      [EXIT_PLAN_MODE, { type: 'text', value: EXIT_PLAN_MODE_MESSAGES.approved }],
    ])
    expect(third.prompt.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool'])
  })

  it('the start script prints one line per event, which request had the guidance, and the plan badge', async () => {
    const lines: string[] = []
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    try {
      await import('../src/main.js')
    } finally {
      log.mockRestore()
    }
    expect(lines[0]).toBe('#00 command/run /plan, args " add a --verbose flag to the CLI"')
    expect(lines).toContain('#01 plan/mode {"active":true,"cause":"user"}')
    expect(lines).toContain('#12 question/asked plan-review')
    expect(lines).toContain('#13 question/settled answered: Approve')
    expect(lines).toContain('#14 plan/review approved')
    expect(lines).toContain('#17 plan/mode {"active":false,"cause":"review"}')
    expect(lines.slice(-5)).toEqual([
      'request 1: plan guidance in the system prompt: yes',
      'request 2: plan guidance in the system prompt: yes',
      'request 3: plan guidance in the system prompt: no',
      'request 4: plan guidance in the system prompt: no',
      'plan projection: {"active":false,"pending":false}',
    ])
    const { host, agent } = await runArc()
    hosts.push(host)
    expect(lines.slice(0, -5)).toEqual(agent.session.events.map(describeEvent))
  })
})

describe("a driver of your own, offline, with the conformance kit's scripted model", () => {
  it('test/drive-offline.ts runs /plan, a prompt and the review: the plan is approved and plan mode is off', async () => {
    const lines: unknown[][] = []
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args))
    try {
      await import('./drive-offline.js')
    } finally {
      log.mockRestore()
    }
    expect(lines).toEqual([
      [{ active: false, pending: false }, ['approved']],
      [2, { active: false }],
    ])
  })

  it("the example reviewer accepts the model's entry into plan mode (answering the entry question with its own option)", async () => {
    const asked: string[][] = []
    const reviewer = {
      ask: (request: AskRequest) => (asked.push(request.questions.map((question) => question.id)), approvingReviewer.ask(request)),
    }
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'enter_plan_mode', input: { reason: 'The change touches every command.' } }] },
      { text: 'Planning.' },
    ])
    const host = createOwnHost({ model, questions: reviewer })
    hosts.push(host)
    const agent = host.agent(await host.session())
    await agent.prompt('refactor the CLI')
    expect(asked).toEqual([['plan-enter']])
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({ isError: false, value: { entered: true } })
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(systemOf(model.requests[1]!)).toContain(RECOMMENDED_PLAN_SECTION)
  })
})

describe('restart from the log: a new host over the same in-memory store', () => {
  it('after the arc, plan state and projections are folded from the log, and a new /plan is narrated at the next step', async () => {
    const { host: first, agent } = await runArc()
    const before = first.ctx.require('sessionProjections').snapshot(agent.session)
    first.dispose()
    await expect(agent.session.append('turn/start', { turn: 9 })).rejects.toThrow('the host was disposed')

    const model = createScriptedModel([{ text: 'Planning the tests.' }])
    const second = createOwnHost({ model, store: first.store, tools: workspaceTools(new Map()), questions: approvingReviewer })
    hosts.push(second)
    const session = await second.session('arc')
    expect(session.events).toBe(first.store.get('arc'))
    const resumed = second.agent(session)
    expect(second.ctx.require('planMode').get(resumed)).toEqual({ active: false })
    expect(second.ctx.require('sessionProjections').snapshot(session)).toEqual(before)

    expect(await second.command(resumed, '/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    await resumed.prompt('plan the tests')
    const request = model.requests[0]!
    expect(systemOf(request)).toContain(RECOMMENDED_PLAN_SECTION)
    expect(userTexts(request).slice(-2)).toEqual(['plan the tests', ENTER_NOTICE])
    expect(eventsOf(session, 'request/header').at(-1)!.data).toMatchObject({ reason: 'change', turn: 2, step: 1 })
    expect(eventsOf(session, 'turn/start').map((event) => event.data.turn)).toEqual([1, 2])
  })

  it('a /plan selected mid-turn by a process that then died is rebuilt as pending and applied at the first step of the next process', async () => {
    const logger = recordingLogger()
    const hang = deferred<{ text: string }>()
    const selected = deferred()
    const model = createScriptedModel()
    const first = createOwnHost({ model, logger })
    const agent = first.agent(await first.session('s'))
    model.push(async () => {
      expect(await first.command(agent, '/plan')).toEqual({
        kind: 'success',
        text: 'Entering plan mode from the next step. Send /plan off to leave.',
      })
      selected.resolve()
      return hang.promise
    })
    const prompted = agent.prompt('add caching')
    await selected.promise
    expect(first.ctx.require('planMode').get(agent)).toEqual({ active: false, pending: true })
    first.dispose() // the process dies: nothing more reaches the log
    await prompted
    expect(types(agent.session).at(-1)).toBe('command/done')
    expect(logger.lines.map((line) => line.level)).toEqual(['error'])

    const next = createScriptedModel([{ text: 'planning' }])
    const reopened = recordingLogger()
    const second = createOwnHost({ model: next, store: first.store, logger: reopened })
    hosts.push(second)
    const session = await second.session('s')
    // Closed at open, before anyone else can append: step/end for the open step, then turn/end interrupted.
    expect(types(session).slice(-3)).toEqual(['command/done', 'step/end', 'turn/end'])
    expect(eventsOf(session, 'step/end').at(-1)!.data).toEqual({ turn: 1, step: 1 })
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'interrupted' })
    expect(reopened.lines).toEqual([
      { level: 'warn', message: 'closing turn 1 of session s, left open by a process that ended mid-turn (reason interrupted)' },
    ])
    expect(second.ctx.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: true })
    const resumed = second.agent(session)
    expect(second.ctx.require('planMode').get(resumed)).toEqual({ active: false, pending: true })
    await resumed.prompt('continue')
    const log = types(session)
    expect(log.indexOf('plan/mode')).toBeGreaterThan(log.lastIndexOf('turn/start'))
    expect(log.indexOf('plan/mode')).toBeLessThan(log.lastIndexOf('request/header'))
    expect(systemOf(next.requests[0]!)).toContain(RECOMMENDED_PLAN_SECTION)
    expect(userTexts(next.requests[0]!)).toEqual(['add caching', 'continue', ENTER_NOTICE])
    expect(second.ctx.require('planMode').get(resumed)).toEqual({ active: true })
    expect(second.ctx.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: true, pending: false })
  })

  it('closed at open, through the kit: a reopened log with an open step gets step/end, then turn/end interrupted, before openAgent returns', async () => {
    const model = createConformanceModel([])
    const dir = `interrupted-${Math.random()}` // the factory keeps one log store per case directory
    const first = await ownHostFactory({ model, models: {}, dir })
    const agent = await first.createAgent()
    await agent.session.append('turn/start', { turn: 1 })
    await agent.session.append('step/start', { turn: 1, step: 1 })
    await first.close?.() // the process dies mid-step
    const second = await ownHostFactory({ model, models: {}, dir })
    const reopened = await second.openAgent!(agent.session.id)
    const [stepEnd, turnEnd] = reopened.session.events.slice(-2)
    expect([stepEnd!.type, stepEnd!.data, turnEnd!.type, turnEnd!.data]).toEqual([
      'step/end',
      { turn: 1, step: 1 },
      'turn/end',
      { turn: 1, reason: 'interrupted' },
    ])
    expect(turnEnd!.type === 'turn/end' && isInterruptedTurnEnd(turnEnd!.data as SessionEventMap['turn/end'])).toBe(true)
    expect(reopened.session.events).toHaveLength(4) // nothing else: no step ran in the closed turn
    // Reopened again, the log is closed already: nothing more is appended.
    await second.close?.()
    const third = await ownHostFactory({ model, models: {}, dir })
    expect((await third.openAgent!(agent.session.id)).session.events).toHaveLength(4)
    await third.close?.()
    // And the kit's own restart cases (one reopens a log whose turn was left open) pass.
    const restart = hostConformanceCases(ownHostFactory).filter((check) => check.duty === 'restart-from-log')
    expect(restart.length).toBeGreaterThanOrEqual(2)
    for (const check of restart) await check.run()
  })
})
