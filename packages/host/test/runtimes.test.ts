import { describe, expect, it, vi } from 'vitest'
import {
  commandsPlugin,
  InvariantViolationError,
  parseCommandLine,
  ProjectionViewError,
  sessionInvariantsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import { UserQuestionError } from '@planmode/seams'
import type { ProjectionChange, ProjectionUnit, Session, SessionEvent, UserAnswer } from '@planmode/seams'
import { fakeAgent, newContext, schemaOf } from './helpers.js'

describe('system prompt runtime', () => {
  it('sorts sections by order (ties in registration order), joins non-empty texts and snapshots tools', () => {
    const { ctx } = newContext()
    ctx.plugin(toolsPlugin)
    ctx.plugin(systemPromptPlugin)
    const prompt = ctx.require('systemPrompt')
    prompt.section({ name: 'b', order: 20, text: 'B' })
    prompt.section({ name: 'a', order: 10, text: 'A' })
    prompt.section({ name: 'empty', order: 15, text: '' })
    prompt.section({ name: 'b2', order: 20, text: ({ agent }) => (agent === undefined ? 'no agent' : `for ${agent.id}`) })
    ctx.require('tools').register({ name: 'zz', description: 'z', parameters: { type: 'object' }, execute: () => 1 })
    ctx.require('tools').register({ name: 'aa', description: 'a', parameters: { type: 'object' }, execute: () => 1 })
    const assembled = prompt.assemble({})
    expect(assembled.sections.map((s) => s.name)).toEqual(['a', 'empty', 'b', 'b2'])
    expect(assembled.system).toBe('A\n\nB\n\nno agent')
    expect(assembled.tools.map((t) => t.name)).toEqual(['aa', 'zz'])
  })

  it('refuses a duplicate name and removes a section with its disposer', () => {
    const { ctx } = newContext()
    ctx.plugin(systemPromptPlugin)
    const prompt = ctx.require('systemPrompt')
    const dispose = prompt.section({ name: 'x', order: 1, text: 'X' })
    expect(() => prompt.section({ name: 'x', order: 2, text: 'Y' })).toThrow(/already registered/)
    dispose()
    expect(prompt.assemble({}).system).toBe('')
    expect(prompt.assemble({}).tools).toEqual([])
  })
})

describe('tool runtime', () => {
  const setup = () => {
    const { ctx } = newContext()
    ctx.plugin(toolsPlugin)
    return ctx.require('tools')
  }
  const execution = { signal: new AbortController().signal, toolCallId: 'c1' }

  it('runs a tool and renders its value', async () => {
    const tools = setup()
    tools.register<{ n: number }, { doubled: number }>({
      name: 'double',
      description: 'doubles',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false },
      execute: ({ n }) => ({ doubled: n * 2 }),
    })
    expect(await tools.execute('double', { n: 2 }, execution)).toEqual({
      isError: false,
      content: [{ type: 'text', text: '{"doubled":4}' }],
      value: { doubled: 4 },
    })
  })

  it('turns a thrown error into `Error: <message>`', async () => {
    const tools = setup()
    tools.register({
      name: 'boom',
      description: '',
      parameters: { type: 'object' },
      execute: () => {
        throw new Error('it broke')
      },
    })
    expect(await tools.execute('boom', {}, execution)).toEqual({ isError: true, content: [{ type: 'text', text: 'Error: it broke' }] })
  })

  it('validates arguments against the parameter schema with a clear error', async () => {
    const tools = setup()
    const execute = vi.fn(() => 'ok')
    tools.register({
      name: 'read',
      description: '',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, mode: { enum: ['a', 'b'] } },
        required: ['path'],
        additionalProperties: false,
      },
      execute,
    })
    const result = await tools.execute('read', { path: 3, mode: 'c', extra: true }, execution)
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toBe(
      'Error: invalid arguments for tool "read": /path: expected string, got integer; /mode: expected one of "a", "b", got "c"; /extra: unknown property',
    )
    expect((await tools.execute('read', 'nope', execution)).content[0]!.text).toBe(
      'Error: invalid arguments for tool "read": the input: expected object, got string',
    )
    expect(execute).not.toHaveBeenCalled()
  })

  it('reports an unknown tool, refuses duplicates, and sorts schemas; the disposer removes the tool', async () => {
    const tools = setup()
    expect((await tools.execute('nope', {}, execution)).content[0]!.text).toBe('Error: unknown tool "nope"')
    const dispose = tools.register({ name: 'b', description: 'B', parameters: { type: 'object' }, execute: () => 'x' })
    tools.register({ name: 'a', description: 'A', parameters: { type: 'object' }, execute: () => 'x' })
    expect(() => tools.register({ name: 'a', description: '', parameters: {}, execute: () => 1 })).toThrow(/already registered/)
    expect(tools.schemas()).toEqual([
      { name: 'a', description: 'A', parameters: { type: 'object' } },
      { name: 'b', description: 'B', parameters: { type: 'object' } },
    ])
    expect(JSON.stringify(tools.schemas())).toBe(JSON.stringify(tools.schemas()))
    dispose()
    expect(tools.get('b')).toBeUndefined()
  })

  it('uses toModelOutput when given', async () => {
    const tools = setup()
    tools.register({
      name: 't',
      description: '',
      parameters: { type: 'object' },
      execute: () => ({ approved: true }),
      toModelOutput: () => 'Approved.',
    })
    expect(await tools.execute('t', {}, execution)).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'Approved.' }],
      value: { approved: true },
    })
  })
})

