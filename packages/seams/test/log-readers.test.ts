import { describe, expect, it } from 'vitest'
import {
  INTERRUPTED_TURN_ERROR,
  closeInterruptedTurn,
  isInterruptedTurnEnd,
  logRequestHeaderIfChanged,
  nextTurn,
  openQuestionsOf,
  openTurnOf,
  transcriptEntries,
} from '@planmode/seams'
import type { Session, SessionEvent, SessionEventMap, SessionEventType, ToolSchema, UserMessage } from '@planmode/seams'

/** A session over an array, as small as the seams allow; `refuse` makes appends of a type reject. */
function memorySession(id = 's1', refuse?: string): Session & { events: SessionEvent[] } {
  const events: SessionEvent[] = []
  return {
    id,
    events,
    async append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
      if (type === refuse) throw new Error(`refused ${type}`)
      const event = { type, seq: events.length, time: events.length, data } as SessionEvent<T>
      events.push(event as SessionEvent)
      return event
    },
  }
}

function log(...entries: [SessionEventType, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ type, seq, time: seq, data }) as SessionEvent)
}

const user = (text: string): UserMessage => ({ content: [{ type: 'text', text }], source: { kind: 'user' } })
const call = (toolCallId: string, input: unknown = {}) => ({ type: 'tool-call' as const, toolCallId, toolName: 'read', input })
const result = (toolCallId: string, text: string, isError = false) => ({
  toolCallId,
  toolName: 'read',
  isError,
  content: [{ type: 'text' as const, text }],
})

