// SPEC §13 and §24, property: across random switch sequences through the real host loop, the logged plan-mode
// messages (notices and guidance) and PlanLog.guided match a small reference model, and each request's
// serialized prefix (system, tools, earlier messages) is byte-identical to the previous request.
import { readPlanLog } from '@planmode/plan-core'
import type { HostAgent } from '@planmode/host'
import { ENTER_PLAN_MODE, EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { eventsOf } from '@planmode/testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { APPROVE, PLAN, createTranscriptHost, serialized, userMessages, type TranscriptHost } from './transcript-host.js'

/**
 * `idle`: `/plan` or `/plan off` between turns. `turn`: a turn whose first model call makes the
 * `mid` selections (mid-turn, applied by the second step's pre-step) and calls `read`; with no
 * `mid`, a one-step turn. `exit`: a turn whose model presents a plan that the user approves
 * (when plan mode is logged on; otherwise it just reads), then answers. `enter`: a turn whose model
 * asks to enter plan mode with `enter_plan_mode` and the user agrees (when plan mode is off; otherwise
 * it just reads), then answers.
 */
type Op =
  | { readonly kind: 'idle'; readonly active: boolean }
  | { readonly kind: 'turn'; readonly mid: readonly boolean[] }
  | { readonly kind: 'exit' }
  | { readonly kind: 'enter' }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('idle' as const), active: fc.boolean() }),
  fc.record({ kind: fc.constant('turn' as const), mid: fc.array(fc.boolean(), { maxLength: 3 }) }),
  fc.constant({ kind: 'exit' as const }),
  fc.constant({ kind: 'enter' as const }),
)

/** The reference: SPEC §3.2–§3.5, §13 and §24 (one section throughout), written as plainly as possible. */
class Reference {
  logged = false
  pending: { active: boolean; cause: 'user' | 'review' | 'model' } | undefined
  told: boolean | undefined
  guided = false
  /** Whether the section was logged in full once (SPEC §24: then a re-entry gets the one-line reminder). */
  sent = false
  readonly messages: string[] = []

  set(active: boolean, openTurn: boolean): void {
    if (active === (this.pending?.active ?? this.logged)) return
    if (openTurn) this.pending = { active, cause: 'user' }
    else if (active === this.logged) this.pending = undefined
    else {
      this.logged = active
      this.pending = undefined
    }
  }

  /** One accepted pre-step, then its request (the first one logs the header). */
  step(...proposed: string[]): void {
    this.messages.push(...proposed)
    const selection = this.pending
    this.pending = undefined
    if (selection !== undefined && selection.active !== this.logged) {
      this.logged = selection.active
      if (selection.cause !== 'user') {
        // the tool result told the model
        if (this.told !== undefined) this.told = this.logged
        if (!this.logged) this.guided = false
      }
    }
    if (this.told !== undefined && this.told !== this.logged) {
      this.messages.push(this.logged ? 'notice:on' : 'notice:off')
      this.told = this.logged
      if (!this.logged) this.guided = false
    }
    if (this.logged && !this.guided) {
      this.messages.push(this.sent ? 'guidance-again' : 'guidance')
      this.guided = true
      this.sent = true
    }
    this.told ??= this.logged // the first request/header
  }
}

async function run(host: TranscriptHost, agent: HostAgent, ref: Reference, next: Op, index: number): Promise<void> {
  const text = `t${index}`
  if (next.kind === 'idle') {
    await host.command(agent, next.active ? '/plan' : '/plan off')
    ref.set(next.active, false)
    return
  }
  if (next.kind === 'turn') {
    ref.step(text)
    if (next.mid.length === 0) {
      host.model.push({ text: 'ok' })
    } else {
      host.model.push(async () => {
        for (const active of next.mid) {
          await host.command(agent, active ? '/plan' : '/plan off')
          ref.set(active, true)
        }
        return { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }
      })
      host.model.push({ text: 'ok' })
    }
    await agent.prompt(text)
    if (next.mid.length > 0) ref.step()
    return
  }
  ref.step(text)
  if (next.kind === 'enter') {
    const off = ref.logged === false
    host.model.push(() => {
      if (!off) return { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }
      host.reviews.push([{ id: 'plan-enter', selected: ['Enter plan mode'] }])
      return { toolCalls: [{ toolName: ENTER_PLAN_MODE, input: {} }] }
    })
    host.model.push({ text: 'ok' })
    await agent.prompt(text)
    if (off) ref.pending = { active: true, cause: 'model' }
    ref.step()
    return
  }
  const active = ref.logged
  host.model.push(() => {
    if (!active) return { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }
    host.reviews.push(APPROVE)
    return { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }
  })
  host.model.push({ text: 'ok' })
  await agent.prompt(text)
  if (active) ref.pending = { active: false, cause: 'review' }
  ref.step()
}

describe('§13 property: guidance and notices follow the reference model; every request extends the previous one', () => {
  it('holds for random sequences of /plan, /plan off, mid-turn selections, approved exits and approved entries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const host = createTranscriptHost()
        const agent = await host.agent()
        const ref = new Reference()
        for (const [index, next] of ops.entries()) {
          await run(host, agent, ref, next, index)
          expect(userMessages(agent.session)).toEqual(ref.messages)
          expect(readPlanLog(agent.session).guided).toBe(ref.guided)
          expect(host.root.require('planMode').get(agent)).toEqual({ active: ref.logged })
        }
        expect(eventsOf(agent.session, 'request/header').length).toBeLessThanOrEqual(1)
        const requests = host.model.requests.map(serialized)
        for (let index = 1; index < requests.length; index++) {
          const previous = requests[index - 1]!
          const current = requests[index]!
          expect(current.tools).toBe(previous.tools)
          expect(current.prompt.slice(0, previous.prompt.length)).toEqual(previous.prompt)
        }
        host.root.dispose()
      }),
      { numRuns: 80 },
    )
  })
})
