// SPEC §17 through the real host loop: plan-core, plan-policy (placement 'transcript'), /plan,
// exit_plan_mode with a scripted reviewer, and plan-progress (update_plan, its messages and the
// planProgress projection). The model carries out an approved plan and tracks it; a restart over the
// JSONL store brings the projection and the reminder back from the log alone; and every request's
// serialized prefix is the previous request, byte for byte, with the progress messages in it (§13).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ScriptedReply, ScriptedResponse } from '@planmode/host'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import type { Session } from '@planmode/seams'
import { deferred, eventsOf, requestSystem, userTexts } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'
import { APPROVE, createTranscriptHost, exit, serialized, type TranscriptHost } from './transcript-host.js'

const PLAN = '# Add caching\n\nContext first.\n\n## Steps\n\n1. Add a cache\n   in `src/cache.ts`.\n2. Wire it in.\n3. Test it.\n'
const TRACK = 'Track the approved plan with update_plan: mark a step in_progress when you start it and done when it is finished.'
const REMIND = 'The approved plan still has open steps; update them with update_plan as you work.'
const rendering = (marks: readonly string[]) => {
  const texts = ['Add a cache in `src/cache.ts`.', 'Wire it in.', 'Test it.']
  const done = marks.filter((mark) => mark === '[x]' || mark === '[-]').length
  return [`Plan progress: ${done}/3.`, ...marks.map((mark, index) => `${mark} ${index + 1}. ${texts[index]}`)].join('\n')
}

const update = (updates: unknown[], extra: ScriptedReply[] = []): ScriptedReply => ({
  toolCalls: [
    { toolName: UPDATE_PLAN, input: { updates } },
    ...extra.flatMap((reply) => ('toolCalls' in reply ? (reply.toolCalls ?? []) : [])),
  ],
})
const write = (path: string): ScriptedReply => ({ toolCalls: [{ toolName: 'write', input: { path } }] })

function progressHost(script: ScriptedResponse[] = [], dir?: string): TranscriptHost {
  const host = createTranscriptHost(script, dir === undefined ? {} : { dir })
  host.root.plugin(planProgressPlugin)
  host.root.plugin(planProgressProjectionPlugin)
  return host
}

