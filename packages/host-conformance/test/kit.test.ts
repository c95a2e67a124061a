import { readFileSync, readdirSync } from 'node:fs'
import { Context } from '@planmode/context'
import { describe, expect, it } from 'vitest'
import {
  HOST_DUTIES,
  HostConformanceError,
  createConformanceModel,
  describeHostConformance,
  hostConformanceCases,
  type HostFactory,
} from '@planmode/host-conformance'
import type { HostAgent } from '@planmode/host'
import { referenceHost } from './support/reference-host.js'

const call = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }] }

describe('createConformanceModel', () => {
  it('answers doGenerate and doStream from one queue and records every request', async () => {
    const model = createConformanceModel([{ text: 'one' }, { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }])
    const generated = await model.doGenerate(call)
    expect(generated.content).toEqual([{ type: 'text', text: 'one' }])
    expect(generated.finishReason.unified).toBe('stop')
    const { stream } = await model.doStream(call)
    const parts: { type: string }[] = []
    for await (const part of stream as unknown as AsyncIterable<{ type: string }>) parts.push(part)
    expect(parts.map((part) => part.type)).toEqual([
      'stream-start',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-end',
      'tool-call',
      'finish',
    ])
    expect(parts[4]).toMatchObject({ toolName: 'read', input: '{"path":"a"}', toolCallId: 'conformance_call_1' })
    expect(model.requests).toHaveLength(2)
  })

  it('throws for a request past the script and records it as an overrun', async () => {
    const model = createConformanceModel()
    await expect(model.doGenerate(call)).rejects.toThrow('conformance model: no scripted response left for request #1')
    expect(model.overruns).toEqual([1])
  })

  it('records and rethrows what a scripted function throws', async () => {
    const model = createConformanceModel([
      () => {
        throw new Error('boom')
      },
    ])
    await expect(model.doStream(call)).rejects.toThrow('boom')
    expect(model.scriptErrors).toHaveLength(1)
  })
})

