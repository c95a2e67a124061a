// SPEC §24: coming back to plan mode costs a line, not a section. Through the real host loop with
// plan-core and plan-policy in `placement: 'transcript'`.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Fiber } from '@planmode/context'
import type { HostAgent, ScriptedResponse } from '@planmode/host'
import { planCorePlugin, planModeGuidance, readPlanLog } from '@planmode/plan-core'
import {
  checkCompactedGuidance,
  fullGuidanceText,
  latestFullGuidance,
  PLAN_GUIDANCE_AGAIN,
  planGuidanceAgain,
  planPolicyPlugin,
  RECOMMENDED_CHILD_SECTION,
  type PlanPolicyConfig,
} from '@planmode/plan-policy'
import type { Session, SessionEvent, UserMessage } from '@planmode/seams'
import { createHost, ENTER_NOTICE, LEAVE_NOTICE, requestSystem, userTexts } from '@planmode/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const SECTION = 'PLAN GUIDANCE: read, change nothing, present a plan.'
const LINE = 'Plan mode is on again: follow the plan-mode instructions given earlier in this conversation until a plan is approved.'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

function setup(config: PlanPolicyConfig = { section: SECTION, placement: 'transcript' }, script: ScriptedResponse[] = [], dir?: string) {
  const host = createHost(script, dir === undefined ? {} : { dir })
  host.root.plugin(planCorePlugin)
  let policy: Fiber = host.root.plugin(planPolicyPlugin, config)
  const planMode = host.root.require('planMode')
  return {
    ...host,
    planMode,
    /** Loads plan-policy again with `next` (a deployment that changed its section). */
    reload(next: PlanPolicyConfig) {
      policy.dispose()
      policy = host.root.plugin(planPolicyPlugin, next)
    },
    /** One idle switch, then one one-step turn. */
    async turn(agent: HostAgent, active: boolean | undefined, text: string) {
      if (active !== undefined) await planMode.set(agent, active)
      host.model.push({ text: 'ok' })
      await agent.prompt(text)
    },
  }
}

/** The plan-mode messages logged in `session`, by form, in order. */
function planForms(session: Session): string[] {
  return session.events
    .filter((event) => event.type === 'user/message' && (event.data as UserMessage).source.kind === 'plugin')
    .map((event) => {
      const message = event.data as UserMessage
      const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
      return message.source.kind === 'plugin' && message.source.form === 'notice'
        ? `notice:${text === ENTER_NOTICE ? 'on' : 'off'}`
        : String((message.source as { form?: string }).form)
    })
}

