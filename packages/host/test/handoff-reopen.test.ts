// A handoff's model over a restart: an agent created over a reopened session (no `model` of its own) goes on
// with the model the session's last request/header names, when an entry of the `models` map is that model.
// Each test runs a first host over a JSONL folder, disposes it (its locks released), then a second context
// opens the same folder — or a child process is killed and this process opens what it left.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@planmode/context'
import {
  createScriptedModel,
  hostPlugin,
  type AgentModels,
  type HostAgent,
  type ScriptedModel,
  type ScriptedResponse,
} from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bundleChild, recordingLogger } from './helpers.js'

declare module '@planmode/seams' {
  interface SessionEventMap {
    /** The first event of a fresh session in these tests: a layer's event that records the model chosen, as plan-tool's `plan/handoff` does. */
    'test/handoff': { readonly model?: string }
  }
}

const HANDOFF_TOOL = 'hand_off'
const callHandoff: ScriptedResponse = { toolCalls: [{ toolName: HANDOFF_TOOL, input: {}, toolCallId: 'h1' }] }

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})
async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'planmode-handoff-reopen-'))
  dirs.push(dir)
  return dir
}

/** A host over `dir` with the default model `main` and `models`; a tool whose call hands the agent's work on to model `other`. */
function host(dir: string, main: ScriptedModel, models?: AgentModels) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  ctx.plugin(hostPlugin, { dir, model: main, retryDelayMs: 0, ...(models === undefined ? {} : { models }) })
  ctx.require('tools').register<Record<string, never>, string>({
    name: HANDOFF_TOOL,
    description: 'Hands the work on to model "other" (test).',
    parameters: { type: 'object', properties: {} },
    execute: (_input, execution) => {
      ctx.emit('agent/handoff', { agent: execution.agent!, toolCallId: execution.toolCallId, model: 'other' })
      return 'handed on'
    },
  })
  const sessions = ctx.require('sessions')
  const agents = ctx.require('agents')
  const warnings = () => logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)
  return { ctx, logger, sessions, agents, warnings }
}

const scripted = (modelId: string, responses: ScriptedResponse[] = []) => createScriptedModel(responses, { modelId })
const headers = (events: readonly SessionEvent[]) =>
  events
    .filter((event) => event.type === 'request/header')
    .map((event) => `${(event.data as { reason: string }).reason} ${(event.data as { model: string }).model}`)

/** A first host: a session whose agent handed off to `other` (its last header names `scripted:other`), then disposed. */
async function handedOffSession(dir: string): Promise<string> {
  const other = scripted('other', [{ text: 'carried out' }])
  const first = host(dir, scripted('main', [callHandoff]), { other })
  const agent = first.agents.create({ session: await first.sessions.create() })
  expect((await agent.prompt('plan it')).reason).toBe('completed')
  expect(headers(agent.session.events)).toEqual(['initial scripted:main', 'change scripted:other'])
  first.ctx.dispose()
  return agent.session.id
}

