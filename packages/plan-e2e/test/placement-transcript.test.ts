// SPEC §13 `placement: 'transcript'` through the real host loop: the system prompt and tool catalog never
// change with the mode, and the guidance reaches the model once per entry, as a user message after the notice.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { planCorePlugin, planModeGuidance, readPlanLog } from '@planmode/plan-core'
import { PLAN_GUIDANCE_AGAIN, PLAN_POLICY_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import type { Agent, PreStepDecision } from '@planmode/seams'
import { ENTER_PLAN_MODE } from '@planmode/plan-tool'
import { ENTER_NOTICE, LEAVE_NOTICE, eventsOf, requestSystem, types, userTexts } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'
import {
  APPROVE,
  SECTION,
  createTranscriptHost,
  exit,
  guidanceMessages,
  serialized,
  stepUserMessages,
  userMessages,
  type TranscriptHost,
} from './transcript-host.js'

const sectionText = (host: TranscriptHost, agent?: Agent) =>
  host.root
    .require('systemPrompt')
    .assemble(agent === undefined ? {} : { agent })
    .sections.find((section) => section.name === PLAN_POLICY_SECTION)?.text

/**
 * Every model request so far has the same system text and tools as the first, and each one's
 * serialized prompt begins with the whole previous prompt (only messages were appended).
 */
function expectStableRequests(host: TranscriptHost): void {
  const [first, ...rest] = host.model.requests
  expect(first).toBeDefined()
  for (const request of rest) {
    expect(requestSystem(request)).toBe(requestSystem(first!))
    expect(JSON.stringify(request.tools)).toBe(JSON.stringify(first!.tools))
  }
  const prompts = host.model.requests.map((request) => serialized(request).prompt)
  for (let index = 1; index < prompts.length; index++) {
    expect(prompts[index]!.slice(0, prompts[index - 1]!.length)).toEqual(prompts[index - 1])
  }
}

describe("§13 placement 'transcript': the system prompt never changes with the mode", () => {
  it("the plan:policy section is '' inactive, pending, active and while an exit waits", async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    const planMode = host.root.require('planMode')
    const seen: (string | undefined)[] = [sectionText(host, agent)]
    host.model.push(async () => {
      await planMode.set(agent, true) // waits for the next step
      seen.push(sectionText(host, agent))
      return { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }
    })
    host.model.push(async () => {
      seen.push(sectionText(host, agent))
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(planMode.get(agent)).toEqual({ active: true })
    seen.push(sectionText(host, agent), sectionText(host))
    expect(seen).toEqual(['', '', '', '', ''])
    // a system-placement section would have shown the pending entry at once: this one stays registered, and ''
    expect(
      host.root
        .require('systemPrompt')
        .assemble({ agent })
        .sections.map((section) => section.name),
    ).toContain(PLAN_POLICY_SECTION)
  })

  it('across /plan, /plan off, /plan again and an approved exit: one request/header (initial); every request has the same system text and tools', async () => {
    const host = createTranscriptHost([{ text: 'one' }, { text: 'two' }, { text: 'three' }, exit(), { text: 'implementing' }])
    const agent = await host.agent()
    await agent.prompt('first')
    expect((await host.command(agent, '/plan'))?.text).toBe('Plan mode on. Send /plan off to leave.')
    await agent.prompt('second')
    expect((await host.command(agent, '/plan off'))?.text).toBe('Plan mode off.')
    await agent.prompt('third')
    await host.command(agent, '/plan')
    host.reviews.push(APPROVE)
    await agent.prompt('fourth')
    expect(host.asked).toHaveLength(1)
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'user' },
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    const headers = eventsOf(agent.session, 'request/header')
    expect(headers.map((header) => header.data.reason)).toEqual(['initial'])
    expect(headers[0]!.data.system).not.toContain(SECTION.trim())
    expect(host.model.requests).toHaveLength(5)
    expectStableRequests(host)
    expect(requestSystem(host.model.requests[0]!)).toBe(headers[0]!.data.system)
    // what each request told about the mode, in order
    expect(userMessages(agent.session)).toEqual([
      'first',
      'second',
      'notice:on',
      'guidance',
      'third',
      'notice:off',
      'fourth',
      'notice:on',
      'guidance-again', // SPEC §24: the same section is already in the conversation
    ])
  })

  it('the guidance is logged once, at the step where plan mode starts to apply, after the notice', async () => {
    const host = createTranscriptHost([{ text: 'a' }])
    const agent = await host.agent()
    await agent.prompt('hello')
    host.model.push(async () => {
      await host.command(agent, '/plan') // mid-turn: applies from the next step
      return { toolCalls: [{ toolName: 'read', input: { path: 'x' } }] }
    })
    host.model.push({ toolCalls: [{ toolName: 'read', input: { path: 'y' } }] }, { text: 'planned' })
    await agent.prompt('sketch it')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['sketch it'])
    expect(stepUserMessages(agent.session, 2, 2)).toEqual(['notice:on', 'guidance'])
    expect(stepUserMessages(agent.session, 2, 3)).toEqual([])
    expect(guidanceMessages(agent.session)).toEqual([planModeGuidance(SECTION)])
    const log = types(agent.session)
    const guidance = agent.session.events.findIndex(
      (event) => event.type === 'user/message' && event.data.source.kind === 'plugin' && event.data.source.form === 'guidance',
    )
    expect(log.lastIndexOf('plan/mode')).toBeLessThan(guidance)
    expect(readPlanLog(agent.session).guided).toBe(true)
    expectStableRequests(host)
  })

  it('the model reads the guidance as a user message whose single text block is the section exactly', async () => {
    const host = createTranscriptHost([{ text: 'planning' }])
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    const [request] = host.model.requests
    expect(userTexts(request!)).toEqual(['add caching', SECTION])
    expect(request!.prompt.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: SECTION }] })
    expect(requestSystem(request!)).not.toContain(SECTION.trim())
    const [guidance] = guidanceMessages(agent.session)
    expect(guidance).toEqual({
      content: [{ type: 'text', text: SECTION }],
      source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance' },
    })
  })

  it('a session that starts in plan mode (set while idle before the first turn) gets the guidance before its first request, with no notice', async () => {
    const host = createTranscriptHost([{ text: 'planning' }])
    const agent = await host.agent()
    expect(await host.root.require('planMode').set(agent, true)).toBe('committed')
    expect(guidanceMessages(agent.session)).toEqual([]) // an idle commit injects nothing
    await agent.prompt('add caching')
    expect(userMessages(agent.session)).toEqual(['add caching', 'guidance'])
    const log = types(agent.session)
    expect(log.indexOf('user/message', log.indexOf('turn/start') + 2)).toBeLessThan(log.indexOf('request/header'))
    expect(userTexts(host.model.requests[0]!)).toEqual(['add caching', SECTION])
  })
})

