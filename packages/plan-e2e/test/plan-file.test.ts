// SPEC §19 end to end: plan-file beside plan-tool and planHistory on the reference host,
// through the real agent loop and the JSONL store: the file follows every review, an
// approved edit is its body, and a restarted host over the same logs keeps writing.
// With plan-progress composed, the file's `progress` line follows the real planProgress unit.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HostAgent } from '@planmode/host'
import { planFilePlugin, planFileText } from '@planmode/plan-file'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { UserAnswer } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { createPlanHost, type PlanHost } from './plan-host.js'

const dirs: string[] = []
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const PLAN1 = '# Add caching\n\n1. Add a cache.\n2. Wire it in.'
const PLAN2 = '# Add caching, revised\n\n1. Add an LRU cache.\n2. Wire it in.\n3. Add tests.'
const EDITED = '# Cache it all\n\n1. Add an LRU cache of 100 entries.\n2. Wire it in.\n3. Add tests.'
const PLAN3 = '# Evict on writes\n\n1. Drop the entry on every write.'
const exit = (plan: string) => ({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan } }] })
const answer = (fields: Omit<UserAnswer, 'id'>): readonly UserAnswer[] => [{ id: 'plan-review', ...fields }]

/** The host of these tests: every plan layer, JSONL logs in `sessions`, plan files in `plans`. */
function fileHost(sessions: string, plans: string): PlanHost {
  const host = createPlanHost(undefined, [], { dir: sessions })
  host.root.plugin(planFilePlugin, { dir: plans })
  return host
}

const fileOf = (plans: string, agent: HostAgent) => readFileSync(join(plans, `${agent.session.id}.md`), 'utf8')
const front = (id: string, rev: number, status: string, title: string) =>
  `---\nsession: ${JSON.stringify(id)}\nrev: ${rev}\nstatus: ${JSON.stringify(status)}\ntitle: ${JSON.stringify(title)}\n---\n`

