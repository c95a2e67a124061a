// SPEC §25: a step is done when the plan/verify checks say so (update_plan step 4a).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { UPDATE_PLAN, UPDATE_PLAN_MESSAGES, type PlanVerifyPayload } from '@planmode/plan-progress'
import type { Session, SessionEvent, ToolResult } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { approve, PLAN, setup, textOf, update } from './support.js'

const progressEvents = (events: readonly SessionEvent[]) => events.filter((event) => (event.type as string) === 'plan/progress')
const snapshot = (h: ReturnType<typeof setup>, agent: { readonly session: Session }) =>
  h.root.require('sessionProjections').snapshot(agent.session).values.planProgress

type Seen = Omit<PlanVerifyPayload, 'agent' | 'problems'> & { readonly problems: readonly string[] }

async function tracked(plan = PLAN) {
  const h = setup()
  const agent = await h.agent()
  await approve(agent.session, plan)
  /** Every payload the first listener received, without the agent. */
  const seen: Seen[] = []
  const run = (updates: unknown[], toolCallId = 'up-1'): Promise<ToolResult> => update(h.root, agent, { updates }, toolCallId)
  return { h, agent, seen, run }
}

/** A listener that records what it was given and refuses the steps in `refuse` with `problem`. */
function recorder(seen: Seen[], refuse: Record<number, string[]> = {}) {
  return async (payload: PlanVerifyPayload, next: (payload?: PlanVerifyPayload) => Promise<PlanVerifyPayload>) => {
    const { agent: _agent, ...rest } = payload
    seen.push(rest)
    return next({ ...payload, problems: [...payload.problems, ...(refuse[payload.step] ?? [])] })
  }
}

describe('§25 plan/verify: the payload and the order', () => {
  it('runs once per update that moves a step to done, in the order given, with { agent, toolCallId, plan, step, text, note?, problems: [] }', async () => {
    const { h, agent, seen, run } = await tracked()
    let caller: unknown
    h.root.on('plan/verify', (payload, next) => {
      caller = payload.agent
      return recorder(seen)(payload, next)
    })
    await run([{ step: 2, status: 'in_progress', note: 'halfway' }])
    expect(seen).toEqual([])
    const result = await run(
      [
        { step: 3, status: 'done', note: 'tests pass' },
        { step: 1, status: 'done' },
        { step: 2, status: 'done' },
      ],
      'up-2',
    )
    expect(result.isError).toBe(false)
    expect(caller).toBe(agent)
    expect(seen).toEqual([
      { toolCallId: 'up-2', plan: 'exit-1', step: 3, text: 'Test it.', note: 'tests pass', problems: [] },
      { toolCallId: 'up-2', plan: 'exit-1', step: 1, text: 'Add a cache.', problems: [] },
      // no note of its own: the note the step keeps
      { toolCallId: 'up-2', plan: 'exit-1', step: 2, text: 'Wire it in.', note: 'halfway', problems: [] },
    ])
  })

  it('listeners run in registration order; each sees the problems of those before it; all of the step’s problems are reported', async () => {
    const { h, agent, run } = await tracked()
    const order: string[] = []
    h.root.on('plan/verify', async (payload, next) => {
      order.push(`lint ${payload.problems.length}`)
      return next({ ...payload, problems: [...payload.problems, 'the linter reports 2 errors'] })
    })
    h.root.on('plan/verify', async (payload, next) => {
      order.push(`tests ${payload.problems.length}`)
      return next({ ...payload, problems: [...payload.problems, 'test/cache.test.ts fails'] })
    })
    const result = await run([{ step: 1, status: 'done' }])
    expect(order).toEqual(['lint 0', 'tests 1'])
    expect(textOf(result)).toBe('Error: update_plan: step 1 is not done:\n- the linter reports 2 errors\n- test/cache.test.ts fails')
    expect(progressEvents(agent.session.events)).toEqual([])
  })
})