describe('§13 when the guidance is sent again', () => {
  async function guided(host: TranscriptHost) {
    const agent = await host.agent()
    host.model.push({ text: 'planning' })
    await host.command(agent, '/plan')
    await agent.prompt('plan it')
    expect(readPlanLog(agent.session).guided).toBe(true)
    return agent
  }

  it('a net-zero flip while idle (/plan off, then /plan, before the next step) sends nothing', async () => {
    const host = createTranscriptHost()
    const agent = await guided(host)
    expect((await host.command(agent, '/plan off'))?.text).toBe('Plan mode off.')
    expect((await host.command(agent, '/plan'))?.text).toBe('Plan mode on. Send /plan off to leave.')
    host.model.push({ text: 'still planning' })
    await agent.prompt('go on')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['go on'])
    expect(guidanceMessages(agent.session)).toHaveLength(1)
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
  })

  it('a net-zero flip during a turn (/plan off, then /plan, before the next step) sends nothing', async () => {
    const host = createTranscriptHost()
    const agent = await guided(host)
    host.model.push(async () => {
      expect((await host.command(agent, '/plan off'))?.text).toBe('Leaving plan mode (applies from the next step).')
      expect((await host.command(agent, '/plan'))?.text).toBe('Plan mode exit cancelled.')
      return { toolCalls: [{ toolName: 'read', input: { path: 'x' } }] }
    })
    host.model.push({ text: 'done' })
    await agent.prompt('look')
    expect(stepUserMessages(agent.session, 2, 2)).toEqual([])
    expect(guidanceMessages(agent.session)).toHaveLength(1)
  })

  it('leaving (told by the notice) then entering again sends it again, after the entering notice: the re-entry line (§24)', async () => {
    const host = createTranscriptHost()
    const agent = await guided(host)
    await host.command(agent, '/plan off')
    host.model.push({ text: 'default mode' })
    await agent.prompt('do it')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['do it', 'notice:off'])
    expect(readPlanLog(agent.session).guided).toBe(false)
    await host.command(agent, '/plan')
    host.model.push({ text: 'planning again' })
    await agent.prompt('plan more')
    expect(stepUserMessages(agent.session, 3, 1)).toEqual(['plan more', 'notice:on', 'guidance-again'])
    expect(guidanceMessages(agent.session)).toHaveLength(1)
    expect(readPlanLog(agent.session).guided).toBe(true)
    expect(userTexts(host.model.requests.at(-1)!).slice(-3)).toEqual(['plan more', ENTER_NOTICE, PLAN_GUIDANCE_AGAIN])
    expectStableRequests(host)
  })

  it('leaving without a step in between does not count: /plan off then a step, the leaving notice only', async () => {
    const host = createTranscriptHost()
    const agent = await guided(host)
    await host.command(agent, '/plan off')
    host.model.push({ text: 'ok' })
    await agent.prompt('next')
    expect(userTexts(host.model.requests.at(-1)!).at(-1)).toBe(LEAVE_NOTICE)
    expect(guidanceMessages(agent.session)).toHaveLength(1)
  })

  it('after an approved exit (cause review, no notice) and a new /plan the guidance is sent again: the re-entry line (§24)', async () => {
    const host = createTranscriptHost()
    const agent = await guided(host)
    host.reviews.push(APPROVE)
    host.model.push(exit(), { text: 'implementing' })
    await agent.prompt('present it')
    expect(eventsOf(agent.session, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'review' })
    expect(stepUserMessages(agent.session, 2, 2)).toEqual([]) // the tool result told the model
    expect(readPlanLog(agent.session).guided).toBe(false)
    await host.command(agent, '/plan')
    host.model.push({ text: 'planning the next thing' })
    await agent.prompt('next feature')
    expect(stepUserMessages(agent.session, 3, 1)).toEqual(['next feature', 'notice:on', 'guidance-again'])
    expect(guidanceMessages(agent.session)).toHaveLength(1)
    expect(eventsOf(agent.session, 'request/header').map((header) => header.data.reason)).toEqual(['initial'])
    expectStableRequests(host)
  })

  it('a review kept in plan mode (Keep planning) sends nothing', async () => {
    const host = createTranscriptHost()
    const agent = await guided(host)
    host.reviews.push([{ id: 'plan-review', selected: ['Keep planning'] }])
    host.model.push(exit(), { text: 'revising' })
    await agent.prompt('present it')
    expect(stepUserMessages(agent.session, 2, 2)).toEqual([])
    expect(guidanceMessages(agent.session)).toHaveLength(1)
  })

  it('a restart (new host over the same JSONL directory) does not re-send guidance the log shows is held', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-policy-transcript-'))
    const first = createTranscriptHost([{ text: 'planning' }], { dir })
    const agent = await first.agent()
    await first.command(agent, '/plan')
    await agent.prompt('plan it')
    await first.root.require('sessions').close(agent.session)

    const second = createTranscriptHost([{ text: 'still planning' }], { dir })
    const session = await second.root.require('sessions').open(agent.session.id)
    expect(readPlanLog(session).guided).toBe(true)
    const resumed = await second.agent(session)
    await resumed.prompt('continue')
    expect(stepUserMessages(session, 2, 1)).toEqual(['continue'])
    expect(guidanceMessages(session)).toHaveLength(1)
    expect(userTexts(second.model.requests[0]!)).toEqual(['plan it', SECTION, 'continue'])
    expect(eventsOf(session, 'request/header')).toHaveLength(1)
    first.root.dispose()
    second.root.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('a restart before the guidance reached a step: the new host sends it at its first step', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-policy-transcript-'))
    const first = createTranscriptHost([{ text: 'hello' }], { dir })
    const agent = await first.agent()
    await agent.prompt('hi')
    await first.command(agent, '/plan') // idle commit: logged, nothing told yet
    await first.root.require('sessions').close(agent.session)

    const second = createTranscriptHost([{ text: 'planning' }], { dir })
    const session = await second.root.require('sessions').open(agent.session.id)
    const resumed = await second.agent(session)
    await resumed.prompt('plan it')
    expect(stepUserMessages(session, 2, 1)).toEqual(['plan it', 'notice:on', 'guidance'])
    first.root.dispose()
    second.root.dispose()
    await rm(dir, { recursive: true, force: true })
  })
})

