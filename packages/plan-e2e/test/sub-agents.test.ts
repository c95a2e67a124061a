import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { HostAgent } from '@planmode/host'
import { planGuardPlugin, planGuardRefusal } from '@planmode/plan-guard'
import { planPolicyPlugin, RECOMMENDED_CHILD_SECTION } from '@planmode/plan-policy'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { Agent, SessionEvent } from '@planmode/seams'
import { eventsOf } from '@planmode/testkit'
import { createPlanHost, SECTION, type PlanHost } from './plan-host.js'

/** One request the scripted model received. */
type ModelRequest = PlanHost['model']['requests'][number]

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const systemOf = (request: ModelRequest | undefined): string =>
  (request?.prompt ?? []).flatMap((message) => (message.role === 'system' ? [message.content] : [])).join('\n')

/** The text of every user message of a request, in order. */
const userTextsOf = (request: ModelRequest | undefined): string[] =>
  (request?.prompt ?? []).flatMap((message) =>
    message.role === 'user' ? message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])) : [],
  )

/**
 * Registers `spawn`, a read-only sub-agent tool as a host would write one:
 * it creates a child of its calling agent over a new session, runs one
 * turn of it on the question and returns the child's last message.
 */
function spawnTool(host: PlanHost, children: HostAgent[]): void {
  host.root.require('tools').register<{ question: string }, string>({
    name: 'spawn',
    description: 'Runs a helper agent on a question.',
    annotations: { readOnlyHint: true },
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    async execute({ question }, execution) {
      const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: execution.agent })
      children.push(child)
      await child.prompt(question)
      const said = eventsOf(child.session, 'assistant/message').flatMap((event) =>
        event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])),
      )
      return said.at(-1) ?? ''
    },
  })
}

/** Where the child's `plan/mode` and first `request/header` are, and the `plan/mode` data. */
function inheritance(events: readonly SessionEvent[]) {
  const mode = events.findIndex((event) => event.type === 'plan/mode')
  return { mode, data: events[mode]?.data, header: events.findIndex((event) => event.type === 'request/header') }
}

/** parent: spawn; child: a write, then its report; parent: done. */
const SCRIPT = [
  { toolCalls: [{ toolName: 'spawn', input: { question: 'where is the cache?' } }] },
  {
    toolCalls: [
      { toolName: 'read', input: { path: 'src/cache.ts' } },
      { toolName: 'write', input: { path: 'NOTES.md' } },
    ],
  },
  { text: 'the cache is in src/cache.ts' },
  { text: 'the helper found it' },
]