describe('plan-file through the real host loop', () => {
  it('a plan reviewed with Keep planning, revised, approved with an edit: the file follows, and ends with the edit under the revision’s title', async () => {
    const sessions = temp('plan-e2e-file-sessions-')
    const plans = join(temp('plan-e2e-file-plans-'), 'plans')
    const host = fileHost(sessions, plans)
    const agent = await host.agent()
    const seen: string[] = []
    // What the file said when each review was asked: the revision under review, open.
    host.reviews.push(
      async () => {
        await host.root.require('planFile').settled()
        seen.push(fileOf(plans, agent))
        return answer({ selected: ['Keep planning'], custom: 'use an LRU cache' })
      },
      async () => {
        await host.root.require('planFile').settled()
        seen.push(fileOf(plans, agent))
        return answer({ selected: ['Approve'], edit: EDITED })
      },
    )
    host.model.push(exit(PLAN1), exit(PLAN2), { text: 'implemented' })
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    await host.root.require('planFile').settled()

    const id = agent.session.id
    expect(seen).toEqual([`${front(id, 1, 'open', 'Add caching')}${PLAN1}`, `${front(id, 2, 'open', 'Add caching, revised')}${PLAN2}`])
    expect(fileOf(plans, agent)).toBe(`${front(id, 2, 'approved', 'Add caching, revised')}${EDITED}`)
    // It is what planFileText says of the live planHistory's latest revision.
    const latest = host.root.require('sessionProjections').snapshot(agent.session).values.planHistory!.revisions.at(-1)!
    expect(fileOf(plans, agent)).toBe(
      planFileText({ session: id, rev: latest.rev, status: latest.status, title: latest.title, text: latest.approvedPlan! }),
    )
    expect(readdirSync(plans)).toEqual([`${id}.md`])
    expect(host.logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([])
    await host.root.require('sessions').close(agent.session)
    host.root.dispose()
  })

  it('a restarted host over the same logs and folder keeps writing: the file stays until the next change, which writes the next revision', async () => {
    const sessions = temp('plan-e2e-file-sessions-')
    const plans = join(temp('plan-e2e-file-plans-'), 'plans')
    const first = fileHost(sessions, plans)
    const agent = await first.agent()
    first.reviews.push(answer({ selected: ['Approve'], edit: EDITED }))
    first.model.push(exit(PLAN2), { text: 'implemented' })
    await first.command(agent, '/plan')
    await agent.prompt('add caching')
    const id = agent.session.id
    // The host shuts down: its writes first, then the log.
    await first.root.require('planFile').settled()
    await first.root.require('sessions').close(agent.session)
    first.root.dispose()
    const written = `${front(id, 1, 'approved', 'Add caching, revised')}${EDITED}`
    expect(readFileSync(join(plans, `${id}.md`), 'utf8')).toBe(written)

    const second = fileHost(sessions, plans)
    const session = await second.root.require('sessions').open(id)
    const resumed = await second.agent(session)
    // Opening the log, and events that change no plan, leave the file as it was.
    await second.command(resumed, '/plan')
    await second.root.require('planFile').settled()
    expect(readFileSync(join(plans, `${id}.md`), 'utf8')).toBe(written)

    second.reviews.push(answer({ selected: ['Stop planning'] }))
    second.model.push(exit(PLAN3), { text: 'stopped' })
    await resumed.prompt('and evict on writes')
    await second.root.require('planFile').settled()
    expect(readFileSync(join(plans, `${id}.md`), 'utf8')).toBe(`${front(id, 2, 'stopped', 'Evict on writes')}${PLAN3}`)
    expect(readdirSync(plans)).toEqual([`${id}.md`])
    await second.root.require('sessions').close(session)
    second.root.dispose()
    expect(existsSync(join(plans, `${id}.md`))).toBe(true)
  })

  it('with plan-progress composed, the file says how far the approved plan has got, and only while that revision is tracked', async () => {
    const sessions = temp('plan-e2e-file-sessions-')
    const plans = join(temp('plan-e2e-file-plans-'), 'plans')
    const host = fileHost(sessions, plans)
    host.root.plugin(planProgressPlugin)
    host.root.plugin(planProgressProjectionPlugin)
    const agent = await host.agent()
    const id = agent.session.id
    const update = (updates: unknown[]) => ({ toolCalls: [{ toolName: UPDATE_PLAN, input: { updates } }] })
    let during = ''
    host.reviews.push(async () => answer({ selected: ['Approve'] }))
    host.model.push(
      exit(PLAN1),
      update([{ step: 1, status: 'done' }]),
      async () => {
        await host.root.require('planFile').settled()
        during = fileOf(plans, agent)
        return update([{ step: 2, status: 'skipped', note: 'already wired' }])
      },
      { text: 'implemented' },
    )
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    await host.root.require('planFile').settled()

    const head = front(id, 1, 'approved', 'Add caching')
    const withProgress = (progress: string) => `${head.slice(0, -4)}progress: ${JSON.stringify(progress)}\n---\n${PLAN1}`
    expect(during).toBe(withProgress('1/2'))
    expect(fileOf(plans, agent)).toBe(withProgress('2/2'))
    expect(host.root.require('sessionProjections').snapshot(agent.session).values.planProgress).toMatchObject({ done: 2, total: 2 })

    // A new plan mode ends the tracking: the next revision's file has no progress line.
    host.reviews.push(async () => answer({ selected: ['Keep planning'], custom: 'later' }))
    host.model.push(exit(PLAN3), { text: 'waiting' })
    await host.command(agent, '/plan')
    await agent.prompt('evict on writes')
    await host.root.require('planFile').settled()
    expect(fileOf(plans, agent)).toBe(`${front(id, 2, 'keep-planning', 'Evict on writes')}${PLAN3}`)
    expect(host.logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([])
    await host.root.require('sessions').close(agent.session)
    host.root.dispose()
  })
})