describe('§24 the re-entry line', () => {
  it('has the exact text and source, and is what the model reads when the same section was logged before', async () => {
    expect(PLAN_GUIDANCE_AGAIN).toBe(LINE)
    expect(planGuidanceAgain()).toEqual({
      content: [{ type: 'text', text: LINE }],
      source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance-again' },
    })
    const h = setup()
    const agent = await h.agent()
    await h.turn(agent, true, 'plan it')
    await h.turn(agent, false, 'do it')
    await h.turn(agent, true, 'plan the next thing')
    expect(planForms(agent.session)).toEqual(['guidance', 'notice:off', 'notice:on', 'guidance-again'])
    expect(userTexts(h.model.requests[2]!).slice(-3)).toEqual(['plan the next thing', ENTER_NOTICE, LINE])
    const logged = agent.session.events.filter((event) => event.type === 'user/message').at(-1)!.data
    expect(logged).toEqual(planGuidanceAgain())
    // the system text never changed, so every request extends the one before it
    for (const request of h.model.requests) expect(requestSystem(request)).toBe(requestSystem(h.model.requests[0]!))
  })

  it('on the wire: the line is at most 200 bytes, as the model receives it (a user message of one text part)', async () => {
    const h = setup()
    const agent = await h.agent()
    await h.turn(agent, true, 'a')
    await h.turn(agent, false, 'b')
    await h.turn(agent, true, 'c')
    const prompt = h.model.requests[2]!.prompt
    const line = prompt
      .filter((message) => message.role === 'user')
      .flatMap((message) => message.content as { type: string; text?: string }[])
      .find((part) => part.text === LINE)!
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(200)
    expect(Buffer.byteLength(LINE)).toBe(117)
  })

  it('counts as a guidance message for §13’s holding rule: held until the model is told plan mode is off', async () => {
    const h = setup()
    const agent = await h.agent()
    await h.turn(agent, true, 'a')
    await h.turn(agent, false, 'b')
    await h.turn(agent, true, 'c') // the line
    expect(readPlanLog(agent.session).guided).toBe(true)
    await h.turn(agent, undefined, 'd') // held: nothing
    await h.planMode.set(agent, false)
    await h.turn(agent, true, 'e') // a net-zero flip while idle: nothing
    await h.turn(agent, false, 'f')
    await h.turn(agent, true, 'g') // told off, then on: the line again
    expect(planForms(agent.session)).toEqual([
      'guidance',
      'notice:off',
      'notice:on',
      'guidance-again',
      'notice:off',
      'notice:on',
      'guidance-again',
    ])
  })

  it('an approved exit (cause review) then an entry, and an entry by the model (cause model): the line, without the section', async () => {
    const h = setup()
    const agent = await h.agent()
    await h.turn(agent, true, 'a')
    h.planMode.exitAtBoundary(agent)
    await h.turn(agent, undefined, 'b')
    h.planMode.enterAtBoundary(agent)
    await h.turn(agent, undefined, 'c')
    expect(planForms(agent.session)).toEqual(['guidance', 'guidance-again'])
  })

  it('a section whose text changed is sent in full; the line follows for the new text; going back to the old text sends it in full', async () => {
    const h = setup()
    const agent = await h.agent()
    await h.turn(agent, true, 'a')
    await h.turn(agent, false, 'b')
    h.reload({ section: 'NEW GUIDANCE', placement: 'transcript' })
    await h.turn(agent, true, 'c')
    await h.turn(agent, false, 'd')
    await h.turn(agent, true, 'e')
    h.reload({ section: SECTION, placement: 'transcript' })
    await h.turn(agent, false, 'f')
    await h.turn(agent, true, 'g')
    const guidance = agent.session.events.flatMap((event) => {
      const text = fullGuidanceText(event)
      return text === undefined ? [] : [text]
    })
    expect(guidance).toEqual([SECTION, 'NEW GUIDANCE', SECTION])
    expect(planForms(agent.session)).toEqual([
      'guidance',
      'notice:off',
      'notice:on',
      'guidance',
      'notice:off',
      'notice:on',
      'guidance-again',
      'notice:off',
      'notice:on',
      'guidance',
    ])
  })

  it('a child follows the same rule for the text it sends, compared with its own log, never with its owner’s', async () => {
    const h = setup({ section: SECTION, placement: 'transcript' })
    const parent = await h.agent()
    await h.turn(parent, true, 'plan')
    const child = h.root.require('agents').create({ session: await h.root.require('sessions').create(), owner: parent })
    await h.turn(child, undefined, 'look around') // inherits: the child section, in full
    await h.turn(child, false, 'stop')
    await h.turn(child, true, 'again') // switched on by the user: the section, in full (the owner's log does not count)
    await h.turn(child, false, 'stop')
    await h.turn(child, true, 'and again') // the same section: the line
    const texts = child.session.events.flatMap((event) => {
      const text = fullGuidanceText(event)
      return text === undefined ? [] : [text]
    })
    expect(texts).toEqual([RECOMMENDED_CHILD_SECTION, SECTION])
    expect(planForms(child.session)).toEqual([
      'guidance',
      'notice:off',
      'notice:on',
      'guidance',
      'notice:off',
      'notice:on',
      'guidance-again',
    ])
  })

  it('is decided from the log: a restarted host sends the line for a section logged by the process before it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-policy-again-'))
    dirs.push(dir)
    const first = setup(undefined, [], dir)
    const agent = await first.agent()
    await first.turn(agent, true, 'a')
    await first.turn(agent, false, 'b')
    await first.root.require('sessions').close(agent.session)
    first.root.dispose()
    const second = setup(undefined, [], dir)
    const reopened = await second.agent(await second.root.require('sessions').open(agent.session.id))
    await second.turn(reopened, true, 'c')
    expect(planForms(reopened.session)).toEqual(['guidance', 'notice:off', 'notice:on', 'guidance-again'])
    expect(userTexts(second.model.requests[0]!).at(-1)).toBe(LINE)
  })

  it("placement 'system' never sends it: the section renders in the system prompt as §4 says", async () => {
    const h = setup({ section: SECTION })
    const agent = await h.agent()
    await h.turn(agent, true, 'a')
    await h.turn(agent, false, 'b')
    await h.turn(agent, true, 'c')
    expect(planForms(agent.session)).toEqual(['notice:off', 'notice:on'])
    expect(requestSystem(h.model.requests[2]!)).toContain(SECTION)
  })

  it('a log whose guidance array was replaced (compaction) is read again: no full message left, the section goes in full', async () => {
    const h = setup()
    const agent = await h.agent()
    await h.turn(agent, true, 'a')
    await h.turn(agent, false, 'b')
    const session = agent.session as unknown as { events: SessionEvent[] }
    const kept = session.events.filter((event) => fullGuidanceText(event) === undefined)
    Object.defineProperty(agent.session, 'events', { value: kept, configurable: true, writable: true })
    await h.planMode.set(agent, true)
    expect(readPlanLog(agent.session).guided).toBe(false)
    const line = (await h.root.waterfall(
      'agent/pre-step',
      { agent, turn: 9, step: 1, signal: new AbortController().signal, messages: [] },
      async (payload) => ({ kind: 'enter' as const, messages: payload.messages }),
    )) as unknown as { messages: UserMessage[] }
    expect(line.messages.map((message) => message.source)).toContainEqual({ kind: 'plugin', plugin: 'plan-mode', form: 'guidance' })
  })
})