/** The texts of the user messages logged in step `step` of turn `turn` (before its `step/start`). */
function stepUserMessages(session: Session, turn: number, step: number): string[] {
  const events = session.events
  const start = events.findIndex((event) => event.type === 'step/start' && event.data.turn === turn && event.data.step === step)
  if (start < 0) throw new Error(`test: no step/start ${turn}.${step}`)
  let from = start
  while (from > 0 && events[from - 1]!.type !== 'step/end' && events[from - 1]!.type !== 'turn/start') from--
  return events
    .slice(from, start)
    .flatMap((event) =>
      event.type === 'user/message' ? [event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')] : [],
    )
}

const planProgressOf = (host: TranscriptHost, session: Session) =>
  host.root.require('sessionProjections').snapshot(session).values.planProgress
const progressTexts = (session: Session) =>
  eventsOf(session, 'user/message')
    .map((event) => event.data)
    .filter((message) => message.source.kind === 'plugin' && message.source.form === 'progress')
    .map((message) => (message.content[0] as { text: string }).text)
const toolTexts = (session: Session, name: string) =>
  eventsOf(session, 'tool/result')
    .filter((event) => event.data.toolName === name)
    .map((event) => event.data.content.map((block) => block.text).join(''))

/** §13's property: the same system text and tools at every request, each prompt extending the previous one. */
function expectStablePrefix(host: TranscriptHost): void {
  const [first, ...rest] = host.model.requests
  for (const request of rest) {
    expect(requestSystem(request)).toBe(requestSystem(first!))
    expect(JSON.stringify(request.tools)).toBe(JSON.stringify(first!.tools))
  }
  const prompts = host.model.requests.map((request) => serialized(request).prompt)
  for (let index = 1; index < prompts.length; index++)
    expect(prompts[index]!.slice(0, prompts[index - 1]!.length)).toEqual(prompts[index - 1])
}

describe('§17 a scripted model carries out an approved plan and tracks it, through the real host loop', () => {
  it('the tracking message after the approval, the updates and their results, the projection after each', async () => {
    const seen: unknown[] = []
    const host = progressHost([
      { toolCalls: [{ toolName: 'read', input: { path: 'src/app.ts' } }] },
      exit(PLAN),
      (request) => {
        seen.push(userTexts({ prompt: request.prompt } as never).at(-1))
        return update([{ step: 1, status: 'in_progress' }])
      },
      update(
        [
          { step: 1, status: 'done' },
          { step: 2, status: 'in_progress' },
        ],
        [write('src/cache.ts')],
      ),
      update(
        [
          { step: 2, status: 'done' },
          { step: 3, status: 'skipped', note: 'no test runner here' },
        ],
        [write('src/app.ts')],
      ),
      { text: 'Done: the cache is in and wired; tests skipped (no runner).' },
    ])
    host.reviews.push(APPROVE)
    const agent = await host.agent()
    const values: unknown[] = []
    host.root.require('sessionProjections').onChange((change) => {
      if (change.key === 'planProgress') values.push(change.value)
    })
    await host.command(agent, '/plan')
    await agent.prompt('add caching')

    // the step after the approval: the model read the tracking message last
    const track = `${TRACK}\n${rendering(['[ ]', '[ ]', '[ ]'])}`
    expect(seen).toEqual([track])
    expect(stepUserMessages(agent.session, 1, 3)).toEqual([track])
    expect(progressTexts(agent.session)).toEqual([track])
    expect(toolTexts(agent.session, UPDATE_PLAN)).toEqual([
      rendering(['[>]', '[ ]', '[ ]']),
      rendering(['[x]', '[>]', '[ ]']),
      rendering(['[x]', '[x]', '[-]']),
    ])
    const toolCallId = eventsOf(agent.session, 'plan/review')[0]!.data.toolCallId
    expect(eventsOf(agent.session, 'plan/progress').map((event) => event.data.plan)).toEqual([toolCallId, toolCallId, toolCallId])
    expect(planProgressOf(host, agent.session)).toEqual({
      plan: { toolCallId, title: 'Add caching' },
      steps: [
        { step: 1, text: 'Add a cache in `src/cache.ts`.', status: 'done' },
        { step: 2, text: 'Wire it in.', status: 'done' },
        { step: 3, text: 'Test it.', status: 'skipped', note: 'no test runner here' },
      ],
      done: 3,
      total: 3,
      active: null,
    })
    // the approval, then each update, changed the value (the exit call and the turn's end change only the state)
    const distinct = values.filter((value, index) => index === 0 || JSON.stringify(value) !== JSON.stringify(values[index - 1]))
    expect(distinct.map((value) => [(value as { active: number | null }).active, (value as { done: number }).done])).toEqual([
      [null, 0],
      [null, 0],
      [1, 0],
      [2, 1],
      [null, 3],
    ])
    // the catalog and system text never changed: one request/header for the whole turn
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
    expectStablePrefix(host)
  })

  it('update_plan in plan mode, or with no approved plan, fails with the exact texts and logs nothing', async () => {
    const host = progressHost([
      update([{ step: 1, status: 'done' }]),
      { text: 'ok' },
      update([{ step: 1, status: 'done' }]),
      { text: 'ok' },
    ])
    const agent = await host.agent()
    await agent.prompt('track something')
    await host.command(agent, '/plan')
    await agent.prompt('and in plan mode')
    expect(toolTexts(agent.session, UPDATE_PLAN)).toEqual([
      'Error: There is no approved plan with steps to track.',
      'Error: update_plan tracks an approved plan; plan mode is on, so none is being carried out yet.',
    ])
    expect(eventsOf(agent.session, 'plan/progress')).toEqual([])
  })

  it('a reminder opens the next turn when the model did not track in the last one; none when it did', async () => {
    const host = progressHost([
      exit(PLAN),
      { text: 'starting soon' }, // turn 1 ends with no update
      update([{ step: 1, status: 'in_progress' }]),
      { text: 'working' }, // turn 2 updated
      { text: 'still working' }, // turn 3: no reminder
      { text: 'and still' }, // turn 4: reminder (turn 3 logged none)
    ])
    host.reviews.push(APPROVE)
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    await agent.prompt('go on')
    await agent.prompt('status?')
    await agent.prompt('status now?')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['go on', `${REMIND}\n${rendering(['[ ]', '[ ]', '[ ]'])}`])
    expect(stepUserMessages(agent.session, 2, 2)).toEqual([])
    expect(stepUserMessages(agent.session, 3, 1)).toEqual(['status?'])
    expect(stepUserMessages(agent.session, 4, 1)).toEqual(['status now?', `${REMIND}\n${rendering(['[>]', '[ ]', '[ ]'])}`])
    expectStablePrefix(host)
  })

  it('entering plan mode again ends tracking: no reminder, and the next approval is tracked afresh', async () => {
    const host = progressHost([exit(PLAN), { text: 'doing' }, exit('# Second\n\n1. Only step.\n'), { text: 'doing it' }])
    host.reviews.push(APPROVE, APPROVE)
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    await host.command(agent, '/plan')
    await agent.prompt('something else')
    expect(planProgressOf(host, agent.session)).toMatchObject({ plan: { title: 'Second' }, total: 1 })
    expect(progressTexts(agent.session)).toEqual([
      `${TRACK}\n${rendering(['[ ]', '[ ]', '[ ]'])}`,
      `${TRACK}\nPlan progress: 0/1.\n[ ] 1. Only step.`,
    ])
    expectStablePrefix(host)
  })
})