describe('§13 model-initiated entry (cause model)', () => {
  it('an entry selected by enterAtBoundary (what an approved enter_plan_mode does) sends the guidance at the next step, without a notice', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    host.model.push(async () => {
      host.root.require('planMode').enterAtBoundary(agent)
      return { toolCalls: [{ toolName: 'read', input: { path: 'x' } }] }
    })
    host.model.push({ text: 'planning' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(stepUserMessages(agent.session, 1, 1)).toEqual(['go'])
    expect(stepUserMessages(agent.session, 1, 2)).toEqual(['guidance'])
    expect(userTexts(host.model.requests[1]!).at(-1)).toBe(SECTION)
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
  })
})

describe('§13 an approved enter_plan_mode (§12)', () => {
  it('the model asks, the user agrees: the guidance follows at the next step, without a notice; Not now sends nothing', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    host.reviews.push([{ id: 'plan-enter', selected: ['Not now'] }], [{ id: 'plan-enter', selected: ['Enter plan mode'] }])
    host.model.push({ toolCalls: [{ toolName: ENTER_PLAN_MODE, input: { reason: 'a risky migration' } }] }, { text: 'fine' })
    await agent.prompt('migrate')
    expect(guidanceMessages(agent.session)).toEqual([])
    host.model.push({ toolCalls: [{ toolName: ENTER_PLAN_MODE, input: { reason: 'still risky' } }] }, { text: 'planning' })
    await agent.prompt('ask again')
    expect(host.asked.map((request) => request.questions[0]!.id)).toEqual(['plan-enter', 'plan-enter'])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(stepUserMessages(agent.session, 2, 2)).toEqual(['guidance'])
    expect(userTexts(host.model.requests.at(-1)!).at(-1)).toBe(SECTION)
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
    expectStableRequests(host)
  })
})