describe('§25 a refused step', () => {
  it('fails with the first refused step’s problems only; steps after it are not verified; nothing changes', async () => {
    const { h, agent, seen, run } = await tracked()
    h.root.on('plan/verify', recorder(seen, { 2: ['the cache is not wired in'], 3: ['no tests ran'] }))
    await run([{ step: 1, status: 'in_progress' }])
    const before = agent.session.events.length
    const view = snapshot(h, agent)
    const result = await run([
      { step: 1, status: 'done' },
      { step: 2, status: 'done' },
      { step: 3, status: 'done' },
    ])
    expect(textOf(result)).toBe('Error: update_plan: step 2 is not done:\n- the cache is not wired in')
    expect(UPDATE_PLAN_MESSAGES.notDone(2)).toBe('update_plan: step 2 is not done:')
    expect(seen.map((payload) => payload.step)).toEqual([1, 2])
    expect(agent.session.events.length).toBe(before)
    expect(snapshot(h, agent)).toEqual(view)
    expect(view).toMatchObject({ done: 0, active: 1 })
  })

  it('the model can work on and mark it again: once the check passes, the step is done', async () => {
    const { h, agent, run } = await tracked()
    let wired = false
    h.root.on('plan/verify', (payload, next) => next(payload.step === 2 && !wired ? { ...payload, problems: ['not wired'] } : payload))
    expect((await run([{ step: 2, status: 'done' }])).isError).toBe(true)
    wired = true
    const result = await run([{ step: 2, status: 'done' }])
    expect(textOf(result)).toBe('Plan progress: 1/3.\n[ ] 1. Add a cache.\n[x] 2. Wire it in.\n[ ] 3. Test it.')
    expect(progressEvents(agent.session.events)).toHaveLength(1)
  })

  it('a listener that throws fails the call closed with its message, even after problems were added; nothing is logged', async () => {
    const { h, agent, run } = await tracked()
    h.root.on('plan/verify', (payload, next) => next({ ...payload, problems: [...payload.problems, 'early'] }))
    h.root.on('plan/verify', () => Promise.reject(new Error('the test runner crashed')))
    expect(textOf(await run([{ step: 1, status: 'done' }]))).toBe('Error: the test runner crashed')
    expect(progressEvents(agent.session.events)).toEqual([])
  })

  it.each<[string, unknown, string]>([
    ['nothing', undefined, 'returned undefined'],
    ['problems that are a string', { problems: 'all of them' }, 'returned a payload whose problems are "all of them"'],
    ['problems that are not all strings', { problems: ['x', 3] }, 'returned a payload whose problems are an array of string, number'],
  ])('a listener that returns %s fails the call closed with a clear message', async (_name, value, words) => {
    const { h, agent, run } = await tracked()
    h.root.on('plan/verify', async () => value as PlanVerifyPayload)
    const text = textOf(await run([{ step: 1, status: 'done' }]))
    expect(text).toBe(`Error: update_plan: a plan/verify listener ${words}, not the payload with its problems (a string array)`)
    expect(progressEvents(agent.session.events)).toEqual([])
  })

  it('the other checks come first: a call that breaks §17 rule 4 verifies nothing', async () => {
    const { h, seen, run } = await tracked()
    h.root.on('plan/verify', recorder(seen))
    expect(
      textOf(
        await run([
          { step: 1, status: 'done' },
          { step: 4, status: 'done' },
        ]),
      ),
    ).toBe('Error: update_plan: no step 4')
    expect(
      textOf(
        await run([
          { step: 1, status: 'done' },
          { step: 2, status: 'in_progress' },
          { step: 3, status: 'in_progress' },
        ]),
      ),
    ).toBe('Error: update_plan: only one step can be in progress')
    expect(seen).toEqual([])
  })

  it('the layer unloaded while a step is checked: the call fails and nothing is logged', async () => {
    const { h, agent, run } = await tracked()
    h.root.on('plan/verify', async (payload, next) => {
      h.progress.dispose()
      return next(payload)
    })
    expect(textOf(await run([{ step: 1, status: 'done' }]))).toBe(`Error: ${UPDATE_PLAN_MESSAGES.unloaded}`)
    expect(progressEvents(agent.session.events)).toEqual([])
  })
})