describe('transcriptEntries: the transcript of a log, in no model format', () => {
  it('keeps user, assistant and tool entries in log order; every other event is log-only', () => {
    const events = log(
      ['turn/start', { turn: 1 }],
      ['user/message', user('hi')],
      ['request/header', { reason: 'initial', turn: 1, step: 1, model: 'm:m', system: '', tools: [] }],
      ['step/start', { turn: 1, step: 1 }],
      ['assistant/message', { content: [{ type: 'text', text: 'looking' }, call('c1', { path: 'a' })], turn: 1, step: 1 }],
      ['tool/result', result('c1', 'line 1')],
      ['command/run', { commandId: 'k', name: 'plan', args: '', source: { kind: 'user' } }],
      ['plan/mode' as SessionEventType, { active: true }],
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: 'completed' }],
    )
    expect(transcriptEntries(events)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'looking' }, call('c1', { path: 'a' })] },
      { role: 'tool', results: [{ kind: 'logged', toolCallId: 'c1', toolName: 'read', isError: false, text: 'line 1' }] },
    ])
  })

  it('drops reasoning and empty text, leaves out messages with nothing to send, and keeps images', () => {
    const image = { type: 'image' as const, attachment: { id: 'i1', mediaType: 'image/png', data: 'AAAA', name: 'a.png' } }
    const events = log(
      ['user/message', { content: [image, { type: 'text', text: '' }], source: { kind: 'user' } }],
      ['user/message', { content: [], source: { kind: 'user' } }],
      [
        'assistant/message',
        {
          content: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: '' },
          ],
          turn: 1,
          step: 1,
        },
      ],
      [
        'assistant/message',
        {
          content: [
            { type: 'reasoning', text: 'so' },
            { type: 'text', text: 'ok' },
          ],
          turn: 1,
          step: 2,
        },
      ],
    )
    expect(transcriptEntries(events)).toEqual([
      { role: 'user', content: [image, { type: 'text', text: '' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ])
  })

  it('reads a call’s raw-text input back: the JSON it parses to, else {}', () => {
    const events = log([
      'assistant/message',
      { content: [call('c1', '{"a":1}'), call('c2', 'not json'), call('c3', [1])], turn: 1, step: 1 },
    ])
    const [assistant] = transcriptEntries(events)
    expect(assistant).toEqual({ role: 'assistant', content: [call('c1', { a: 1 }), call('c2', {}), call('c3', [1])] })
  })

  it('groups a batch’s results, joins a result’s text blocks, keeps failures, and leaves out orphan and repeated results', () => {
    const events = log(
      ['assistant/message', { content: [call('c1'), call('c2')], turn: 1, step: 1 }],
      ['tool/result', result('zz', 'orphan')],
      [
        'tool/result',
        {
          ...result('c1', 'a'),
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
      ['tool/result', result('c1', 'again')],
      ['tool/result', result('c2', 'Error: no', true)],
    )
    expect(transcriptEntries(events).slice(1)).toEqual([
      {
        role: 'tool',
        results: [
          { kind: 'logged', toolCallId: 'c1', toolName: 'read', isError: false, text: 'a\nb' },
          { kind: 'logged', toolCallId: 'c2', toolName: 'read', isError: true, text: 'Error: no' },
        ],
      },
    ])
  })

  it('gives a call without a result a missing result, before the next assistant message and at the end of the log', () => {
    const events = log(
      ['assistant/message', { content: [call('c1'), call('c2')], turn: 1, step: 1 }],
      ['tool/result', result('c2', 'two')],
      ['turn/end', { turn: 1, reason: 'interrupted' }],
      ['user/message', user('again')],
      ['assistant/message', { content: [call('c3')], turn: 2, step: 1 }],
    )
    expect(transcriptEntries(events)).toEqual([
      { role: 'assistant', content: [call('c1'), call('c2')] },
      {
        role: 'tool',
        results: [
          { kind: 'logged', toolCallId: 'c2', toolName: 'read', isError: false, text: 'two' },
          { kind: 'missing', toolCallId: 'c1', toolName: 'read' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
      { role: 'assistant', content: [call('c3')] },
      { role: 'tool', results: [{ kind: 'missing', toolCallId: 'c3', toolName: 'read' }] },
    ])
  })

  it('sends a user message logged mid-batch after the batch’s results, in order', () => {
    const events = log(
      ['assistant/message', { content: [call('c1'), call('c2')], turn: 1, step: 1 }],
      ['tool/result', result('c1', 'one')],
      ['user/message', user('injected')],
      ['user/message', user('and this')],
      ['tool/result', result('c2', 'two')],
      ['user/message', user('after')],
    )
    expect(transcriptEntries(events).map((entry) => (entry.role === 'user' ? entry.content[0] : entry.role))).toEqual([
      'assistant',
      'tool',
      { type: 'text', text: 'injected' },
      { type: 'text', text: 'and this' },
      { type: 'text', text: 'after' },
    ])
  })

  it('is deterministic and extends at step boundaries: a longer log’s entries start with a shorter one’s', () => {
    const events = log(
      ['user/message', user('a')],
      ['assistant/message', { content: [call('c1')], turn: 1, step: 1 }],
      ['tool/result', result('c1', 'r')],
      ['assistant/message', { content: [{ type: 'text', text: 'done' }], turn: 1, step: 2 }],
    )
    expect(transcriptEntries(events)).toEqual(transcriptEntries(events))
    expect(transcriptEntries(events).slice(0, 3)).toEqual(transcriptEntries(events.slice(0, 3)))
  })
})

describe('turn readers', () => {
  it('nextTurn counts on from the last turn/start or turn/end, from 1', () => {
    expect(nextTurn([])).toBe(1)
    expect(nextTurn(log(['turn/start', { turn: 4 }], ['user/message', user('x')]))).toBe(5)
    expect(
      nextTurn(log(['turn/start', { turn: 4 }], ['turn/end', { turn: 4, reason: 'completed' }], ['plan/mode' as SessionEventType, {}])),
    ).toBe(5)
  })

  it('openTurnOf names the open turn and its open step, and nothing for a closed log', () => {
    expect(openTurnOf([])).toBeUndefined()
    expect(openTurnOf(log(['turn/start', { turn: 1 }]))).toEqual({ turn: 1 })
    expect(
      openTurnOf(
        log(
          ['turn/start', { turn: 2 }],
          ['step/start', { turn: 2, step: 1 }],
          ['step/end', { turn: 2, step: 1 }],
          ['step/start', { turn: 2, step: 2 }],
        ),
      ),
    ).toEqual({
      turn: 2,
      step: 2,
    })
    expect(openTurnOf(log(['turn/start', { turn: 2 }], ['step/start', { turn: 2, step: 1 }], ['step/end', { turn: 2, step: 1 }]))).toEqual({
      turn: 2,
    })
    expect(openTurnOf(log(['turn/start', { turn: 1 }], ['turn/end', { turn: 1, reason: 'cancelled' }]))).toBeUndefined()
  })
})

describe('an interrupted turn', () => {
  it('closeInterruptedTurn closes the open step, then the turn with reason interrupted, warning first; a closed log is left alone', async () => {
    const session = memorySession()
    expect(await closeInterruptedTurn(session)).toBeUndefined()
    await session.append('turn/start', { turn: 3 })
    await session.append('step/start', { turn: 3, step: 2 })
    const warned: string[] = []
    expect(await closeInterruptedTurn(session, (message) => warned.push(`${message} @${session.events.length}`))).toEqual({
      turn: 3,
      step: 2,
    })
    expect(warned).toEqual(['closing turn 3 of session s1, left open by a process that ended mid-turn (reason interrupted) @2'])
    expect(session.events.slice(2).map((event) => [event.type, event.data])).toEqual([
      ['step/end', { turn: 3, step: 2 }],
      ['turn/end', { turn: 3, reason: 'interrupted' }],
    ])
    expect(await closeInterruptedTurn(session)).toBeUndefined()
    expect(session.events).toHaveLength(4)
  })

  it('settles every question the log leaves open as interrupted, in ask order, before the step/end and turn/end; warns first', async () => {
    const session = memorySession()
    const asked = (questionId: string) => session.append('question/asked', { questionId, agent: 'a1', question: [] })
    await asked('q0')
    await session.append('question/settled', { questionId: 'q0', outcome: 'answered', answer: [] })
    await session.append('turn/start', { turn: 1 })
    await session.append('step/start', { turn: 1, step: 1 })
    await asked('q1')
    await asked('q2')
    await session.append('question/settled', { questionId: 'q1', outcome: 'cancelled' })
    await asked('q3')
    const warned: string[] = []
    expect(await closeInterruptedTurn(session, (message) => warned.push(`${message} @${session.events.length}`))).toEqual({
      turn: 1,
      step: 1,
    })
    expect(warned).toEqual([
      'settling 2 question(s) of session s1 as interrupted (q2, q3), left open by a process that ended mid-ask @8',
      'closing turn 1 of session s1, left open by a process that ended mid-turn (reason interrupted) @8',
    ])
    expect(session.events.slice(8).map((event) => [event.type, event.data])).toEqual([
      ['question/settled', { questionId: 'q2', outcome: 'interrupted' }],
      ['question/settled', { questionId: 'q3', outcome: 'interrupted' }],
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: 'interrupted' }],
    ])
    expect(openQuestionsOf(session.events)).toEqual([])
    expect(await closeInterruptedTurn(session)).toBeUndefined()
    expect(session.events).toHaveLength(12)
  })

  it('settles an open question with no open turn too (it returns undefined: no turn was closed)', async () => {
    const session = memorySession()
    await session.append('turn/start', { turn: 1 })
    await session.append('turn/end', { turn: 1, reason: 'completed' })
    await session.append('question/asked', { questionId: 'q1', agent: 'a1', question: [] })
    expect(await closeInterruptedTurn(session)).toBeUndefined()
    expect(session.events.slice(3).map((event) => [event.type, event.data])).toEqual([
      ['question/settled', { questionId: 'q1', outcome: 'interrupted' }],
    ])
  })

  it('a refused question/settled rejects before the turn is touched', async () => {
    const session = memorySession('s3', 'question/settled')
    await session.append('turn/start', { turn: 1 })
    await session.append('question/asked', { questionId: 'q1', agent: 'a1', question: [] })
    await expect(closeInterruptedTurn(session)).rejects.toThrow('refused question/settled')
    expect(session.events.map((event) => event.type)).toEqual(['turn/start', 'question/asked'])
  })

  it('openQuestionsOf: asked minus settled, in ask order; a repeated open id and a settlement of an unknown id change nothing', () => {
    const events = log(
      ['question/asked', { questionId: 'q1', agent: 'a', question: [] }],
      ['question/asked', { questionId: 'q2', agent: 'b', question: [] }],
      ['question/asked', { questionId: 'q1', agent: 'c', question: [] }],
      ['question/settled', { questionId: 'q9', outcome: 'answered' }],
      ['question/asked', { questionId: 'q3', agent: 'a', question: [] }],
      ['question/settled', { questionId: 'q2', outcome: 'failed', error: 'x' }],
      ['question/asked', { questionId: 7, agent: 'a', question: [] }],
      ['question/settled', null],
    )
    expect(openQuestionsOf(events).map((event) => [event.seq, event.data.questionId, event.data.agent])).toEqual([
      [0, 'q1', 'a'],
      [4, 'q3', 'a'],
    ])
    expect(openQuestionsOf([])).toEqual([])
  })

  it('stops at a refused append: nothing after it is appended', async () => {
    const session = memorySession('s2', 'step/end')
    await session.append('turn/start', { turn: 1 })
    await session.append('step/start', { turn: 1, step: 1 })
    await expect(closeInterruptedTurn(session)).rejects.toThrow('refused step/end')
    expect(session.events.map((event) => event.type)).toEqual(['turn/start', 'step/start'])
  })

  it('isInterruptedTurnEnd reads the new reason and the old error text, and nothing else', () => {
    expect(isInterruptedTurnEnd({ turn: 1, reason: 'interrupted' })).toBe(true)
    expect(isInterruptedTurnEnd({ turn: 1, reason: 'error', error: INTERRUPTED_TURN_ERROR })).toBe(true)
    expect(isInterruptedTurnEnd({ turn: 1, reason: 'error', error: 'model failed' })).toBe(false)
    expect(isInterruptedTurnEnd({ turn: 1, reason: 'error' })).toBe(false)
    expect(isInterruptedTurnEnd({ turn: 1, reason: 'cancelled', error: INTERRUPTED_TURN_ERROR })).toBe(false)
    expect(isInterruptedTurnEnd({ turn: 1, reason: 'completed' })).toBe(false)
  })
})

describe('logRequestHeaderIfChanged', () => {
  const tools: ToolSchema[] = [{ name: 'read', description: 'Reads.', parameters: { type: 'object' } }]
  const request = (over: Partial<{ turn: number; step: number; model: string; system: string; tools: readonly ToolSchema[] }> = {}) => ({
    turn: 1,
    step: 1,
    model: 'p:m',
    system: 'S',
    tools,
    ...over,
  })

  it('logs initial first, then change only when system, tools (order included) or model differ from the last header', async () => {
    const session = memorySession()
    const logged = await logRequestHeaderIfChanged(session, request())
    expect(logged?.data).toEqual({ reason: 'initial', turn: 1, step: 1, model: 'p:m', system: 'S', tools })
    expect(await logRequestHeaderIfChanged(session, request({ step: 2, tools: tools.map((tool) => ({ ...tool })) }))).toBeUndefined()
    const second: ToolSchema = { name: 'write', description: 'Writes.', parameters: { type: 'object' } }
    for (const change of [{ system: 'S2' }, { model: 'p:other' }, { tools: [...tools, second] }, { tools: [second, ...tools] }]) {
      expect((await logRequestHeaderIfChanged(session, request(change)))?.data.reason).toBe('change')
    }
    expect(session.events.map((event) => event.type)).toEqual(Array(5).fill('request/header'))
  })

  it('compares with the log as it is: a header appended by anyone, a session replaced or rewritten', async () => {
    const session = memorySession()
    await logRequestHeaderIfChanged(session, request())
    await session.append('request/header', { reason: 'change', turn: 1, step: 2, model: 'p:m', system: 'other', tools })
    expect((await logRequestHeaderIfChanged(session, request({ step: 3 })))?.data.reason).toBe('change')
    // The same log in another session object (a restart): nothing is due.
    const reopened = memorySession()
    for (const event of session.events) reopened.events.push(event)
    expect(await logRequestHeaderIfChanged(reopened, request({ turn: 2 }))).toBeUndefined()
    // The array rewritten in place (a compaction): read again from the start.
    reopened.events.splice(0, reopened.events.length)
    expect((await logRequestHeaderIfChanged(reopened, request({ turn: 2 })))?.data.reason).toBe('initial')
  })
})