describe('command runtime', () => {
  const setup = async () => {
    const { ctx } = newContext()
    ctx.plugin(sessionStorePlugin)
    ctx.plugin(commandsPlugin)
    const session = await ctx.require('sessions').create()
    return { ctx, commands: ctx.require('commands'), session, agent: fakeAgent(session) }
  }

  it('parses /name and the raw text after it', () => {
    expect(parseCommandLine('/plan')).toEqual({ name: 'plan', args: '' })
    expect(parseCommandLine('/plan   ')).toEqual({ name: 'plan', args: '' })
    expect(parseCommandLine('/plan \t\n')).toEqual({ name: 'plan', args: '' })
    expect(parseCommandLine('/plan off')).toEqual({ name: 'plan', args: ' off' })
    expect(parseCommandLine('/plan  two  spaces ')).toEqual({ name: 'plan', args: '  two  spaces ' })
    expect(parseCommandLine('plan')).toBeUndefined()
    expect(parseCommandLine('/')).toBeUndefined()
    expect(parseCommandLine('/ plan')).toBeUndefined()
  })

  it('logs command/run before the handler and command/done after it', async () => {
    const { commands, session, agent } = await setup()
    const seen: string[] = []
    commands.register({
      name: 'echo',
      description: 'Echo',
      handler: ({ rawInput, commandId }) => {
        seen.push(...session.events.map((e) => e.type))
        return { kind: 'success', text: `${commandId}:${rawInput}` }
      },
    })
    const result = await commands.execute({ agent, line: '/echo hi there' })
    expect(seen).toEqual(['command/run'])
    const [run, done] = session.events as SessionEvent[]
    expect(run).toMatchObject({ type: 'command/run', data: { name: 'echo', args: ' hi there', source: { kind: 'user' } } })
    const commandId = (run!.data as { commandId: string }).commandId
    expect(done).toMatchObject({ type: 'command/done', data: { commandId, kind: 'success', text: `${commandId}: hi there` } })
    expect(result).toEqual({ kind: 'success', text: `${commandId}: hi there` })
  })

  it('logs args as an empty string when nothing follows the name, and keeps the source', async () => {
    const { commands, session, agent } = await setup()
    commands.register({ name: 'x', description: '', handler: () => ({ kind: 'success', text: 'ok' }) })
    await commands.execute({ agent, line: '/x', source: { kind: 'plugin', plugin: 'p', form: 'macro' } })
    expect(session.events[0]!.data).toMatchObject({ args: '', source: { kind: 'plugin', plugin: 'p', form: 'macro' } })
  })

  it("logs args: '' for a bare /plan and for /plan followed by spaces only, and hands the handler the same string", async () => {
    const { commands, session, agent } = await setup()
    const inputs: string[] = []
    commands.register({
      name: 'plan',
      description: '',
      handler: ({ rawInput }) => (inputs.push(rawInput), { kind: 'success', text: 'ok' }),
    })
    await commands.execute({ agent, line: '/plan' })
    await commands.execute({ agent, line: '/plan   ' })
    await commands.execute({ agent, line: '/plan  off ' })
    const runs = session.events.filter((event) => event.type === 'command/run')
    expect(runs.map((event) => (event.data as { args: unknown }).args)).toEqual(['', '', '  off '])
    expect(inputs).toEqual(['', '', '  off '])
  })

  it('returns undefined for an unknown command and logs nothing', async () => {
    const { commands, session, agent } = await setup()
    expect(await commands.execute({ agent, line: '/nope x' })).toBeUndefined()
    expect(await commands.execute({ agent, line: 'not a command' })).toBeUndefined()
    expect(session.events).toEqual([])
  })

  it('turns a throwing handler into an error result logged as command/done kind error', async () => {
    const { commands, session, agent } = await setup()
    commands.register({
      name: 'bad',
      description: '',
      handler: async () => {
        throw new Error('nope')
      },
    })
    expect(await commands.execute({ agent, line: '/bad' })).toEqual({ kind: 'error', text: 'nope' })
    expect(session.events.map((e) => [e.type, (e.data as { kind?: string }).kind])).toEqual([
      ['command/run', undefined],
      ['command/done', 'error'],
    ])
  })

  it('passes attachments through to commands that take images and refuses them elsewhere', async () => {
    const { commands, session, agent } = await setup()
    const image = { id: 'img1', mediaType: 'image/png', data: 'AAAA' }
    const handler = vi.fn(() => ({ kind: 'success' as const, text: 'ok' }))
    commands.register({ name: 'pic', description: '', input: { images: true }, handler })
    commands.register({ name: 'txt', description: '', handler })
    await commands.execute({ agent, line: '/pic look', attachments: [image] })
    expect(handler).toHaveBeenCalledWith(expect.objectContaining({ attachments: [image], rawInput: ' look' }))
    handler.mockClear()
    expect(await commands.execute({ agent, line: '/txt', attachments: [image] })).toEqual({
      kind: 'error',
      text: '/txt does not accept image attachments.',
    })
    expect(handler).not.toHaveBeenCalled()
    expect(session.events.at(-1)).toMatchObject({ type: 'command/done', data: { kind: 'error' } })
  })

  it('turns a handler that returns something other than a result into an error result', async () => {
    const { commands, agent } = await setup()
    commands.register({ name: 'odd', description: '', handler: () => 'fine' as never })
    expect(await commands.execute({ agent, line: '/odd' })).toEqual({ kind: 'error', text: '/odd returned "fine", not a command result' })
  })

  it('lists commands by name and refuses duplicates', async () => {
    const { commands } = await setup()
    commands.register({ name: 'b', description: '', handler: () => ({ kind: 'success', text: '' }) })
    commands.register({ name: 'a', description: '', handler: () => ({ kind: 'success', text: '' }) })
    expect(commands.list().map((c) => c.name)).toEqual(['a', 'b'])
    expect(() => commands.register({ name: 'a', description: '', handler: () => ({ kind: 'success', text: '' }) })).toThrow(
      /already registered/,
    )
  })
})