describe('after a reopen, the agent goes on with the model the log last used', () => {
  it('a handoff’s model: the reopened agent starts on the entry of `models` that is that model (matched by provider:modelId, not by key), and its next request logs no header', async () => {
    const dir = await folder()
    const id = await handedOffSession(dir)
    const main = scripted('main')
    const other = scripted('other', [{ text: 'resumed on other' }])
    const second = host(dir, main, { 'renamed-since': other })
    const session = await second.sessions.open(id)
    const agent = second.agents.create({ session })
    expect(agent.model).toBe(other)
    await agent.prompt('go on')
    expect(other.requests).toHaveLength(1)
    expect(main.requests).toHaveLength(0)
    // Same model, same system text and tools: no new header, so the provider's prompt cache carries on.
    expect(headers(session.events)).toEqual(['initial scripted:main', 'change scripted:other'])
    expect(second.warnings()).toEqual([])
    second.ctx.dispose()
  })

  it('two entries that are the same model: the first in key order', async () => {
    const dir = await folder()
    const id = await handedOffSession(dir)
    const a = scripted('other')
    const b = scripted('other')
    const second = host(dir, scripted('main'), { a, b })
    expect(second.agents.create({ session: await second.sessions.open(id) }).model).toBe(a)
    second.ctx.dispose()
  })

  it('a `model` given to agents.create wins over the log', async () => {
    const dir = await folder()
    const id = await handedOffSession(dir)
    const other = scripted('other')
    const chosen = scripted('chosen')
    const second = host(dir, scripted('main'), { other })
    expect(second.agents.create({ session: await second.sessions.open(id), model: chosen }).model).toBe(chosen)
    expect(second.warnings()).toEqual([])
    second.ctx.dispose()
  })

  it('no header yet (a session that never made a request): the default model, no warning', async () => {
    const dir = await folder()
    const first = host(dir, scripted('main'))
    const { id } = await first.sessions.create()
    first.ctx.dispose()
    const main = scripted('main', [{ text: 'first answer' }])
    const second = host(dir, main, { other: scripted('other') })
    const agent = second.agents.create({ session: await second.sessions.open(id) })
    expect(agent.model).toBe(main)
    await agent.prompt('hello')
    expect(headers(agent.session.events)).toEqual(['initial scripted:main'])
    expect(second.warnings()).toEqual([])
    second.ctx.dispose()
  })

  it('a header naming the default model: the default model, even when `models` holds one like it too', async () => {
    const dir = await folder()
    const first = host(dir, scripted('main', [{ text: 'hi' }]))
    const agent = first.agents.create({ session: await first.sessions.create() })
    await agent.prompt('hello')
    first.ctx.dispose()
    const main = scripted('main', [{ text: 'again' }])
    const second = host(dir, main, { alias: scripted('main'), other: scripted('other') })
    const reopened = second.agents.create({ session: await second.sessions.open(agent.session.id) })
    expect(reopened.model).toBe(main)
    await reopened.prompt('again')
    expect(main.requests).toHaveLength(1)
    expect(headers(reopened.session.events)).toEqual(['initial scripted:main'])
    expect(second.warnings()).toEqual([])
    second.ctx.dispose()
  })

  it.each<[string, AgentModels | undefined, string]>([
    ['a map that no longer holds it', { third: scripted('third') }, 'no entry of the `models` option is that model'],
    ['no `models` option', undefined, 'no `models` option is given'],
  ])(
    'a header naming a model no longer configured (%s): the default model, one warning per session, and a change header',
    async (_name, models, why) => {
      const dir = await folder()
      const id = await handedOffSession(dir)
      const main = scripted('main', [{ text: 'back on main' }])
      const second = host(dir, main, models)
      const session = await second.sessions.open(id)
      const agent = second.agents.create({ session })
      expect(agent.model).toBe(main)
      // A second agent over the same session does not warn again.
      second.agents.create({ session }).dispose()
      expect(second.warnings()).toEqual([
        `agents.create (session ${id}): the session's last request went to "scripted:other", but ${why}; the agent starts on the default model "scripted:main"`,
      ])
      await agent.prompt('go on')
      expect(main.requests).toHaveLength(1)
      expect(headers(session.events)).toEqual(['initial scripted:main', 'change scripted:other', 'change scripted:main'])
      second.ctx.dispose()
    },
  )

  it('a function resolver cannot be searched: the default model, a warning that says so, and the resolver is not asked', async () => {
    const dir = await folder()
    const id = await handedOffSession(dir)
    const main = scripted('main')
    const asked: string[] = []
    const other = scripted('other')
    const second = host(dir, main, (name) => (asked.push(name), name === 'other' ? other : undefined))
    const agent: HostAgent = second.agents.create({ session: await second.sessions.open(id) })
    expect(agent.model).toBe(main)
    expect(asked).toEqual([])
    expect(second.warnings()).toEqual([
      `agents.create (session ${id}): the session's last request went to "scripted:other", but the \`models\` option is a function, which cannot be searched for it (pass \`model\` to agents.create to go on with it); the agent starts on the default model "scripted:main"`,
    ])
    second.ctx.dispose()
  })
})

/**
 * A host process that hands off to a fresh session with model `other` and dies before that session's first
 * request: the fresh session's first pre-step never ends, and the test SIGKILLs the process once it prints
 * the two session ids.
 */
