import { UPDATE_PLAN, UPDATE_PLAN_MESSAGES } from '@planmode/plan-progress'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { approve, log, PLAN, setup, textOf, update } from './support.js'

const progressEvents = (events: readonly SessionEvent[]) => events.filter((event) => (event.type as string) === 'plan/progress')

async function tracked(plan = PLAN) {
  const host = setup()
  const agent = await host.agent()
  await approve(agent.session, plan)
  return { host, agent }
}

describe('§17 update_plan: the tool', () => {
  it('is registered in both plan modes, read-only, with the exact description start and strict parameters', async () => {
    const host = setup()
    const agent = await host.agent()
    const tools = host.root.require('tools')
    const before = JSON.stringify(tools.schemas())
    await host.planMode.set(agent, true)
    expect(JSON.stringify(tools.schemas())).toBe(before)
    const tool = tools.get(UPDATE_PLAN)!
    expect(tool.annotations).toEqual({ readOnlyHint: true })
    expect(tool.description.startsWith('Record your progress on the approved plan.')).toBe(true)
    const schema = tools.schemas().find((entry) => entry.name === UPDATE_PLAN)!.parameters
    expect(schema).toMatchObject({ type: 'object', required: ['updates'], additionalProperties: false })
    expect(schema.properties!['updates']).toMatchObject({
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['step', 'status'],
        additionalProperties: false,
        properties: {
          step: { type: 'integer', minimum: 1 },
          status: { enum: ['pending', 'in_progress', 'done', 'skipped'] },
          note: { type: 'string' },
        },
      },
    })
  })

  it.each([
    ['no updates key', {}],
    ['no update', { updates: [] }],
    ['another key', { updates: [{ step: 1, status: 'done' }], extra: true }],
    ['another key in an update', { updates: [{ step: 1, status: 'done', why: 'x' }] }],
    ['a step that is no integer', { updates: [{ step: 1.5, status: 'done' }] }],
    ['step 0', { updates: [{ step: 0, status: 'done' }] }],
    ['an unknown status', { updates: [{ step: 1, status: 'finished' }] }],
    ['a note that is no string', { updates: [{ step: 1, status: 'done', note: 3 }] }],
    ['no status', { updates: [{ step: 1 }] }],
  ])('the host refuses %s before execution; nothing is logged', async (_name, input) => {
    const { host, agent } = await tracked()
    const length = agent.session.events.length
    const result = await update(host.root, agent, input)
    expect(result.isError).toBe(true)
    expect(textOf(result)).not.toContain('update_plan:')
    expect(agent.session.events.length).toBe(length)
  })
})