describe('user questions', () => {
  const setup = async () => {
    const { ctx } = newContext()
    ctx.plugin(sessionStorePlugin)
    ctx.plugin(userQuestionsPlugin)
    const session = await ctx.require('sessions').create()
    return { ctx, questions: ctx.require('userQuestions'), agent: fakeAgent(session) }
  }
  const question = { id: 'q', header: 'Q', question: 'Which?', options: [{ label: 'A', description: 'a' }] }

  it('refuses NO_PROVIDER with the exact message', async () => {
    const { questions, agent } = await setup()
    const error = await questions.ask({ agent, questions: [question] }).catch((e: unknown) => e)
    expect(UserQuestionError.isInstance(error) && error.code).toBe('NO_PROVIDER')
    expect((error as Error).message).toBe('no user-questions provider is registered')
  })

  it('asks the latest provider; its disposer restores the previous one', async () => {
    const { questions, agent } = await setup()
    const answer = (label: string): UserAnswer[] => [{ id: 'q', selected: [label] }]
    questions.registerProvider({ ask: async () => answer('first') })
    const dispose = questions.registerProvider({ ask: async () => answer('second') })
    expect(await questions.ask({ agent, questions: [question] })).toEqual(answer('second'))
    dispose()
    expect(await questions.ask({ agent, questions: [question] })).toEqual(answer('first'))
  })

  it('refuses a child of a live agent with NOT_ROOT_AGENT, telling it to put the decision in its final result', async () => {
    const { questions, agent } = await setup()
    questions.registerProvider({ ask: async () => [] })
    const child = fakeAgent(agent.session, { id: 'child', owner: agent })
    const error = await questions.ask({ agent: child, questions: [question] }).catch((e: unknown) => e)
    expect(UserQuestionError.isInstance(error) && error.code).toBe('NOT_ROOT_AGENT')
    expect((error as Error).message).toMatch(/final result/)
  })

  it('refuses an aborted signal, and aborts while the provider is answering', async () => {
    const { questions, agent } = await setup()
    questions.registerProvider({ ask: () => new Promise(() => {}) })
    const before = new AbortController()
    before.abort()
    const e1 = await questions.ask({ agent, questions: [question], signal: before.signal }).catch((e: unknown) => e)
    expect(UserQuestionError.isInstance(e1) && e1.code).toBe('ASK_ABORTED')
    const during = new AbortController()
    const pending = questions.ask({ agent, questions: [question], signal: during.signal }).catch((e: unknown) => e)
    during.abort()
    const e2 = await pending
    expect(UserQuestionError.isInstance(e2) && e2.code).toBe('ASK_ABORTED')
  })

  it('passes a provider rejection through', async () => {
    const { questions, agent } = await setup()
    const cancelled = new UserQuestionError('ASK_CANCELLED', 'dismissed')
    questions.registerProvider({
      ask: async () => {
        throw cancelled
      },
    })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toBe(cancelled)
  })
})