describe('§24 the compaction check a host calls', () => {
  const event = (seq: number, data: unknown, type = 'user/message'): SessionEvent => ({ type, seq, time: 0, data }) as SessionEvent

  it('fullGuidanceText and latestFullGuidance read full guidance messages only (not the line, not a notice, not a user message)', () => {
    const events = [
      event(0, { content: [{ type: 'text', text: SECTION }], source: { kind: 'user' } }),
      event(1, planModeGuidance('FIRST')),
      event(2, planModeGuidance('SECOND')),
      event(3, planGuidanceAgain()),
      event(4, { content: [{ type: 'text', text: LEAVE_NOTICE }], source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice' } }),
      event(5, { turn: 1 }, 'turn/start'),
    ]
    expect(events.map(fullGuidanceText)).toEqual([undefined, 'FIRST', 'SECOND', undefined, undefined, undefined])
    expect(latestFullGuidance(events)?.seq).toBe(2)
    expect(latestFullGuidance(events.slice(0, 1))).toBeUndefined()
  })

  it('holds when the latest full guidance is kept, or logged again after the cut; fails naming it when dropped', () => {
    const log = [
      event(0, planModeGuidance('OLD')),
      event(1, { turn: 1 }, 'turn/start'),
      event(2, planModeGuidance(SECTION)),
      event(3, { turn: 1, reason: 'done' }, 'turn/end'),
      event(4, planGuidanceAgain()),
    ]
    expect(checkCompactedGuidance(log, log)).toBeUndefined()
    expect(checkCompactedGuidance(log, [log[2]!, log[3]!, log[4]!])).toBeUndefined()
    const problem = checkCompactedGuidance(log, [log[0]!, log[3]!, log[4]!])
    expect(problem).toContain('drops the latest plan-mode guidance message (seq 2)')
    const again = [...log, event(5, planModeGuidance(SECTION))]
    expect(checkCompactedGuidance(again, [again[5]!])).toBeUndefined()
    expect(checkCompactedGuidance([event(0, { turn: 1 }, 'turn/start')], [])).toBeUndefined()
  })
})