describe('hostConformanceCases', () => {
  it('has a case for every duty, each titled with its duty name', () => {
    const cases = hostConformanceCases(referenceHost)
    expect(new Set(cases.map((check) => check.duty))).toEqual(new Set(HOST_DUTIES.map((info) => info.duty)))
    for (const check of cases) expect(check.title.startsWith(`duty "${check.duty}": `)).toBe(true)
  })

  it('marks skipped duties and does not run them', async () => {
    let built = 0
    const counting: HostFactory = (environment) => {
      built += 1
      return referenceHost(environment)
    }
    const cases = hostConformanceCases(counting, { skip: ['restart-from-log'] })
    const skipped = cases.filter((check) => check.skipped)
    expect(skipped.map((check) => check.duty)).toEqual(['restart-from-log', 'restart-from-log', 'restart-from-log'])
    for (const check of skipped) await check.run()
    expect(built).toBe(0)
  })

  it('a host without openAgent fails the restart case by name', async () => {
    const noRestart: HostFactory = async (environment) => {
      const { openAgent: _none, ...host } = await referenceHost(environment)
      return host
    }
    const restart = hostConformanceCases(noRestart).find((check) => check.duty === 'restart-from-log')!
    await expect(restart.run()).rejects.toThrow(/^duty "restart-from-log": the host adapter has no openAgent/)
  })

  it('a prompt that never settles fails its case by name after the operation timeout', async () => {
    const hanging: HostFactory = async (environment) => ({ ...(await referenceHost(environment)), prompt: () => new Promise(() => {}) })
    // Long enough for the operations before the prompt (createAgent makes a session on disk) on a loaded machine:
    // with 50 ms a slow createAgent was named instead of the hanging prompt.
    const turns = hostConformanceCases(hanging, { operationTimeoutMs: 5_000 }).find((check) => check.duty === 'turns-and-steps')!
    const error = await turns.run().then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(HostConformanceError.isInstance(error) && error.duty).toBe('turns-and-steps')
    expect((error as Error).message).toBe('duty "turns-and-steps": prompt("one") did not settle within 5000 ms')
  })

  it('a host that takes fewer steps than scripted fails turns-and-steps, naming the reply left', async () => {
    const oneStep: HostFactory<HostAgent> = async (environment) => {
      const host = await referenceHost(environment)
      host.context.on(
        'agent/pre-step',
        async (payload, next) => (payload.step > 1 ? { kind: 'reject', reason: 'one step per turn' } : next()),
        { prepend: true },
      )
      return host
    }
    const turns = hostConformanceCases(oneStep).find((check) => check.duty === 'turns-and-steps')!
    await expect(turns.run()).rejects.toThrow(
      /^duty "turns-and-steps": prompt\("one"\) sent 1 request\(s\) and left 1 scripted reply\(ies\) unanswered: the model called tools but the host took no next step/,
    )
  })

  it('a request that is not a logged step fails turns-and-steps where the transcript is compared', async () => {
    const unlogged: HostFactory<HostAgent> = async (environment) => {
      const host = await referenceHost(environment)
      return {
        ...host,
        async createAgent(options) {
          const agent = await host.createAgent(options)
          const append = agent.session.append.bind(agent.session)
          Object.defineProperty(agent.session, 'append', {
            value: (type: string, data: unknown) =>
              type === 'step/start' || type === 'step/end'
                ? Promise.resolve({ type, seq: -1, time: 0, data })
                : append(type as never, data as never),
          })
          return agent
        },
      }
    }
    const notices = hostConformanceCases(unlogged).find((check) => check.duty === 'notices')!
    await expect(notices.run()).rejects.toThrow(
      /^duty "turns-and-steps": every model request must be a logged step: the model got 2 request\(s\), the log has 0 step\/start\(s\)/,
    )
  })

  it('a prompt whose turn is not closed fails turns-and-steps in a case of another duty, before that duty is checked', async () => {
    const unended: HostFactory<HostAgent> = async (environment) => {
      const host = await referenceHost(environment)
      return {
        ...host,
        async createAgent(options) {
          const agent = await host.createAgent(options)
          const append = agent.session.append.bind(agent.session)
          Object.defineProperty(agent.session, 'append', {
            value: (type: string, data: unknown) =>
              type === 'turn/end' ? Promise.resolve({ type, seq: -1, time: 0, data }) : append(type as never, data as never),
          })
          return agent
        },
      }
    }
    const header = hostConformanceCases(unended).find((check) => check.duty === 'request-header')!
    await expect(header.run()).rejects.toThrow(
      /^duty "turns-and-steps": prompt\("one"\) must log one turn\/start, then its turn\/end, .*; it logged turn\/start step\/start step\/end\./,
    )
  })

  it('a temporary directory the kit cannot make fails the case, naming it and the cause', async () => {
    const saved = process.env.TMPDIR
    process.env.TMPDIR = '/nonexistent/planmode-conformance-parent'
    try {
      const [first] = hostConformanceCases(referenceHost)
      const error = await first!.run().then(
        () => undefined,
        (thrown: unknown) => thrown,
      )
      expect(HostConformanceError.isInstance(error)).toBe(true)
      expect((error as Error).message).toMatch(
        /^duty "services": the kit could not create the case's temporary directory \(the test environment, not the host\): ENOENT/,
      )
      expect((error as Error).cause).toBeInstanceOf(Error)
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
  })

  it('defaults to a 4 000 ms operation timeout and asks the runner for 10 000 ms; both can be set, and must be consistent', () => {
    expect(hostConformanceCases(referenceHost).every((check) => check.timeoutMs === 10_000)).toBe(true)
    expect(hostConformanceCases(referenceHost, { operationTimeoutMs: 1_000 })[0]!.timeoutMs).toBe(4_000)
    expect(hostConformanceCases(referenceHost, { operationTimeoutMs: 1_000, testTimeoutMs: 1_500 })[0]!.timeoutMs).toBe(1_500)
    expect(() => hostConformanceCases(referenceHost, { operationTimeoutMs: 5_000, testTimeoutMs: 5_000 })).toThrow(RangeError)
    expect(() => hostConformanceCases(referenceHost, { operationTimeoutMs: 0 })).toThrow(/operationTimeoutMs must be a positive number/)
    expect(() => hostConformanceCases(referenceHost, { operationTimeoutMs: Number.NaN })).toThrow(RangeError)
  })

  it('a factory that throws fails the case, naming its duty and the error', async () => {
    const failing: HostFactory = () => {
      throw new Error('no host today')
    }
    const [first] = hostConformanceCases(failing)
    await expect(first!.run()).rejects.toThrow('duty "services": the host factory threw: no host today')
  })

  it('a host without a context fails the services duty', async () => {
    const contextless = (() => ({
      context: undefined,
      createAgent: () => undefined,
      prompt: async () => undefined,
    })) as unknown as HostFactory
    const cases = hostConformanceCases(contextless).filter((check) => check.duty === 'review')
    await expect(cases[0]!.run()).rejects.toThrow('duty "services": the host has no `context`')
  })

  it('a host whose context lacks a registry fails the services duty, naming the service', async () => {
    const bare: HostFactory = () => ({ context: new Context(), createAgent: () => undefined as never, prompt: async () => undefined })
    const [services] = hostConformanceCases(bare)
    await expect(services!.run()).rejects.toThrow('duty "services": the host\'s context provides no "systemPrompt" service')
  })
})

describe('the package', () => {
  it('does not depend on @planmode/host at runtime: neither its manifest, its sources nor its build name it', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >
    expect(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })).not.toContain('@planmode/host')
    // from '…', import '…', import('…'), require('…') of exactly @planmode/host (not @planmode/host-conformance)
    const names = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]@planmode\/host['"]/
    expect("import { x } from '@planmode/host'").toMatch(names)
    expect('const host = require("@planmode/host")').toMatch(names)
    expect("await import('@planmode/host')").toMatch(names)
    expect("import '@planmode/host'").toMatch(names)
    expect("import { x } from '@planmode/host-conformance'").not.toMatch(names)
    for (const folder of ['src', 'dist']) {
      const files = readdirSync(new URL(`../${folder}/`, import.meta.url), { recursive: true, encoding: 'utf8' }).filter((file) =>
        /\.(ts|js|cjs|cts|mts)$/.test(file),
      )
      expect(files.length, `${folder}/ holds no built or source files (build the package first)`).toBeGreaterThan(0)
      for (const file of files)
        expect(readFileSync(new URL(`../${folder}/${file}`, import.meta.url), 'utf8'), `${folder}/${file}`).not.toMatch(names)
    }
  })
})

