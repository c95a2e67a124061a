import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, type Plugin } from '@planmode/context'
import { createScriptedModel, sessionStorePlugin, type ScriptedResponse } from '@planmode/host'
import { PLAN_POLICY_SECTION, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { presetPlugin, type PresetConfig } from '@planmode/preset'
import type { UserQuestion } from '@planmode/seams'
import { eventsOf, recordingLogger, requestSystem, types } from '@planmode/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const PLAN = '# Add a hello file\n\n1. Write hello.txt.\n2. Say so.\n'
const exitCall = (plan = PLAN): ScriptedResponse => ({ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan } }] })

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'planmode-preset-'))
  dirs.push(dir)
  return dir
}

/** A root with the preset (memory store unless the config says otherwise), a `write_file` tool that is not read-only, and a provider that records each review. */
function compose(
  script: ScriptedResponse[],
  config: Partial<PresetConfig> = {},
  answer: (question: UserQuestion) => string = (question) => question.options[0]!.label,
) {
  const logger = recordingLogger()
  const root = new Context({ logger })
  const model = createScriptedModel(script)
  const fiber = root.plugin(presetPlugin, { model, retryDelayMs: 0, ...config })
  const written: string[] = []
  root.require('tools').register<{ path: string }, string>({
    name: 'write_file',
    description: 'Writes a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => (written.push(path), `wrote ${path}`),
  })
  const asked: UserQuestion[] = []
  root.require('userQuestions').registerProvider({
    ask: async ({ questions }) => questions.map((question) => (asked.push(question), { id: question.id, selected: [answer(question)] })),
  })
  const agent = async () => root.require('agents').create({ session: await root.require('sessions').create() })
  return { root, fiber, model, logger, written, asked, agent }
}

