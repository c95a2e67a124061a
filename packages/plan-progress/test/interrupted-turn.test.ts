// SPEC §22.3: for §17's reminder, a turn closed as `interrupted` when its session is next opened for
// writing (the restart duty) is "the last turn that ended". Over the JSONL store: a process ends
// mid-turn, a new host opens the session (the store closes the turn), and the next turn's first step
// reminds, or not, by what that interrupted turn logged.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ScriptedResponse } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProgressPlugin, UPDATE_PLAN, UPDATE_PLAN_MESSAGES } from '@planmode/plan-progress'
import { INTERRUPTED_TURN_ERROR, type Session } from '@planmode/seams'
import { createHost, eventsOf } from '@planmode/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { approve, log, progressMessages } from './support.js'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const STEPS = [
  { step: 1, text: 'Add a cache.', status: 'in_progress' },
  { step: 2, text: 'Wire it in.', status: 'pending' },
  { step: 3, text: 'Test it.', status: 'pending' },
]

function host(dir: string, script: ScriptedResponse[]) {
  const h = createHost(script, { dir })
  h.root.plugin(planCorePlugin)
  h.root.plugin(planProgressPlugin)
  return h
}

/**
 * A session whose plan was approved and announced in turn 1 (which logs progress or not), then a
 * turn 2 the process left open (it logs progress or not): the process ends there. Returns the
 * directory and the session's id.
 */
async function diedMidTurn(options: { readonly firstTurnProgress: boolean; readonly openTurnProgress: boolean }) {
  const dir = await mkdtemp(join(tmpdir(), 'plan-progress-interrupted-'))
  dirs.push(dir)
  const update = { toolCalls: [{ toolName: UPDATE_PLAN, input: { updates: [{ step: 1, status: 'in_progress' }] } }] }
  const first = host(dir, options.firstTurnProgress ? [update, { text: 'on it' }] : [{ text: 'on it' }])
  const agent = await first.agent()
  await approve(agent.session)
  await agent.prompt('go') // turn 1: the tracking message, and the update when there is one
  expect(progressMessages(agent.session)).toHaveLength(1)
  expect(eventsOf(agent.session, 'plan/progress')).toHaveLength(options.firstTurnProgress ? 1 : 0)
  // turn 2, as the dying process logged it: its start, the prompt, a step, maybe an update, and no end
  await log(agent.session, 'turn/start', { turn: 2 })
  await log(agent.session, 'user/message', { content: [{ type: 'text', text: 'keep going' }], source: { kind: 'user' } })
  await log(agent.session, 'step/start', { turn: 2, step: 1 })
  if (options.openTurnProgress) await log(agent.session, 'plan/progress', { toolCallId: 'up-2', plan: 'exit-1', steps: STEPS })
  const id = agent.session.id
  await first.root.require('sessions').close(agent.session)
  first.root.dispose()
  return { dir, id }
}

async function reopenAndPrompt(dir: string, id: string): Promise<{ session: Session; reminders: string[] }> {
  const second = host(dir, [{ text: 'resumed' }])
  const session = await second.root.require('sessions').open(id)
  const ends = eventsOf(session, 'turn/end')
  expect(ends.at(-1)!.data).toEqual({ turn: 2, reason: 'interrupted' })
  const agent = await second.agent(session)
  await agent.prompt('are you there?')
  const reminders = progressMessages(session).filter((text) => text.startsWith(UPDATE_PLAN_MESSAGES.remind))
  second.root.dispose()
  return { session, reminders }
}

describe('§22.3 an interrupted turn is the last turn that ended', () => {
  it('the interrupted turn logged no plan/progress (the turn before it did): the next turn is reminded', async () => {
    const { dir, id } = await diedMidTurn({ firstTurnProgress: true, openTurnProgress: false })
    const { reminders } = await reopenAndPrompt(dir, id)
    expect(reminders).toEqual([
      `${UPDATE_PLAN_MESSAGES.remind}\nPlan progress: 0/3.\n[>] 1. Add a cache.\n[ ] 2. Wire it in.\n[ ] 3. Test it.`,
    ])
  })

  it('the interrupted turn logged plan/progress (the turn before it did not): the next turn is not reminded', async () => {
    const { dir, id } = await diedMidTurn({ firstTurnProgress: false, openTurnProgress: true })
    const { reminders } = await reopenAndPrompt(dir, id)
    expect(reminders).toEqual([])
  })

  it('a turn closed by an older host (reason error with the interrupted text) counts the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-progress-interrupted-'))
    dirs.push(dir)
    const h = host(dir, [{ text: 'one' }, { text: 'two' }])
    const agent = await h.agent()
    await approve(agent.session)
    await agent.prompt('go')
    await log(agent.session, 'turn/start', { turn: 2 })
    await log(agent.session, 'step/start', { turn: 2, step: 1 })
    await log(agent.session, 'plan/progress', { toolCallId: 'up-2', plan: 'exit-1', steps: STEPS })
    await log(agent.session, 'step/end', { turn: 2, step: 1 })
    await log(agent.session, 'turn/end', { turn: 2, reason: 'error', error: INTERRUPTED_TURN_ERROR })
    await agent.prompt('again')
    expect(progressMessages(agent.session).filter((text) => text.startsWith(UPDATE_PLAN_MESSAGES.remind))).toEqual([])
    h.root.dispose()
  })
})