describe('HostConformanceError', () => {
  it('names the duty in its message and field, and is recognised across copies', () => {
    const error = new HostConformanceError('command-args', 'command/run.args must be a string')
    expect(error.message).toBe('duty "command-args": command/run.args must be a string')
    expect(error.duty).toBe('command-args')
    expect(error.name).toBe('HostConformanceError')
    expect(HostConformanceError.isInstance(error)).toBe(true)
    expect(HostConformanceError.isInstance(new Error('duty "x": y'))).toBe(false)
    expect(HostConformanceError.isInstance(null)).toBe(false)
  })
})

describe('describeHostConformance', () => {
  it('declares one test per case inside one group, skipped ones through it.skip, each with the runner timeout as third argument', () => {
    const groups: string[] = []
    const tests: string[] = []
    const skipped: string[] = []
    const timeouts: (number | undefined)[] = []
    const it = Object.assign(
      (name: string, _body: unknown, timeout?: number) => {
        tests.push(name)
        timeouts.push(timeout)
      },
      { skip: (name: string, _body: unknown, timeout?: number) => void skipped.push(`${name} (${String(timeout)} ms)`) },
    )
    describeHostConformance('my host', referenceHost, {
      describe: (name, body) => {
        groups.push(name)
        body()
      },
      it,
      skip: ['projections'],
    })
    expect(groups).toEqual(['my host'])
    expect(tests).toHaveLength(hostConformanceCases(referenceHost).length - 1)
    expect(timeouts.every((timeout) => timeout === 10_000)).toBe(true)
    expect(skipped).toEqual([`${hostConformanceCases(referenceHost).find((check) => check.duty === 'projections')!.title} (10000 ms)`])
  })

  it('without it.skip, a skipped duty declares no test, so it never counts as passed', () => {
    const titles: string[] = []
    describeHostConformance('my host', referenceHost, {
      describe: (_name, body) => body(),
      it: (name: string) => void titles.push(name),
      skip: HOST_DUTIES.filter((info) => info.duty !== 'services').map((info) => info.duty),
    })
    expect(titles).toEqual(
      hostConformanceCases(referenceHost)
        .filter((check) => check.duty === 'services')
        .map((check) => check.title),
    )
  })
})