describe('presetPlugin composes the host and every plan layer', () => {
  it('provides the services, the plan tools, /plan and the three projection keys; no guard and no plan file unless asked for', async () => {
    const { root } = compose([])
    for (const service of [
      'sessions',
      'agents',
      'tools',
      'systemPrompt',
      'commands',
      'userQuestions',
      'sessionProjections',
      'sessionInvariants',
      'planMode',
    ] as const) {
      expect(root.get(service), service).toBeDefined()
    }
    expect(
      root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual(['enter_plan_mode', 'exit_plan_mode', 'update_plan', 'write_file'])
    expect(
      root
        .require('commands')
        .list()
        .map((command) => command.name),
    ).toEqual(['plan'])
    expect(root.require('sessionProjections').keys()).toEqual(['plan', 'planHistory', 'planProgress'])
    expect(root.get('planFile')).toBeUndefined()
  })

  it('runs the whole arc: /plan, a reviewed plan approved, carried out and tracked; the guidance is the recommended section', async () => {
    const {
      root,
      model,
      asked,
      agent: newAgent,
    } = compose([
      exitCall(),
      {
        toolCalls: [
          {
            toolName: 'update_plan',
            input: {
              updates: [
                { step: 1, status: 'done' },
                { step: 2, status: 'done' },
              ],
            },
          },
        ],
      },
      { text: 'Done.' },
    ])
    const agent = await newAgent()
    expect((await root.require('commands').execute({ agent, line: '/plan a hello file' }))?.text).toBe(
      'Plan mode on. Send /plan off to leave.',
    )
    await agent.idle()

    expect(requestSystem(model.requests[0]!)).toContain(RECOMMENDED_PLAN_SECTION)
    expect(requestSystem(model.requests[1]!)).not.toContain(RECOMMENDED_PLAN_SECTION)
    // The review's intent is SPEC §6.5's exactly: no handoff was configured.
    expect(asked.map((question) => question.intent)).toEqual([
      { kind: 'plan-review', approve: 'Approve', keep: 'Keep planning', stop: 'Stop planning', editable: true, comments: true },
    ])
    expect(eventsOf(agent.session, 'plan/review').map((event) => event.data.outcome)).toEqual(['approved'])
    const { plan, planHistory, planProgress } = root.require('sessionProjections').snapshot(agent.session).values
    expect(plan).toEqual({ active: false, pending: false })
    expect(planHistory?.revisions.map((revision) => revision.status)).toEqual(['approved'])
    expect([planProgress?.done, planProgress?.total]).toEqual([2, 2])
  })

  it('checks every logged plan/mode (the invariant is composed)', async () => {
    const { agent: newAgent } = compose([])
    const agent = await newAgent()
    await expect(agent.session.append('plan/mode', { active: 'yes' as unknown as boolean })).rejects.toThrow('expected a boolean')
    expect(types(agent.session)).not.toContain('plan/mode')
  })

  it('disposing its fiber undoes everything it composed', () => {
    const { root, fiber } = compose([])
    fiber.dispose()
    for (const service of ['sessions', 'agents', 'tools', 'commands', 'userQuestions', 'sessionProjections', 'planMode'] as const)
      expect(root.get(service), service).toBeUndefined()
  })
})

describe('the store is chosen by an option', () => {
  it('`dir`: one JSONL file per session in that folder', async () => {
    const dir = await tempDir()
    const { root, agent: newAgent } = compose([{ text: 'Hello.' }], { dir })
    const agent = await newAgent()
    await agent.prompt('hi')
    await root.require('sessions').close(agent.session)
    const lines = readFileSync(join(dir, `${agent.session.id}.jsonl`), 'utf8')
      .trim()
      .split('\n')
    expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(types(agent.session))
  })

  it('`sessions`: any plugin that provides the service replaces the JSONL store', async () => {
    let applied = 0
    const mine: Plugin<void> = {
      name: 'my-store',
      apply: (ctx) => {
        applied++
        ctx.plugin(sessionStorePlugin, {})
      },
    }
    const { root } = compose([], { sessions: mine })
    expect(applied).toBe(1)
    expect(root.require('sessions').dir).toBeUndefined()
  })

  it('`sessions` with `dir` is the host’s TypeError, and nothing stays composed', async () => {
    const root = new Context({ logger: recordingLogger() })
    const dir = await tempDir()
    expect(() => root.plugin(presetPlugin, { model: createScriptedModel([]), dir, sessions: { name: 'x', apply() {} } })).toThrow(TypeError)
    expect(root.get('sessions')).toBeUndefined()
    expect(root.get('planMode')).toBeUndefined()
  })
})

describe('the layers’ options', () => {
  it('`guard: true` refuses a tool that is not read-only in plan mode; without it the tool runs', async () => {
    const script = (): ScriptedResponse[] => [{ toolCalls: [{ toolName: 'write_file', input: { path: 'x' } }] }, { text: 'ok' }]
    for (const guard of [true, false, undefined]) {
      const { root, written, agent: newAgent } = compose(script(), guard === undefined ? {} : { guard })
      const agent = await newAgent()
      await root.require('planMode').set(agent, true)
      await agent.prompt('write x')
      expect(written, String(guard)).toEqual(guard === true ? [] : ['x'])
    }
  })

  it('`guard` as plan-guard’s config: `allow` lets a named tool run in plan mode', async () => {
    const {
      root,
      written,
      agent: newAgent,
    } = compose([{ toolCalls: [{ toolName: 'write_file', input: { path: 'y' } }] }, { text: 'ok' }], { guard: { allow: ['write_file'] } })
    const agent = await newAgent()
    await root.require('planMode').set(agent, true)
    await agent.prompt('write y')
    expect(written).toEqual(['y'])
  })

  it('`planDir`: the latest plan of each session as <planDir>/<id>.md', async () => {
    const planDir = await tempDir()
    const { root, agent: newAgent } = compose([exitCall(), { text: 'Carrying it out.' }], { planDir })
    const agent = await newAgent()
    await root.require('planMode').set(agent, true)
    await agent.prompt('plan it')
    await root.require('planFile').settled()
    const file = join(planDir, `${agent.session.id}.md`)
    expect(existsSync(file)).toBe(true)
    expect(readFileSync(file, 'utf8')).toContain('status: "approved"')
  })

  it('`placement: transcript` keeps the plan section empty and sends the guidance as a message', async () => {
    const { root, model, agent: newAgent } = compose([{ text: 'Looking.' }], { placement: 'transcript', section: '# Plan\nOnly plan.' })
    const agent = await newAgent()
    await root.require('planMode').set(agent, true)
    await agent.prompt('go')
    expect(
      root
        .require('systemPrompt')
        .assemble({ agent })
        .sections.find((section) => section.name === PLAN_POLICY_SECTION)?.text ?? '',
    ).toBe('')
    expect(requestSystem(model.requests[0]!)).not.toContain('Only plan.')
    expect(JSON.stringify(model.requests[0]!.prompt)).toContain('Only plan.')
  })

  it('`requiredSections`: a plan without one is sent back before anyone is asked', async () => {
    const { root, asked, agent: newAgent } = compose([exitCall(), { text: 'I will add it.' }], { requiredSections: ['Risks'] })
    const agent = await newAgent()
    await root.require('planMode').set(agent, true)
    await agent.prompt('plan it')
    expect(asked).toEqual([])
    expect(JSON.stringify(eventsOf(agent.session, 'tool/result'))).toContain('missing section \\"Risks\\"')
    expect(root.require('tools').get('exit_plan_mode')!.description).toMatch(/ The plan must have these sections: Risks\.$/)
  })

  it('handoff: the keys of `models`, `handoffModels` over them, and `freshSessions` make the review offer a handoff', async () => {
    const other = createScriptedModel([])
    const cases: [Partial<PresetConfig>, unknown][] = [
      [{ models: { careful: other } }, { fresh: false, models: ['careful'] }],
      [{ freshSessions: true }, { fresh: true, models: [] }],
      [
        { models: (id: string) => (id === 'x' ? other : undefined), handoffModels: ['x'], freshSessions: true },
        { fresh: true, models: ['x'] },
      ],
      [{ models: () => other }, undefined],
    ]
    for (const [config, handoff] of cases) {
      const { root, asked, agent: newAgent } = compose([exitCall(), { text: 'Waiting.' }], config, () => 'Keep planning')
      const agent = await newAgent()
      await root.require('planMode').set(agent, true)
      await agent.prompt('plan it')
      const intent = asked[0]!.intent as { handoff?: unknown }
      expect(intent.handoff, JSON.stringify(config)).toEqual(handoff)
    }
  })

  it('`enterTool: false` leaves out enter_plan_mode; `unattended: approve` approves with nobody to ask', async () => {
    const root = new Context({ logger: recordingLogger() })
    const model = createScriptedModel([exitCall(), { text: 'Carrying it out.' }])
    root.plugin(presetPlugin, { model, enterTool: false, unattended: 'approve' })
    expect(
      root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual(['exit_plan_mode', 'update_plan'])
    const agent = root.require('agents').create({ session: await root.require('sessions').create() })
    await root.require('planMode').set(agent, true)
    await agent.prompt('plan it')
    expect(eventsOf(agent.session, 'plan/review').map((event) => event.data)).toEqual([
      expect.objectContaining({ outcome: 'approved', unattended: true }),
    ])
  })
})

describe('bad config', () => {
  const model = createScriptedModel([])
  it.each<[string, Partial<PresetConfig>, RegExp]>([
    ['guard', { guard: 'yes' as unknown as boolean }, /^presetPlugin: `guard` must be a boolean or plan-guard's config, not "yes"$/],
    ['freshSessions', { freshSessions: 1 as unknown as boolean }, /^presetPlugin: `freshSessions` must be a boolean, not 1$/],
    [
      'handoffModels',
      { handoffModels: 'x' as unknown as string[] },
      /^presetPlugin: `handoffModels` must be an array of model ids, not "x"$/,
    ],
  ])('a wrong `%s` is a TypeError naming it, and nothing is composed', (_, config, message) => {
    const root = new Context({ logger: recordingLogger() })
    expect(() => root.plugin(presetPlugin, { model, ...config })).toThrow(message)
    expect(root.get('sessions')).toBeUndefined()
  })

  it('each layer reports its own part: a blank section is plan-policy’s error, repeated sections plan-tool’s; the host is undone', () => {
    for (const [config, message] of [
      [{ section: '  ' }, 'needs a non-empty `section`'],
      [{ requiredSections: ['Risks', ' risks '] }, 'requiredSections'],
      [{ planDir: '' }, 'dir'],
    ] as const) {
      const root = new Context({ logger: recordingLogger() })
      expect(() => root.plugin(presetPlugin, { model, ...config })).toThrow(message)
      expect(root.get('sessions'), JSON.stringify(config)).toBeUndefined()
      expect(root.get('planMode')).toBeUndefined()
    }
  })

  it('a missing config is a TypeError saying `model` is needed', () => {
    const root = new Context({ logger: recordingLogger() })
    expect(() => root.plugin(presetPlugin, undefined as unknown as PresetConfig)).toThrow(
      'presetPlugin needs a config object with at least `model`',
    )
  })
})