describe('§17 a restart in the middle of a tracked plan (JSONL store)', () => {
  it('the projection and the reminder come back from the log alone; the tracking message is not repeated', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-progress-'))
    const first = progressHost(
      [
        exit(PLAN),
        update([
          { step: 1, status: 'done' },
          { step: 2, status: 'in_progress', note: 'half' },
        ]),
        { text: 'working' },
        { text: 'a word' },
      ],
      dir,
    )
    first.reviews.push(APPROVE)
    const agent = await first.agent()
    await first.command(agent, '/plan')
    await agent.prompt('add caching')
    await agent.prompt('how far?') // turn 2: no update, so turn 3 will be reminded
    const before = planProgressOf(first, agent.session)
    await first.root.require('sessions').close(agent.session)

    const second = progressHost([{ text: 'resuming' }], dir)
    const session = await second.root.require('sessions').open(agent.session.id)
    expect(planProgressOf(second, session)).toEqual(before)
    expect(planProgressOf(second, session)).toMatchObject({ done: 1, total: 3, active: 2 })
    const resumed = await second.agent(session)
    await resumed.prompt('continue')
    expect(stepUserMessages(session, 3, 1)).toEqual(['continue', `${REMIND}\n${rendering(['[x]', '[>]', '[ ]'])}`])
    expect(progressTexts(session).filter((text) => text.startsWith(TRACK))).toHaveLength(1)
    // the new process sent the old prompt, then only the new turn's messages
    expect(userTexts(second.model.requests[0]!).slice(-2)).toEqual(['continue', `${REMIND}\n${rendering(['[x]', '[>]', '[ ]'])}`])
    first.root.dispose()
    second.root.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('a kill between the approval and the next step: the new process sends the tracking message at its first step', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-progress-'))
    const first = progressHost([exit(PLAN)], dir)
    const hang = deferred()
    const stuck = deferred()
    let steps = 0
    first.root.on('agent/pre-step', async (_payload, next) => {
      if (++steps === 2) {
        stuck.resolve()
        await hang.promise
      }
      return next()
    })
    first.reviews.push(APPROVE)
    const agent = await first.agent()
    await first.command(agent, '/plan')
    void agent.prompt('add caching')
    await stuck.promise
    await first.root.require('sessions').close(agent.session)

    const second = progressHost([update([{ step: 1, status: 'in_progress' }]), { text: 'on it' }], dir)
    const session = await second.root.require('sessions').open(agent.session.id)
    const resumed = await second.agent(session)
    await resumed.prompt('continue')
    expect(progressTexts(session)).toEqual([`${TRACK}\n${rendering(['[ ]', '[ ]', '[ ]'])}`])
    expect(userTexts(second.model.requests[0]!).at(-1)).toBe(`${TRACK}\n${rendering(['[ ]', '[ ]', '[ ]'])}`)
    expect(planProgressOf(second, session)).toMatchObject({ active: 1 })
    hang.resolve()
    first.root.dispose()
    second.root.dispose()
    await rm(dir, { recursive: true, force: true })
  })
})