describe('§13 failure paths: nothing is added that the step will not use', () => {
  it('a rejected pre-step adds nothing; the next accepted one adds the guidance', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    let reject = true
    host.root.on('agent/pre-step', async (_payload, next): Promise<PreStepDecision> =>
      reject ? { kind: 'reject', reason: 'test' } : next(),
    )
    await host.command(agent, '/plan')
    const outcome = await agent.prompt('plan it')
    expect(outcome.reason).toBe('rejected')
    expect(guidanceMessages(agent.session)).toEqual([])
    expect(userMessages(agent.session)).toEqual(['plan it'])
    reject = false
    host.model.push({ text: 'planning' })
    await agent.prompt('again')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['again', 'guidance'])
  })

  it('an aborted signal adds nothing; the next accepted step adds the guidance', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    let cancel = true
    host.root.on('agent/pre-step', async (_payload, next) => {
      if (cancel) void agent.cancel()
      return next()
    })
    await host.command(agent, '/plan')
    const outcome = await agent.prompt('plan it')
    expect(outcome.reason).toBe('cancelled')
    expect(guidanceMessages(agent.session)).toEqual([])
    cancel = false
    host.model.push({ text: 'planning' })
    await agent.prompt('again')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['again', 'guidance'])
  })

  it("a flush whose plan/mode append throws leaves the logged state off: no guidance until a later step's flush succeeds", async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    const refuse = { on: false }
    host.root
      .require('sessionInvariants')
      .register('test', (event) => (refuse.on && event.type === 'plan/mode' ? 'test refuses plan/mode' : undefined))
    host.model.push(async () => {
      await host.command(agent, '/plan') // queued
      refuse.on = true
      return { toolCalls: [{ toolName: 'read', input: { path: 'x' } }] }
    })
    host.model.push(async () => {
      refuse.on = false
      return { toolCalls: [{ toolName: 'read', input: { path: 'y' } }] }
    })
    host.model.push({ text: 'planning' })
    await agent.prompt('go')
    expect(
      host.logger.lines.filter((line) => line.message.startsWith('plan-mode: failed to append selected plan mode at step start')),
    ).toHaveLength(1)
    expect(stepUserMessages(agent.session, 1, 2)).toEqual([])
    expect(stepUserMessages(agent.session, 1, 3)).toEqual(['notice:on', 'guidance'])
  })

  it('a malformed downstream decision is passed on untouched, for the host to report', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    host.root.on('agent/pre-step', async () => ({ kind: 'enter', messages: 'not a list' }) as unknown as PreStepDecision)
    await host.command(agent, '/plan')
    const outcome = await agent.prompt('plan it')
    expect(outcome.reason).toBe('error')
    expect(outcome.error).toContain('not a pre-step decision')
    expect(outcome.error).toContain('"messages":"not a list"')
    expect(guidanceMessages(agent.session)).toEqual([])
  })

  it('a guidance message the log refuses is not held: the step fails, and the next accepted step sends it again', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    const refuse = { on: true }
    host.root
      .require('sessionInvariants')
      .register('test', (event) =>
        refuse.on && event.type === 'user/message' && event.data.source.kind === 'plugin' && event.data.source.form === 'guidance'
          ? 'test refuses guidance'
          : undefined,
      )
    await host.command(agent, '/plan')
    const outcome = await agent.prompt('plan it')
    expect(outcome.reason).toBe('error')
    expect(guidanceMessages(agent.session)).toEqual([])
    expect(readPlanLog(agent.session).guided).toBe(false)
    expect(host.model.requests).toHaveLength(0)
    refuse.on = false
    host.model.push({ text: 'planning' })
    await agent.prompt('again')
    expect(stepUserMessages(agent.session, 2, 1)).toEqual(['again', 'guidance'])
  })

  it('a silent exit (exitAtBoundary) pending at the step: the step leaves plan mode and adds nothing', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    await host.command(agent, '/plan')
    host.model.push(async () => {
      host.root.require('planMode').exitAtBoundary(agent)
      return { toolCalls: [{ toolName: 'read', input: { path: 'x' } }] }
    })
    host.model.push({ text: 'done' })
    await agent.prompt('go')
    expect(stepUserMessages(agent.session, 1, 1)).toEqual(['go', 'guidance'])
    expect(stepUserMessages(agent.session, 1, 2)).toEqual([])
    expect(readPlanLog(agent.session).guided).toBe(false)
  })
})