describe('§25 what is not verified', () => {
  it('an update to done for a step already done does not move it and is not verified', async () => {
    const { h, seen, run } = await tracked('# Ship\n\n- [x] Read the code.\n- [ ] Write the code.\n')
    h.root.on('plan/verify', recorder(seen, { 1: ['would refuse'], 2: ['would refuse'] }))
    const result = await run([{ step: 1, status: 'done', note: 'still done' }])
    expect(result.isError).toBe(false)
    expect(seen).toEqual([])
  })

  it('a step moved away from done and back in one call is verified when it moves back', async () => {
    const { h, seen, run } = await tracked('# Ship\n\n- [x] Read the code.\n- [ ] Write the code.\n')
    h.root.on('plan/verify', recorder(seen))
    expect(
      (
        await run([
          { step: 1, status: 'pending' },
          { step: 1, status: 'done' },
        ])
      ).isError,
    ).toBe(false)
    expect(seen.map((payload) => payload.step)).toEqual([1])
  })

  it('skipped (with its note), in_progress and pending are not verified', async () => {
    const { h, seen, run } = await tracked()
    h.root.on('plan/verify', recorder(seen, { 1: ['no'], 2: ['no'], 3: ['no'] }))
    expect(
      (
        await run([
          { step: 1, status: 'skipped', note: 'already cached upstream' },
          { step: 2, status: 'in_progress' },
          { step: 3, status: 'pending' },
        ])
      ).isError,
    ).toBe(false)
    expect(textOf(await run([{ step: 3, status: 'skipped' }]))).toBe('Error: update_plan: skipping step 3 needs a note')
    expect(seen).toEqual([])
  })

  it('without listeners nothing changes: done is the model’s word', async () => {
    const { agent, run } = await tracked()
    expect(
      textOf(
        await run([
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
        ]),
      ),
    ).toBe('Plan progress: 2/3.\n[x] 1. Add a cache.\n[x] 2. Wire it in.\n[ ] 3. Test it.')
    expect(progressEvents(agent.session.events)).toHaveLength(1)
  })

  it('a listener removed is no longer asked', async () => {
    const { h, run } = await tracked()
    const off = h.root.on('plan/verify', (payload, next) => next({ ...payload, problems: ['never'] }))
    expect((await run([{ step: 1, status: 'done' }])).isError).toBe(true)
    off()
    expect((await run([{ step: 1, status: 'done' }])).isError).toBe(false)
  })
})

describe('§25 through the real host loop: a verifier that reads the workspace', () => {
  it('the model marks a step done before the file exists, reads the refusal, writes the file, and marks it again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-verify-'))
    try {
      const plan = '# Notes\n\n## Steps\n\n1. Write `NOTES.md` with a `## Cache` section.\n2. Say done.\n'
      const markDone = { toolCalls: [{ toolName: UPDATE_PLAN, input: { updates: [{ step: 1, status: 'done', note: 'written' }] } }] }
      const h = setup([
        markDone,
        { toolCalls: [{ toolName: 'write', input: { path: 'NOTES.md', text: '# Notes\n\n## Cache\n\nIn memory.\n' } }] },
        markDone,
        { text: 'Step 1 is done.' },
      ])
      h.root.require('tools').register({
        name: 'write',
        description: 'Writes a file of the workspace.',
        parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
        execute: async (input: { path: string; text: string }) => {
          await writeFile(join(dir, input.path), input.text)
          return 'written'
        },
      })
      // The deployment's verifier: a step that names a file is done when the file has the section it names.
      h.root.on('plan/verify', async (payload, next) => {
        const file = /`([^`]+\.md)`/.exec(payload.text)?.[1]
        const section = /`(## [^`]+)`/.exec(payload.text)?.[1]
        if (file === undefined || section === undefined) return next(payload)
        const text = await readFile(join(dir, file), 'utf8').catch(() => undefined)
        const problems =
          text === undefined
            ? [`${file} does not exist`]
            : text.split('\n').includes(section)
              ? []
              : [`${file} has no "${section}" section`]
        return next({ ...payload, problems: [...payload.problems, ...problems] })
      })
      const agent = await h.agent()
      await approve(agent.session, plan)
      await agent.prompt('Go ahead.')
      const results = agent.session.events.filter((event) => event.type === 'tool/result' && event.data.toolName === UPDATE_PLAN)
      const texts = results.map((event) => textOf(event.data as unknown as ToolResult))
      expect(texts).toEqual([
        'Error: update_plan: step 1 is not done:\n- NOTES.md does not exist',
        'Plan progress: 1/2.\n[x] 1. Write `NOTES.md` with a `## Cache` section.\n[ ] 2. Say done.',
      ])
      // the model read the refusal as the failed result of its call, in its next request
      expect(JSON.stringify(h.model.requests[1]!.prompt)).toContain('step 1 is not done:\\n- NOTES.md does not exist')
      // only the accepted call was logged
      expect(
        progressEvents(agent.session.events).map((event) =>
          (event.data as unknown as { steps: { status: string }[] }).steps.map((step) => step.status),
        ),
      ).toEqual([['done', 'pending']])
      expect(snapshot(h, agent)).toMatchObject({ done: 1, total: 2 })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