describe('§21 a parent in plan mode whose child tries to write, through the real loop', () => {
  it('guidance only: the child inherits at its first step, its request carries the child section (not the plan section), and the write runs', async () => {
    const host = createPlanHost()
    const children: HostAgent[] = []
    spawnTool(host, children)
    const parent = await host.agent()
    await host.command(parent, '/plan')
    host.model.push(...SCRIPT)
    await parent.prompt('find the cache')
    const [child] = children
    expect(child?.owner).toBe(parent)
    const { mode, data, header } = inheritance(child!.session.events)
    expect(data).toEqual({ active: true, cause: 'inherit' })
    expect(mode).toBeLessThan(header)
    // The parent's request has the plan section; the child's (request 2) the child section alone.
    expect(systemOf(host.model.requests[0])).toContain(SECTION)
    expect(systemOf(host.model.requests[1])).toContain(RECOMMENDED_CHILD_SECTION)
    expect(systemOf(host.model.requests[1])).not.toContain(SECTION)
    // Nothing tells the child's model about the mode in its transcript: no notice.
    expect(userTextsOf(host.model.requests[1])).toEqual(['where is the cache?'])
    // Plan mode guides: without plan-guard the child's write runs.
    expect(host.written).toEqual(['NOTES.md'])
    expect(eventsOf(child!.session, 'tool/result').map((event) => [event.data.toolName, event.data.isError])).toEqual([
      ['read', false],
      ['write', false],
    ])
    // The report comes back as the parent's tool result; both stay in plan mode.
    const report = eventsOf(parent.session, 'tool/result').find((event) => event.data.toolName === 'spawn')
    expect(report?.data).toMatchObject({ isError: false, content: [{ type: 'text', text: 'the cache is in src/cache.ts' }] })
    const planMode = host.root.require('planMode')
    expect(planMode.get(parent)).toEqual({ active: true })
    expect(planMode.get(child!)).toEqual({ active: true })
    expect(host.asked).toEqual([])
  })

  it('with plan-guard: the child is guarded by its own session, so its write is refused and its read runs', async () => {
    const host = createPlanHost()
    host.root.plugin(planGuardPlugin)
    const children: HostAgent[] = []
    spawnTool(host, children)
    const parent = await host.agent()
    await host.command(parent, '/plan')
    host.model.push(...SCRIPT)
    await parent.prompt('find the cache')
    expect(eventsOf(children[0]!.session, 'tool/result').map((event) => [event.data.toolName, event.data.content[0]?.text])).toEqual([
      ['read', 'contents of src/cache.ts'],
      ['write', `Error: ${planGuardRefusal('write')}`],
    ])
    expect(host.written).toEqual([])
    // The parent's spawn is read-only, so the guard let it run.
    expect(eventsOf(parent.session, 'tool/result').map((event) => [event.data.toolName, event.data.isError])).toEqual([['spawn', false]])
  })

  it("with the guidance in the transcript and a configured childSection: the child's first step carries it as a guidance message", async () => {
    const host = createPlanHost()
    host.fibers.policy!.dispose()
    const childSection = 'HELPER GUIDANCE: read only, report what you find.'
    host.root.plugin(planPolicyPlugin, { section: SECTION, placement: 'transcript', childSection })
    const children: HostAgent[] = []
    spawnTool(host, children)
    const parent = await host.agent()
    await host.command(parent, '/plan')
    host.model.push(...SCRIPT)
    await parent.prompt('find the cache')
    expect(userTextsOf(host.model.requests[0])).toEqual(['find the cache', SECTION])
    expect(userTextsOf(host.model.requests[1])).toEqual(['where is the cache?', childSection])
    const guidance = eventsOf(children[0]!.session, 'user/message').filter(
      (event) => event.data.source.kind === 'plugin' && event.data.source.form === 'guidance',
    )
    expect(guidance.map((event) => event.data.content)).toEqual([[{ type: 'text', text: childSection }]])
    expect(systemOf(host.model.requests[1])).not.toContain(childSection)
  })

  it("a child's exit_plan_mode is refused while its owner lives, and nothing is asked or recorded", async () => {
    const host = createPlanHost()
    const children: HostAgent[] = []
    spawnTool(host, children)
    const parent = await host.agent()
    await host.command(parent, '/plan')
    host.model.push(
      { toolCalls: [{ toolName: 'spawn', input: { question: 'plan it' } }] },
      { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: '# Child plan\n\n1. x' } }] },
      { text: 'I could not present it' },
      { text: 'ok' },
    )
    await parent.prompt('delegate')
    const result = eventsOf(children[0]!.session, 'tool/result')[0]!
    expect(result.data.isError).toBe(true)
    expect(result.data.content[0]!.text).toMatch(/^Error: agent .* is a child of agent .* and cannot ask the user/)
    expect(host.asked).toEqual([])
    expect(children[0]!.session.events.some((event) => (event.type as string) === 'plan/review')).toBe(false)
    expect(host.root.require('planMode').get(children[0]!)).toEqual({ active: true })
  })

  it('a child whose owner is in the default mode starts in the default mode, and a later switch of the owner does not reach it', async () => {
    const host = createPlanHost()
    const parent = await host.agent()
    const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
    host.model.push({ text: 'first' }, { text: 'second' })
    await child.prompt('look')
    await host.command(parent, '/plan')
    await child.prompt('look again')
    expect(child.session.events.some((event) => event.type === 'plan/mode')).toBe(false)
    expect(systemOf(host.model.requests[1])).not.toContain(RECOMMENDED_CHILD_SECTION)
    expect(host.root.require('planMode').get(child)).toEqual({ active: false })
  })
})