describe('§17 update_plan execution rules 1–6, in order', () => {
  it('1. no calling agent', async () => {
    const host = setup()
    const result = await host.root
      .require('tools')
      .execute(UPDATE_PLAN, { updates: [{ step: 1, status: 'done' }] }, { signal: new AbortController().signal, toolCallId: 'x' })
    expect(textOf(result)).toBe('Error: update_plan requires a calling agent')
  })

  it('2. the logged state is active (before the plan check, and even with a tracked plan in the log)', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect(textOf(await update(host.root, agent, { updates: [{ step: 1, status: 'done' }] }))).toBe(
      'Error: update_plan tracks an approved plan; plan mode is on, so none is being carried out yet.',
    )
    // an approval recorded whose silent exit has not reached a step yet: still in plan mode
    await approve(agent.session)
    await log(agent.session, 'plan/mode', { active: true, cause: 'user' })
    await log(agent.session, 'assistant/message', {
      turn: 0,
      step: 0,
      content: [{ type: 'tool-call', toolCallId: 'e2', toolName: 'exit_plan_mode', input: { plan: PLAN } }],
    })
    await log(agent.session, 'plan/review', { toolCallId: 'e2', outcome: 'approved' })
    expect(textOf(await update(host.root, agent, { updates: [{ step: 1, status: 'done' }] }))).toBe(
      `Error: ${UPDATE_PLAN_MESSAGES.planModeOn}`,
    )
  })

  it('3. no approved plan, or one without steps', async () => {
    const host = setup()
    const agent = await host.agent()
    const input = { updates: [{ step: 1, status: 'done' }] }
    expect(textOf(await update(host.root, agent, input))).toBe('Error: There is no approved plan with steps to track.')
    await approve(agent.session, '# A plan\n\n- no numbers\n- no tasks\n')
    expect(textOf(await update(host.root, agent, input))).toBe('Error: There is no approved plan with steps to track.')
    // a plan/mode on (cause user) after an approval ends tracking
    await approve(agent.session, PLAN, 'exit-2')
    await log(agent.session, 'plan/mode', { active: true, cause: 'user' })
    await log(agent.session, 'plan/mode', { active: false, cause: 'user' })
    expect(textOf(await update(host.root, agent, input))).toBe('Error: There is no approved plan with steps to track.')
    expect(progressEvents(agent.session.events)).toEqual([])
  })

  it('4. `no step <n>` and then `skipping step <n> needs a note`, per update in order; the first failing one is reported', async () => {
    const { host, agent } = await tracked()
    const run = async (updates: unknown[]) => textOf(await update(host.root, agent, { updates }))
    expect(await run([{ step: 4, status: 'done' }])).toBe('Error: update_plan: no step 4')
    expect(await run([{ step: 2, status: 'skipped' }])).toBe('Error: update_plan: skipping step 2 needs a note')
    expect(await run([{ step: 2, status: 'skipped', note: '  \n' }])).toBe('Error: update_plan: skipping step 2 needs a note')
    expect(
      await run([
        { step: 1, status: 'done' },
        { step: 3, status: 'skipped' },
        { step: 9, status: 'done' },
      ]),
    ).toBe('Error: update_plan: skipping step 3 needs a note')
    expect(await run([{ step: 9, status: 'skipped' }])).toBe('Error: update_plan: no step 9')
    expect(progressEvents(agent.session.events)).toEqual([])
  })

  it('4. a skipped step needs a note of its own: the note it already has does not count', async () => {
    const { host, agent } = await tracked()
    await update(host.root, agent, { updates: [{ step: 2, status: 'pending', note: 'blocked on review' }] })
    expect(textOf(await update(host.root, agent, { updates: [{ step: 2, status: 'skipped' }] }))).toBe(
      'Error: update_plan: skipping step 2 needs a note',
    )
  })

  it('4. more than one step in progress once all updates are applied; nothing changes on any failure', async () => {
    const { host, agent } = await tracked()
    expect(
      textOf(
        await update(host.root, agent, {
          updates: [
            { step: 1, status: 'in_progress' },
            { step: 2, status: 'in_progress' },
          ],
        }),
      ),
    ).toBe('Error: update_plan: only one step can be in progress')
    await update(host.root, agent, { updates: [{ step: 1, status: 'in_progress' }] })
    const logged = progressEvents(agent.session.events).length
    expect(textOf(await update(host.root, agent, { updates: [{ step: 3, status: 'in_progress' }] }))).toBe(
      'Error: update_plan: only one step can be in progress',
    )
    expect(progressEvents(agent.session.events)).toHaveLength(logged)
    // moving the one in progress in the same call is fine
    expect(
      (
        await update(host.root, agent, {
          updates: [
            { step: 1, status: 'done' },
            { step: 2, status: 'in_progress' },
          ],
        })
      ).isError,
    ).toBe(false)
  })

  it('4. a note given replaces the note, an update without one keeps it, a blank one clears it; later updates of a step win', async () => {
    const { host, agent } = await tracked()
    await update(host.root, agent, { updates: [{ step: 1, status: 'in_progress', note: 'first' }] })
    await update(host.root, agent, {
      updates: [
        { step: 1, status: 'done' },
        { step: 2, status: 'skipped', note: 'not needed' },
      ],
    })
    let steps = (progressEvents(agent.session.events).at(-1)!.data as unknown as { steps: unknown[] }).steps
    expect(steps).toEqual([
      { step: 1, text: 'Add a cache.', status: 'done', note: 'first' },
      { step: 2, text: 'Wire it in.', status: 'skipped', note: 'not needed' },
      { step: 3, text: 'Test it.', status: 'pending' },
    ])
    await update(host.root, agent, {
      updates: [
        { step: 1, status: 'done', note: 'replaced' },
        { step: 2, status: 'pending', note: ' ' },
        { step: 3, status: 'in_progress' },
        { step: 3, status: 'done' },
      ],
    })
    steps = (progressEvents(agent.session.events).at(-1)!.data as unknown as { steps: unknown[] }).steps
    expect(steps).toEqual([
      { step: 1, text: 'Add a cache.', status: 'done', note: 'replaced' },
      { step: 2, text: 'Wire it in.', status: 'pending' },
      { step: 3, text: 'Test it.', status: 'done' },
    ])
  })

  it('5. appends plan/progress { toolCallId, plan, steps } (the whole list) before returning', async () => {
    const { host, agent } = await tracked()
    const result = await update(host.root, agent, { updates: [{ step: 2, status: 'in_progress' }] }, 'call-7')
    expect(result.isError).toBe(false)
    const events = agent.session.events
    const at = events.findIndex((event) => (event.type as string) === 'plan/progress')
    expect(events[at]!.data).toEqual({
      toolCallId: 'call-7',
      plan: 'exit-1',
      steps: [
        { step: 1, text: 'Add a cache.', status: 'pending' },
        { step: 2, text: 'Wire it in.', status: 'in_progress' },
        { step: 3, text: 'Test it.', status: 'pending' },
      ],
    })
    expect(at).toBe(events.length - 1)
  })

  it('5. a failing append fails the call with that error', async () => {
    const { host, agent } = await tracked()
    const session = agent.session
    const append = session.append.bind(session)
    ;(session as { append: unknown }).append = (type: string, data: never) =>
      type === 'plan/progress' ? Promise.reject(new Error('disk full')) : append(type as never, data)
    const result = await update(host.root, agent, { updates: [{ step: 1, status: 'done' }] })
    expect(textOf(result)).toBe('Error: disk full')
    ;(session as { append: unknown }).append = append
    expect((await update(host.root, agent, { updates: [{ step: 1, status: 'done' }] })).isError).toBe(false)
  })

  it('6. the value is { done, total } (done counts done and skipped), rendered with one line per step; notes are not rendered', async () => {
    const { host, agent } = await tracked('# Ship\n\n- [x] Read the code.\n- [ ] Write the code.\n- [ ] Skip the docs.\n- [ ] Test it.\n')
    const result = await update(host.root, agent, {
      updates: [
        { step: 2, status: 'in_progress', note: 'halfway' },
        { step: 3, status: 'skipped', note: 'no docs here' },
      ],
    })
    expect(result.value).toEqual({ done: 2, total: 4 })
    expect(textOf(result)).toBe(
      'Plan progress: 2/4.\n[x] 1. Read the code.\n[>] 2. Write the code.\n[-] 3. Skip the docs.\n[ ] 4. Test it.',
    )
  })

  it('a copy of the value (a host that renders a clone) still renders its first line', async () => {
    const { host } = await tracked()
    const tool = host.root.require('tools').get(UPDATE_PLAN)!
    expect(tool.toModelOutput!({ done: 1, total: 3 } as never)).toBe('Plan progress: 1/3.')
  })

  it('two calls in flight on one session run one after the other: the second sees the first', async () => {
    const { host, agent } = await tracked()
    const [a, b] = await Promise.all([
      update(host.root, agent, { updates: [{ step: 1, status: 'done' }] }, 'a'),
      update(host.root, agent, { updates: [{ step: 2, status: 'done' }] }, 'b'),
    ])
    expect([a.isError, b.isError]).toEqual([false, false])
    expect(textOf(b)).toBe('Plan progress: 2/3.\n[x] 1. Add a cache.\n[x] 2. Wire it in.\n[ ] 3. Test it.')
  })

  it('tracks the latest approved plan only: a later approval starts over from its own steps', async () => {
    const { host, agent } = await tracked()
    await update(host.root, agent, { updates: [{ step: 1, status: 'done' }] })
    await log(agent.session, 'plan/mode', { active: true, cause: 'model' })
    await approve(agent.session, '# Next\n\n1. Only step.\n', 'exit-2')
    const result = await update(host.root, agent, { updates: [{ step: 1, status: 'in_progress' }] })
    expect(textOf(result)).toBe('Plan progress: 0/1.\n[>] 1. Only step.')
    expect((progressEvents(agent.session.events).at(-1)!.data as { plan: string }).plan).toBe('exit-2')
  })
})