describe('§13 lifetime and composition', () => {
  it('disposing the plugin removes the guidance (and the section); the system placement of a new load renders again', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    host.fibers.policy.dispose()
    expect(sectionText(host, agent)).toBeUndefined()
    await host.command(agent, '/plan')
    host.model.push({ text: 'planning' })
    await agent.prompt('plan it')
    expect(userMessages(agent.session)).toEqual(['plan it'])
    host.root.plugin(planPolicyPlugin, { section: SECTION })
    expect(sectionText(host, agent)).toBe(SECTION)
    host.model.push({ text: 'more' })
    await agent.prompt('more')
    expect(guidanceMessages(agent.session)).toEqual([])
  })

  it('when plan-core goes away the guidance goes with it; when it returns the layer is re-applied and hands it over again: notice, then guidance', async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    host.model.push({ text: 'hello' })
    await agent.prompt('hi')
    host.fibers.core.dispose()
    expect([host.fibers.policy.applied, host.fibers.policy.disposed]).toEqual([false, false])
    host.model.push({ text: 'no plan mode' })
    await agent.prompt('still here')
    expect(userMessages(agent.session)).toEqual(['hi', 'still here'])
    host.root.plugin(planCorePlugin)
    expect(host.fibers.policy.applied).toBe(true)
    await host.root.require('planMode').set(agent, true)
    host.model.push({ text: 'planning' })
    await agent.prompt('plan it')
    expect(stepUserMessages(agent.session, 3, 1)).toEqual(['plan it', 'notice:on', 'guidance'])
    // the plan tools left with plan-core and came back; the system text never changed
    expect(new Set(host.model.requests.map((request) => requestSystem(request))).size).toBe(1)
  })

  it("the guidance goes after every message of the decision, steered ones and a downstream listener's included", async () => {
    const host = createTranscriptHost()
    const agent = await host.agent()
    host.root.on('agent/pre-step', async (payload, next) => {
      const decision = await next()
      if (decision.kind !== 'enter' || payload.step !== 2) return decision
      return {
        ...decision,
        messages: [...decision.messages, { content: [{ type: 'text', text: 'downstream' }], source: { kind: 'user' } }],
      }
    })
    host.model.push(async () => {
      await host.command(agent, '/plan')
      agent.steer('also this')
      return { toolCalls: [{ toolName: 'read', input: { path: 'x' } }] }
    })
    host.model.push({ text: 'planning' })
    await agent.prompt('go')
    expect(stepUserMessages(agent.session, 1, 2)).toEqual(['also this', 'downstream', 'notice:on', 'guidance'])
  })

  it("placement 'system' (the default, §4) hands plan-core no guidance: the section renders and no guidance message is ever logged", async () => {
    const host = createTranscriptHost([], {}, 'system')
    const agent = await host.agent()
    await host.command(agent, '/plan')
    host.model.push({ text: 'planning' })
    await agent.prompt('plan it')
    expect(requestSystem(host.model.requests[0]!)).toContain(SECTION)
    expect(userMessages(agent.session)).toEqual(['plan it'])
    await host.command(agent, '/plan off')
    host.model.push({ text: 'doing' })
    await agent.prompt('do it')
    expect(requestSystem(host.model.requests[1]!)).not.toContain(SECTION.trim())
    expect(eventsOf(agent.session, 'request/header').map((header) => header.data.reason)).toEqual(['initial', 'change'])
    expect(userMessages(agent.session)).toEqual(['plan it', 'do it', 'notice:off'])
  })
})
