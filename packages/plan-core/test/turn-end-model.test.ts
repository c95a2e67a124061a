import { planCorePlugin } from '@planmode/plan-core'
import type { HostSession } from '@planmode/host'
import type { PreStepDecision, TurnEndReason } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

/**
 * SPEC §3.2, §3.3, §3.5 and §22.2 against a model of the log: random turns,
 * pre-steps, `/plan`-style `set`s, approvals and entries, turn ends of every
 * reason and refused appends, driven through the reference host's session
 * store and plan-core's own listeners; after each operation the controller
 * and the log must say what the model says.
 */

type Cause = 'user' | 'review' | 'model'

type Op =
  | { readonly kind: 'start' }
  | { readonly kind: 'step' }
  | { readonly kind: 'exit' }
  | { readonly kind: 'enter' }
  | { readonly kind: 'set'; readonly active: boolean }
  | { readonly kind: 'end'; readonly reason: TurnEndReason }
  | { readonly kind: 'refuse' }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: 'start' }),
  fc.constant<Op>({ kind: 'step' }),
  fc.constant<Op>({ kind: 'exit' }),
  fc.constant<Op>({ kind: 'enter' }),
  fc.boolean().map((active): Op => ({ kind: 'set', active })),
  fc
    .constantFrom<TurnEndReason>('completed', 'step-limit', 'cancelled', 'rejected', 'error')
    .map((reason): Op => ({ kind: 'end', reason })),
  fc.constant<Op>({ kind: 'refuse' }),
)

/** What the log and the controller must hold: the logged state, the waiting selection, and every plan/mode appended. */
class Model {
  logged = false
  pending: { active: boolean; cause: Cause } | undefined
  open = false
  turn = 0
  step = 0
  refuse = false
  readonly modes: string[] = []
  /** The position (count of plan/mode) right after each turn end that committed one. */
  readonly committedAtTurnEnd: number[] = []

  /** An append of plan/mode: refused once after `refuse`, else logged. */
  private append(active: boolean, cause: Cause): boolean {
    if (this.refuse) {
      this.refuse = false
      return false
    }
    this.logged = active
    this.modes.push(`${active}/${cause}`)
    return true
  }

  /** §3.2: the answer of `set`, or `rejected` for an idle commit whose append was refused. */
  set(active: boolean): string {
    const target = this.pending?.active ?? this.logged
    if (active === target) return 'noop'
    if (this.open) {
      this.pending = { active, cause: 'user' }
      return active === this.logged ? 'cancelled' : 'queued'
    }
    if (active === this.logged) {
      this.pending = undefined
      return 'cancelled'
    }
    if (!this.append(active, 'user')) return 'rejected'
    this.pending = undefined
    return 'committed'
  }

  /** §3.3: an accepted pre-step. */
  flush(): void {
    const selection = this.pending
    if (selection === undefined) return
    if (selection.active === this.logged) this.pending = undefined
    else if (this.append(selection.active, selection.cause)) this.pending = undefined
  }

  /** §22.2: a turn end. */
  end(): void {
    this.open = false
    const selection = this.pending
    if (selection === undefined || selection.cause === 'user') return
    if (selection.active === this.logged) this.pending = undefined
    else if (this.append(selection.active, selection.cause)) {
      this.pending = undefined
      this.committedAtTurnEnd.push(this.modes.length)
    }
  }
}

const ready: PreStepDecision = { kind: 'enter', messages: [] }

describe('§22.2 against a model of the log (fast-check)', () => {
  it('turns, steps, sets, approvals, entries and refused appends: the controller and the log agree with the model after every operation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
        const host = createHost()
        host.root.plugin(planCorePlugin)
        const planMode = host.root.require('planMode')
        const model = new Model()
        // The store refuses the next plan/mode after a `refuse` (the model's flag is its own, consumed the same way).
        let refuseNext = false
        host.root.require('sessionInvariants').register('model', (event) => {
          if (event.type !== 'plan/mode' || !refuseNext) return undefined
          refuseNext = false
          return 'refused by the model'
        })
        const agent = await host.agent()
        const session = agent.session as HostSession
        const signal = new AbortController().signal
        const settle = async (): Promise<void> => {
          await session.settled()
          await new Promise((resolve) => setImmediate(resolve))
        }
        for (const op of ops) {
          switch (op.kind) {
            case 'start':
              if (model.open) continue
              model.open = true
              model.turn += 1
              model.step = 0
              await session.append('turn/start', { turn: model.turn })
              break
            case 'step':
              if (!model.open) continue
              model.step += 1
              await host.root.waterfall(
                'agent/pre-step',
                { agent, turn: model.turn, step: model.step, signal, messages: [] },
                async () => ready,
              )
              model.flush()
              break
            case 'exit':
            case 'enter': {
              if (!model.open) continue
              if (op.kind === 'exit') {
                await (session.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', {
                  toolCallId: 't',
                  outcome: 'approved',
                })
                planMode.exitAtBoundary(agent)
              } else {
                await session.append('tool/result', {
                  toolCallId: 't',
                  toolName: 'enter_plan_mode',
                  isError: false,
                  content: [],
                  value: { entered: true },
                } as never)
                planMode.enterAtBoundary(agent)
              }
              model.pending = { active: op.kind === 'enter', cause: op.kind === 'enter' ? 'model' : 'review' }
              break
            }
            case 'set': {
              const expected = model.set(op.active)
              const got = await planMode.set(agent, op.active).catch(() => 'rejected')
              expect(got).toBe(expected)
              break
            }
            case 'end':
              if (!model.open) continue
              await session.append('turn/end', { turn: model.turn, reason: op.reason })
              model.end()
              break
            case 'refuse':
              model.refuse = true
              refuseNext = true
              break
          }
          await settle()
          const modes = eventsOf(session, 'plan/mode')
          expect(modes.map((event) => `${event.data.active}/${event.data.cause}`)).toEqual(model.modes)
          expect(planMode.get(agent)).toEqual(
            model.pending === undefined ? { active: model.logged } : { active: model.logged, pending: model.pending.active },
          )
        }
        // Each plan/mode a turn end committed is the event right after that turn/end.
        const modes = eventsOf(session, 'plan/mode')
        for (const count of model.committedAtTurnEnd) {
          const mode = modes[count - 1]!
          expect(session.events[session.events.indexOf(mode) - 1]!.type).toBe('turn/end')
        }
        host.root.dispose()
      }),
      { numRuns: 300 },
    )
  })
})
