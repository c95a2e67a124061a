import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { aiSdkHostFactory, type AiSdkConformanceOptions, type AiSdkConformanceSetup } from '@planmode/ai-sdk/conformance'
import { Context } from '@planmode/context'
import {
  commandsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import {
  createConformanceModel,
  describeHostConformance,
  HostConformanceError,
  hostConformanceCases,
  type HostConformanceCase,
} from '@planmode/host-conformance'
import { isInterruptedTurnEnd, type SessionEventMap } from '@planmode/seams'
import { jsonSchema, tool } from 'ai'

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** @planmode/host's runtimes and JSONL store, recording what the factory does with them. */
function hostSetup(record: string[] = []): (environment: { readonly dir: string }) => AiSdkConformanceSetup {
  return ({ dir }) => {
    const context = new Context({ logger: quiet })
    for (const runtime of [toolsPlugin, systemPromptPlugin, commandsPlugin, userQuestionsPlugin, sessionProjectionsPlugin])
      context.plugin(runtime)
    context.plugin(sessionStorePlugin, { dir })
    const sessions = context.require('sessions')
    return {
      context,
      createSession: () => sessions.create(),
      openSession: (id) => sessions.open(id),
      close() {
        record.push('close')
        context.dispose()
      },
    }
  }
}

/** Runs cases, and returns the error of each one that failed. */
async function failures(cases: readonly HostConformanceCase[]): Promise<unknown[]> {
  const results = await Promise.all(
    cases.map((check) =>
      check.run().then(
        () => undefined,
        (error: unknown) => error,
      ),
    ),
  )
  return results.filter((result) => result !== undefined)
}

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})
const freshDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'planmode-ai-sdk-factory-'))
  dirs.push(dir)
  return dir
}

// The agent options a host passes (a base prompt, a read-only tool of its own) do not break any duty.
describeHostConformance(
  '@planmode/ai-sdk/conformance with agent options (system, an own tool, maxSteps)',
  aiSdkHostFactory({
    setup: hostSetup(),
    agent: {
      system: 'You are a careful coding agent.',
      tools: {
        list_files: tool({
          description: 'Lists the files.',
          inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
          execute: async () => 'a.ts',
        }),
      },
      maxSteps: 10,
    },
  }),
  { describe, it },
)

describe('aiSdkHostFactory', () => {
  it('refuses a mode other than generate or stream, and a setup that is not a function (TypeError)', () => {
    expect(() => aiSdkHostFactory({ setup: hostSetup(), mode: 'steam' } as unknown as AiSdkConformanceOptions)).toThrow(
      new TypeError('aiSdkHostFactory: mode must be "generate" or "stream", got "steam"'),
    )
    expect(() => aiSdkHostFactory({} as AiSdkConformanceOptions)).toThrow(TypeError)
  })

  it('builds a host per case: agents over new sessions, a child with its owner, prompts through generate, close disposes the agents then calls the setup', async () => {
    const record: string[] = []
    const model = createConformanceModel([{ text: 'one' }, { text: 'two' }])
    const host = await aiSdkHostFactory({ setup: hostSetup(record) })({ model, models: {}, dir: await freshDir() })
    const parent = await host.createAgent()
    const child = await host.createAgent({ owner: parent })
    expect(child.owner).toBe(parent)
    expect(child.session).not.toBe(parent.session)
    await host.prompt(parent, 'hello')
    await host.prompt(child, 'hello too')
    expect(parent.session.events.map((event) => event.type).at(-1)).toBe('turn/end')
    expect(model.requests).toHaveLength(2)
    await host.close?.()
    expect(record).toEqual(['close'])
    expect((parent as { disposed?: boolean }).disposed).toBe(true)
    expect(host.context.active).toBe(false)
  })

  it('in stream mode, a prompt resolves once the consumed stream logged turn/end', async () => {
    const model = createConformanceModel([{ text: 'streamed' }])
    const host = await aiSdkHostFactory({ setup: hostSetup(), mode: 'stream' })({ model, models: {}, dir: await freshDir() })
    const agent = await host.createAgent()
    await host.prompt(agent, 'hello')
    expect(agent.session.events.at(-1)!.data).toEqual({ turn: 1, reason: 'completed' })
    await host.close?.()
  })

  it('without a setup close, close disposes the context', async () => {
    const host = await aiSdkHostFactory({
      setup({ dir }) {
        const { close: _, ...rest } = hostSetup()({ dir })
        return rest
      },
    })({ model: createConformanceModel([]), models: {}, dir: await freshDir() })
    await host.close?.()
    expect(host.context.active).toBe(false)
  })

  it('reopens a logged session with openSession; a turn its log left open is closed (interrupted) before the next turn', async () => {
    const dir = await freshDir()
    const factory = aiSdkHostFactory({ setup: hostSetup() })
    const first = await factory({ model: createConformanceModel([]), models: {}, dir })
    const agent = await first.createAgent()
    await agent.session.append('turn/start', { turn: 1 })
    await first.close?.()
    const model = createConformanceModel([{ text: 'again' }])
    const second = await factory({ model, models: {}, dir })
    const reopened = await second.openAgent!(agent.session.id)
    await second.prompt(reopened, 'continue')
    const ends = reopened.session.events
      .filter((event) => event.type === 'turn/end')
      .map((event) => event.data as SessionEventMap['turn/end'])
    expect(ends).toEqual([
      { turn: 1, reason: 'interrupted' },
      { turn: 2, reason: 'completed' },
    ])
    expect(isInterruptedTurnEnd(ends[0]!)).toBe(true)
    await second.close?.()
  })

  it('without openSession there is no openAgent, and the kit names restart-from-log', async () => {
    const factory = aiSdkHostFactory({
      setup({ dir }) {
        const { openSession: _, ...rest } = hostSetup()({ dir })
        return rest
      },
    })
    const host = await factory({ model: createConformanceModel([]), models: {}, dir: await freshDir() })
    expect(host.openAgent).toBeUndefined()
    await host.close?.()
    const errors = await failures(hostConformanceCases(factory).filter((check) => check.duty === 'restart-from-log'))
    expect(errors.length).toBeGreaterThan(0)
    for (const error of errors) expect(HostConformanceError.isInstance(error) && error.duty).toBe('restart-from-log')
  })

  it('a setup that throws fails every case naming services, with the setup error as the cause', async () => {
    const broken = new Error('no database')
    const [check] = hostConformanceCases(
      aiSdkHostFactory({
        setup() {
          throw broken
        },
      }),
    ).filter((candidate) => candidate.duty === 'services')
    const error = await check!.run().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(HostConformanceError.isInstance(error)).toBe(true)
    expect((error as HostConformanceError).message).toMatch(/^duty "services": the host factory threw/)
    expect((error as HostConformanceError).cause).toBe(broken)
  })

  it('a prompt for an agent this factory did not create rejects, naming it', async () => {
    const host = await aiSdkHostFactory({ setup: hostSetup() })({ model: createConformanceModel([]), models: {}, dir: await freshDir() })
    const stranger = { id: 'stranger', session: (await host.createAgent()).session, steer() {}, async inject() {} }
    await expect(host.prompt(stranger, 'hi')).rejects.toThrow('agent stranger was not created by this factory')
    await host.close?.()
  })
})
