import { Context } from '@planmode/context'
import { sessionProjectionsPlugin } from '@planmode/host'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { planCorePlugin } from '@planmode/plan-core'
import { planProjectionPlugin } from '@planmode/plan-projection'
import type { Session } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPlanHost } from './plan-host.js'

type PlanView = { active: boolean; pending: boolean }

/** A projection reader of its own (another registry, e.g. another client's server), fed by nothing but snapshots. */
function reader() {
  const ctx = new Context()
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(planCorePlugin) // the plan layers require planMode (§8)
  ctx.plugin(planProjectionPlugin)
  const registry = ctx.require('sessionProjections')
  return (session: Session) => {
    const { asOfSeq, values } = registry.snapshot(session)
    return { asOfSeq, plan: values.plan as PlanView }
  }
}

describe('two projection readers of a live session', () => {
  it('agree with each other, with the change feed and with a cold refold at every asOfSeq', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            select: fc.constantFrom('none', '/plan', '/plan off', '/plan look first'),
            tool: fc.constantFrom('read', 'exit', 'none'),
            approve: fc.boolean(),
          }),
          {
            minLength: 3,
            maxLength: 12,
          },
        ),
        fc.array(fc.nat({ max: 4 }), { minLength: 1, maxLength: 20 }),
        async (turns, gaps) => {
          const host = createPlanHost()
          const agent = await host.agent()
          const live = host.root.require('sessionProjections')
          const other = reader()
          const byLive = new Map<number, PlanView>()
          const byOther = new Map<number, PlanView>()
          const byFeed = new Map<number, PlanView>()
          live.onChange((change) => {
            if (change.session === agent.session && change.key === 'plan') byFeed.set(change.asOfSeq, change.value as PlanView)
          })
          // The live reader snapshots after every event; the other one only every few events (it catches up on demand).
          let count = 0
          host.root.on('session/event', ({ session }) => {
            if (session !== agent.session) return
            const now = live.snapshot(session)
            byLive.set(now.asOfSeq, now.values.plan as PlanView)
            if (count++ % (1 + gaps[count % gaps.length]!) === 0) {
              const seen = other(session)
              byOther.set(seen.asOfSeq, seen.plan)
            }
          })
          // The first request of each turn selects (mid-turn) and calls a tool; later requests end the turn.
          let turn = turns[0]!
          let index = 0
          let first = true
          const respond = async () => {
            if (!first) return { text: 'done' }
            first = false
            if (turn.select !== 'none') await host.command(agent, turn.select)
            if (turn.tool === 'read') return { toolCalls: [{ toolName: 'read', input: { path: `f${index}` } }] }
            if (turn.tool === 'exit') return { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: `# Plan ${index}\n` } }] }
            return { text: 'ok' }
          }
          host.root.require('userQuestions').registerProvider({
            ask: async () => [{ id: 'plan-review', selected: [turn.approve ? 'Approve' : 'Keep planning'] }],
          })
          for ([index, turn] of turns.entries()) {
            if (host.model.remaining < 10) host.model.push(...Array.from({ length: 20 }, () => respond))
            if (index % 3 === 0 && turn.select !== 'none') {
              // Idle too (a `/plan <message>` starts a turn with the message: let it run).
              first = false
              await host.command(agent, turn.select)
              await agent.idle()
            }
            first = true
            await agent.followup(`turn ${index}`)
          }
          const last = other(agent.session)
          byOther.set(last.asOfSeq, last.plan)

          // A cold reader per prefix: a fresh registry over events[0, seq].
          const events = agent.session.events
          const cold = (seq: number) => reader()({ ...agent.session, events: events.slice(0, seq + 1) } as Session).plan
          for (const [seq, view] of byOther) {
            expect(byLive.get(seq)).toEqual(view)
            expect(cold(seq)).toEqual(view)
          }
          for (const [seq, view] of byFeed) expect(byLive.get(seq)).toEqual(view)
          for (const [seq, view] of byLive) if (seq % 7 === 0) expect(cold(seq)).toEqual(view)
          expect(byLive.get(events.at(-1)!.seq)).toEqual(last.plan)
          host.root.dispose()
        },
      ),
      { numRuns: 25 },
    )
  })
})