describe('invariant registry', () => {
  it('checks every append before writing; a failing invariant throws and nothing is written', async () => {
    const { ctx } = newContext()
    ctx.plugin(sessionInvariantsPlugin)
    ctx.plugin(sessionStorePlugin)
    const session = await ctx.require('sessions').create()
    ctx
      .require('sessionInvariants')
      .register('no-empty', (event) => (event.type === 'user/message' && event.data.content.length === 0 ? 'expected content' : undefined))
    const error = await session.append('user/message', { content: [], source: { kind: 'user' } }).catch((e: unknown) => e)
    expect(InvariantViolationError.isInstance(error)).toBe(true)
    expect((error as Error).message).toContain('expected content')
    expect((error as Error).message).toContain('no-empty')
    expect(session.events).toEqual([])
    await session.append('turn/start', { turn: 1 })
    expect(session.events.map((e) => e.seq)).toEqual([0])
  })

  it('checks loaded sessions on registration and refuses a check they break; the disposer removes it', async () => {
    const { ctx } = newContext()
    ctx.plugin(sessionStorePlugin)
    ctx.plugin(sessionInvariantsPlugin)
    const session = await ctx.require('sessions').create()
    await session.append('turn/start', { turn: 1 })
    const invariants = ctx.require('sessionInvariants')
    expect(() => invariants.register('no-turns', (event) => (event.type === 'turn/start' ? 'no turns' : undefined))).toThrow(/no turns/)
    const dispose = invariants.register('no-ends', (event) => (event.type === 'turn/end' ? 'no ends' : undefined))
    await expect(session.append('turn/end', { turn: 1, reason: 'completed' })).rejects.toThrow(/no ends/)
    dispose()
    await session.append('turn/end', { turn: 1, reason: 'completed' })
    expect(session.events).toHaveLength(2)
  })
})