const childSource = `
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from './index.ts'
const [dir] = process.argv.slice(2)
const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error(m) { console.error(m) } } })
const main = createScriptedModel([{ toolCalls: [{ toolName: 'hand_off', input: {}, toolCallId: 'h1' }] }], { modelId: 'main' })
ctx.plugin(hostPlugin, { dir, model: main, models: { other: createScriptedModel([], { modelId: 'other' }) } })
ctx.require('tools').register({
  name: 'hand_off',
  description: 'Hands the work on to a fresh session on model "other".',
  parameters: { type: 'object', properties: {} },
  execute: (_input, execution) => {
    ctx.emit('agent/handoff', { agent: execution.agent, toolCallId: execution.toolCallId, model: 'other', fresh: { first: { type: 'test/handoff', data: { model: 'other' } } } })
    return 'handed on'
  },
})
ctx.on('agent/pre-step', async (payload, next) => {
  const session = payload.agent.session
  if (session.events[0]?.type !== 'test/handoff') return next()
  await session.settled()
  process.stdout.write(origin.id + ' ' + session.id + '\\n')
  return new Promise(() => {})
})
const origin = await ctx.require('sessions').create()
await ctx.require('agents').create({ session: origin }).prompt('plan it')
`

let childFile: string
beforeAll(async () => {
  childFile = await bundleChild('host-handoff-reopen-test', childSource)
})
const children = new Set<ReturnType<typeof spawn>>()
afterAll(() => {
  for (const child of children) child.kill('SIGKILL')
})

/** Runs the child over `dir` until it prints the ids, SIGKILLs it and resolves with them once it has exited. */
function runUntilFresh(dir: string): Promise<{ origin: string; fresh: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childFile, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    let out = ''
    let err = ''
    let ids: { origin: string; fresh: string } | undefined
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const line = out.split('\n')[0]!
      if (ids === undefined && out.includes('\n')) {
        const [origin, fresh] = line.split(' ')
        ids = { origin: origin!, fresh: fresh! }
        child.kill('SIGKILL')
      }
    })
    // Until it is reaped, the child's pid counts as a live writer of its locks.
    child.on('exit', (_code, signal) => {
      children.delete(child)
      if (signal === 'SIGKILL' && ids !== undefined) resolve(ids)
      else reject(new Error(`the child exited before its fresh session's first request: ${err}`))
    })
  })
}

describe('a fresh session whose process died before its first request', () => {
  it('has no header, so its reopened agent starts on the default model; the application passes the model its first event recorded', async () => {
    const dir = await folder()
    const { origin, fresh } = await runUntilFresh(dir)
    const main = scripted('main')
    const other = scripted('other', [{ text: 'carried out on other' }])
    const models = { other }
    const second = host(dir, main, models)
    const session = await second.sessions.open(fresh)
    // The turn the dead process left open is closed at open; nothing of a request was logged.
    expect(session.events.map((event) => event.type)).toEqual(['test/handoff', 'turn/start', 'turn/end'])
    expect(session.events[2]!.data).toMatchObject({ turn: 1, reason: 'interrupted' })
    expect(second.agents.create({ session }).model).toBe(main)
    expect(second.warnings().filter((line) => line.startsWith('agents.create'))).toEqual([])
    // The origin handed off to a fresh session: its own model was never switched.
    const handing = await second.sessions.open(origin)
    expect(headers(handing.events)).toEqual(['initial scripted:main'])
    expect(second.agents.create({ session: handing }).model).toBe(main)
    // What the application does (it knows the layer's event): the chosen model, from the first event.
    const first = session.events[0] as SessionEvent<'test/handoff'>
    const chosen = first.data.model === undefined ? undefined : models[first.data.model as keyof typeof models]
    const agent = second.agents.create({ session, ...(chosen === undefined ? {} : { model: chosen }) })
    expect(agent.model).toBe(other)
    await agent.prompt('carry it out')
    expect(other.requests).toHaveLength(1)
    expect(headers(session.events)).toEqual(['initial scripted:other'])
    second.ctx.dispose()
  })
})