describe('§21 a restart between the parent entering plan mode and the child taking its first step', () => {
  /** A plan host over JSONL files in `dir`. */
  function durableHost(dir: string): PlanHost {
    return createPlanHost(undefined, [], { dir })
  }

  it('the reopened child inherits from the reopened parent: the owner is read from its log, not from memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'planmode-e2e-child-'))
    dirs.push(dir)
    const first = durableHost(dir)
    const parent = await first.agent()
    await first.command(parent, '/plan')
    const childSession = await first.root.require('sessions').create()
    // The child exists (its session, an agent with its owner) but takes no step before the process goes.
    first.root.require('agents').create({ session: childSession, owner: parent })
    const ids = { parent: parent.session.id, child: childSession.id }
    const sessions = first.root.require('sessions')
    await sessions.close(parent.session)
    await sessions.close(childSession)
    first.root.dispose()

    const second = durableHost(dir)
    const reopened = second.root.require('sessions')
    const owner: Agent = await second.agent(await reopened.open(ids.parent))
    const child = second.root.require('agents').create({ session: await reopened.open(ids.child), owner })
    const planMode = second.root.require('planMode')
    expect(planMode.get(owner)).toEqual({ active: true })
    expect(planMode.get(child)).toEqual({ active: false })
    second.model.push({ text: 'found it' })
    await child.prompt('where is the cache?')
    const { data, mode, header } = inheritance(child.session.events)
    expect(data).toEqual({ active: true, cause: 'inherit' })
    expect(mode).toBeLessThan(header)
    expect(systemOf(second.model.requests[0])).toContain(RECOMMENDED_CHILD_SECTION)
    expect(planMode.get(child)).toEqual({ active: true })
    second.root.dispose()
  })

  it("an owner's /plan still pending at the restart is not inherited: the child reads the owner's logged state", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'planmode-e2e-child-'))
    dirs.push(dir)
    const first = durableHost(dir)
    const parent = await first.agent()
    // /plan during the parent's last step: queued, logged only as command records (SPEC §3.2, §9).
    first.model.push(async () => {
      await first.command(parent, '/plan')
      return { text: 'ok' }
    })
    await parent.prompt('hello')
    expect(first.root.require('planMode').get(parent)).toEqual({ active: false, pending: true })
    const ids = { parent: parent.session.id, child: (await first.root.require('sessions').create()).id }
    const sessions = first.root.require('sessions')
    for (const session of sessions.loaded()) await sessions.close(session)
    first.root.dispose()

    const second = durableHost(dir)
    const reopened = second.root.require('sessions')
    const owner = await second.agent(await reopened.open(ids.parent))
    const child = second.root.require('agents').create({ session: await reopened.open(ids.child), owner })
    // The rebuilt selection is pending for the owner; its logged state is the default mode.
    expect(second.root.require('planMode').get(owner)).toEqual({ active: false, pending: true })
    second.model.push({ text: 'child' })
    await child.prompt('look')
    expect(child.session.events.some((event) => event.type === 'plan/mode')).toBe(false)
    // The owner's next step applies its selection; the child, which has a header now, stays as it is.
    second.model.push({ text: 'parent' }, { text: 'child again' })
    await owner.prompt('go on')
    await child.prompt('look again')
    expect(second.root.require('planMode').get(owner)).toEqual({ active: true })
    expect(second.root.require('planMode').get(child)).toEqual({ active: false })
    second.root.dispose()
  })
})
