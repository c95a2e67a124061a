// SPEC §22.1: `/plan OFF` leaves. The command (§5), the `plan` projection (§7) and plan-core's rebuild of
// a pending selection after a restart (§9) read `off` in any case alike, so all three agree on what a
// `/plan OFF` typed after the turn's last step means, before and after the process restarts.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventsOf, LEAVE_NOTICE, requestSystem, userTexts } from '@planmode/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { createPlanHost, SECTION } from './plan-host.js'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

describe('§22.1 /plan OFF typed mid-turn in plan mode, then a restart', () => {
  it.each(['/plan OFF', '/plan Off ', '/plan off'])(
    '%s: the reply, plan-core and the projection say an exit waits, before and after the restart; the next step leaves',
    async (line) => {
      const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-off-'))
      dirs.push(dir)
      const first = createPlanHost(undefined, [], { dir })
      const agent = await first.agent()
      await first.root.require('planMode').set(agent, true)
      first.model.push(async () => {
        expect(await first.command(agent, line)).toEqual({ kind: 'success', text: 'Leaving plan mode (applies from the next step).' })
        return { text: 'answered without another step' }
      })
      await agent.prompt('look around')
      expect(first.root.require('planMode').get(agent)).toEqual({ active: true, pending: false })
      expect(first.root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: true, pending: true })
      // nothing was steered: the only user message is the prompt
      expect(eventsOf(agent.session, 'user/message').map((event) => event.data.source.kind)).toEqual(['user'])
      const id = agent.session.id
      await first.root.require('sessions').close(agent.session)
      first.root.dispose()

      const second = createPlanHost(undefined, [{ text: 'back to work' }], { dir })
      const session = await second.root.require('sessions').open(id)
      expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: true, pending: true })
      const resumed = await second.agent(session)
      expect(second.root.require('planMode').get(resumed)).toEqual({ active: true, pending: false })
      await resumed.prompt('continue')
      expect(requestSystem(second.model.requests[0]!)).not.toContain(SECTION)
      expect(userTexts(second.model.requests[0]!).at(-1)).toBe(LEAVE_NOTICE)
      expect(second.root.require('planMode').get(resumed)).toEqual({ active: false })
      expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: false })
      second.root.dispose()
    },
  )

  it('/plan of typed mid-turn is a message: it is steered and nothing is pending', async () => {
    const host = createPlanHost(undefined, [])
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    host.model.push(async () => {
      expect(await host.command(agent, '/plan of')).toEqual({ kind: 'success', text: 'Plan mode is already on.' })
      return { text: 'noted' }
    })
    host.model.push({ text: 'read it' })
    await agent.prompt('look around')
    expect(host.root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: true, pending: false })
    expect(userTexts(host.model.requests.at(-1)!)).toContain('of')
  })
})