describe('session projections', () => {
  type Count = { n: number }
  const counting = (key: string, type: string): ProjectionUnit<Count, number> => ({
    key,
    stateVersion: 1,
    initial: () => ({ n: 0 }),
    apply: (state, event) => (event.type === type ? { n: state.n + 1 } : state),
    view: (state) => state.n,
    schema: schemaOf<number>((v) => (typeof v === 'number' ? undefined : 'expected a number')),
  })
  const setup = async () => {
    const { ctx, logger } = newContext()
    ctx.plugin(sessionStorePlugin)
    ctx.plugin(sessionProjectionsPlugin)
    const session = await ctx.require('sessions').create()
    return { ctx, logger, projections: ctx.require('sessionProjections'), session }
  }

  it('drives every unit on every append and snapshots synchronously', async () => {
    const { projections, session } = await setup()
    expect(projections.snapshot(session)).toEqual({ asOfSeq: -1, values: {} })
    projections.register(counting('starts', 'turn/start'))
    projections.register(counting('ends', 'turn/end'))
    expect(projections.keys()).toEqual(['starts', 'ends'])
    await session.append('turn/start', { turn: 1 })
    await session.append('turn/end', { turn: 1, reason: 'completed' })
    await session.append('turn/start', { turn: 2 })
    expect(projections.snapshot(session)).toEqual({ asOfSeq: 2, values: { starts: 2, ends: 1 } })
  })

  it('folds the existing log when a unit registers late, and fires the change feed once per changed unit', async () => {
    const { projections, session } = await setup()
    await session.append('turn/start', { turn: 1 })
    await session.append('turn/end', { turn: 1, reason: 'completed' })
    projections.register(counting('starts', 'turn/start'))
    projections.register(counting('ends', 'turn/end'))
    const changes: ProjectionChange[] = []
    projections.onChange((change) => changes.push(change))
    expect(projections.snapshot(session).values).toEqual({ starts: 1, ends: 1 })
    await session.append('turn/start', { turn: 2 })
    await session.append('step/start', { turn: 2, step: 1 })
    expect(changes.map(({ key, value, asOfSeq }) => ({ key, value, asOfSeq }))).toEqual([{ key: 'starts', value: 2, asOfSeq: 2 }])
    expect(changes[0]!.session).toBe(session)
  })

  it('sees a change even when a listener snapshotted the session first', async () => {
    const { ctx, projections, session } = await setup()
    ctx.on('session/event', ({ session: s }) => void projections.snapshot(s), { prepend: true })
    projections.register(counting('starts', 'turn/start'))
    const changes: unknown[] = []
    projections.onChange((change) => changes.push(change.value))
    await session.append('turn/start', { turn: 1 })
    expect(changes).toEqual([1])
  })

  it('refuses an asynchronous schema and does not deliver an invalid change', async () => {
    const { projections, session, logger } = await setup()
    const unit = counting('async', 'turn/start')
    projections.register({
      ...unit,
      schema: { '~standard': { version: 1, vendor: 't', validate: async (value: unknown) => ({ value: value as number }) } },
    })
    const changes: unknown[] = []
    projections.onChange((change) => changes.push(change))
    await session.append('turn/start', { turn: 1 })
    expect(changes).toEqual([])
    expect(logger.lines.some((l) => l.level === 'error' && l.message.includes('projection "async"'))).toBe(true)
    expect(() => projections.snapshot(session)).toThrow(
      'projection "async": its schema validated asynchronously; projection schemas must be synchronous',
    )
  })

  it('stays correct when a host replaces the events array (compaction, truncation)', async () => {
    const { ctx, projections } = await setup()
    projections.register(counting('starts', 'turn/start'))
    const event = (seq: number, type = 'turn/start'): SessionEvent => ({ type, seq, time: 0, data: { turn: seq } }) as SessionEvent
    const session = {
      id: 'custom',
      events: [event(0), event(1), event(2, 'x')],
      append: async () => {
        throw new Error('unused')
      },
    } as unknown as Session & { events: SessionEvent[] }
    expect(projections.snapshot(session)).toEqual({ asOfSeq: 2, values: { starts: 2 } })
    // Compaction: a new array that keeps the tail, then grows.
    session.events = [event(2, 'x'), event(3)]
    ctx.emit('session/event', { session, event: event(3) })
    expect(projections.snapshot(session)).toEqual({ asOfSeq: 3, values: { starts: 3 } })
    // Truncation below what was folded: refold from the new array.
    session.events = [event(0)]
    expect(projections.snapshot(session)).toEqual({ asOfSeq: 0, values: { starts: 1 } })
  })

  it('refuses a duplicate key, checks every view against its schema, and drops a disposed unit', async () => {
    const { projections, session } = await setup()
    const dispose = projections.register(counting('starts', 'turn/start'))
    expect(() => projections.register(counting('starts', 'x'))).toThrow(/already registered/)
    projections.register({ ...counting('bad', 'x'), view: () => 'not a number' as unknown as number })
    expect(
      ProjectionViewError.isInstance(
        (() => {
          try {
            projections.snapshot(session)
          } catch (e) {
            return e
          }
        })(),
      ),
    ).toBe(true)
    expect(() => projections.snapshot(session)).toThrow('projection "bad": view failed its schema: expected a number')
    dispose()
    expect(projections.keys()).toEqual(['bad'])
  })
})
