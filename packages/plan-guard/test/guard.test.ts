import { Context, MissingServiceError } from '@planmode/context'
import { agentsPlugin, createScriptedModel, sessionStorePlugin, toolsPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planGuardPlugin, planGuardRefusal, PLAN_GUARD_EXEMPT_TOOLS } from '@planmode/plan-guard'
import { describe, expect, it } from 'vitest'
import { eventsOf, recordingLogger } from '@planmode/testkit'
import { PLAN, guardHost, refusedContent, registerWorkspace } from './support.js'

const REFUSAL =
  'write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'

describe('§14 refusal in plan mode, through the host loop', () => {
  it('refuses a write with the exact text; the tool does not run; the logged tool/result is an error the model reads', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'write_file' }], 'I will plan instead.')
    expect(planGuardRefusal('write_file')).toBe(REFUSAL)
    expect(host.runs).toEqual([])
    const [result] = eventsOf(agent.session, 'tool/result')
    expect(result!.data).toEqual({
      toolCallId: expect.any(String),
      toolName: 'write_file',
      isError: true,
      content: [{ type: 'text', text: `Error: ${REFUSAL}` }],
    })
    expect(JSON.stringify(host.model.requests[1]!.prompt)).toContain(JSON.stringify(`Error: ${REFUSAL}`).slice(1, -1))
    expect(host.planMode().get(agent)).toEqual({ active: true })
  })

  it('runs the same call in the default mode', async () => {
    const host = guardHost()
    const agent = await host.agent()
    await host.turn(agent, [{ toolName: 'write_file' }])
    expect(host.runs).toEqual(['write_file(greeting.txt)'])
    expect(host.results(agent)).toMatchObject([
      { toolName: 'write_file', isError: false, content: [{ type: 'text', text: 'write_file done' }] },
    ])
  })

  it('runs readOnlyHint: true tools and refuses every other annotation (absent, empty, false, destructive)', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    const names = ['read_file', 'list_files', 'write_file', 'edit_file', 'delete_file', 'run_tests']
    await host.turn(
      agent,
      names.map((toolName) => ({ toolName })),
    )
    expect(host.runs).toEqual(['read_file(greeting.txt)', 'list_files(greeting.txt)'])
    expect(host.results(agent).map((result) => [result.toolName, result.isError])).toEqual([
      ['read_file', false],
      ['list_files', false],
      ['write_file', true],
      ['edit_file', true],
      ['delete_file', true],
      ['run_tests', true],
    ])
    for (const result of host.results(agent).filter((result) => result.isError)) {
      expect(result.content).toEqual(refusedContent(result.toolName))
    }
  })

  it('runs tools named in allow, and still refuses the others', async () => {
    const host = guardHost({ guard: { allow: ['run_tests', 'not_registered'] } })
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'run_tests' }, { toolName: 'write_file' }])
    expect(host.runs).toEqual(['run_tests(greeting.txt)'])
    expect(host.results(agent).map((result) => result.isError)).toEqual([false, true])
  })

  it('lets exit_plan_mode through: leaving plan mode at the next step, where the write then runs', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    host.model.push(
      { toolCalls: [{ toolName: 'write_file', input: { path: 'early.txt' } }] },
      { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }] },
      { toolCalls: [{ toolName: 'write_file', input: { path: 'greeting.txt' } }] },
      { text: 'Done.' },
    )
    await agent.prompt('rename the greeting')
    expect(host.results(agent).map((result) => [result.toolName, result.isError])).toEqual([
      ['write_file', true],
      ['exit_plan_mode', false],
      ['write_file', false],
    ])
    expect(host.runs).toEqual(['exit_plan_mode', 'write_file(greeting.txt)'])
    expect(host.planMode().get(agent)).toEqual({ active: false })
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
  })

  it('lets enter_plan_mode through in plan mode (its own tool decides what a repeated entry means)', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'enter_plan_mode', input: { reason: 'again' } }])
    expect(host.runs).toEqual(['enter_plan_mode'])
    expect(host.results(agent)[0]!.isError).toBe(false)
  })

  it('lets enter_plan_mode and exit_plan_mode through by name, whatever their annotations', async () => {
    expect(PLAN_GUARD_EXEMPT_TOOLS).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    const host = guardHost({ planTools: false })
    const ran: string[] = []
    for (const name of PLAN_GUARD_EXEMPT_TOOLS) {
      host.root.require('tools').register({
        name,
        description: `stand-in ${name}`,
        parameters: { type: 'object' },
        annotations: { readOnlyHint: false },
        execute: () => void ran.push(name),
      })
    }
    const agent = await host.planAgent()
    await host.turn(
      agent,
      PLAN_GUARD_EXEMPT_TOOLS.map((toolName) => ({ toolName, input: {} })),
    )
    expect(ran).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    expect(host.results(agent).map((result) => result.isError)).toEqual([false, false])
  })

  it('judges the logged state, not a pending selection: entering mid-turn guards from the next step', async () => {
    const host = guardHost()
    const agent = await host.agent()
    host.model.push(
      async () => {
        expect(await host.planMode().set(agent, true)).toBe('queued')
        return { toolCalls: [{ toolName: 'write_file', input: { path: 'same-step.txt' } }] }
      },
      { toolCalls: [{ toolName: 'write_file', input: { path: 'next-step.txt' } }] },
      { text: 'ok' },
    )
    await agent.prompt('go')
    expect(host.runs).toEqual(['write_file(same-step.txt)'])
    expect(host.results(agent).map((result) => result.isError)).toEqual([false, true])
  })

  it('judges the logged state after an approved exit: the rest of that tool batch is still guarded', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'exit_plan_mode', input: { plan: PLAN } }, { toolName: 'write_file' }])
    expect(host.results(agent).map((result) => [result.toolName, result.isError])).toEqual([
      ['exit_plan_mode', false],
      ['write_file', true],
    ])
    expect(host.runs).toEqual(['exit_plan_mode'])
    // the exit landed at the turn's next step (the closing answer)
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })

  it('leaves calls without an agent untouched, in any mode', async () => {
    const host = guardHost()
    await host.planAgent()
    const result = await host.root
      .require('tools')
      .execute('write_file', { path: 'direct.txt' }, { signal: new AbortController().signal, toolCallId: 'd1' })
    expect(result.isError).toBe(false)
    expect(host.runs).toEqual(['write_file(direct.txt)'])
  })

  it('guards each agent by its own session: a child in plan mode under a default-mode parent, and the reverse', async () => {
    const host = guardHost()
    const agents = host.root.require('agents')
    const sessions = host.root.require('sessions')
    const parent = await host.agent()
    const child = agents.create({ session: await sessions.create(), owner: parent })
    await host.planMode().set(child, true)
    await host.turn(child, [{ toolName: 'write_file', input: { path: 'child.txt' } }])
    await host.turn(parent, [{ toolName: 'write_file', input: { path: 'parent.txt' } }])
    expect(host.runs).toEqual(['write_file(parent.txt)'])
    expect(host.results(child)[0]!.content).toEqual(refusedContent('write_file'))

    // A child that took its first step while its owner was in the default mode stays there (SPEC §21).
    const laterPlanning = await host.agent()
    const defaultChild = agents.create({ session: await sessions.create(), owner: laterPlanning })
    await host.turn(defaultChild, [{ toolName: 'write_file', input: { path: 'child2.txt' } }])
    await host.planMode().set(laterPlanning, true)
    await host.turn(defaultChild, [{ toolName: 'write_file', input: { path: 'child3.txt' } }])
    await host.turn(laterPlanning, [{ toolName: 'write_file', input: { path: 'parent2.txt' } }])
    expect(host.runs).toEqual(['write_file(parent.txt)', 'write_file(child2.txt)', 'write_file(child3.txt)'])
  })

  it('refuses the writes of a child that inherited plan mode from its owner, by its own session (SPEC §21)', async () => {
    const host = guardHost()
    const agents = host.root.require('agents')
    const sessions = host.root.require('sessions')
    const planningParent = await host.planAgent()
    const child = agents.create({ session: await sessions.create(), owner: planningParent })
    expect(host.planMode().get(child)).toEqual({ active: false })
    await host.turn(child, [{ toolName: 'write_file', input: { path: 'child.txt' } }])
    expect(host.runs).toEqual([])
    expect(host.results(child)[0]!.content).toEqual(refusedContent('write_file'))
    expect(eventsOf(child.session, 'plan/mode').map((e) => e.data)).toEqual([{ active: true, cause: 'inherit' }])
    // Its owner leaving plan mode later does not reach it: the child has a header.
    await host.planMode().set(planningParent, false)
    await host.turn(child, [{ toolName: 'write_file', input: { path: 'child2.txt' } }])
    expect(host.runs).toEqual([])
  })

  it('refuses outermost: a tool/execute listener registered before the guard (without prepend) never sees a refused call', async () => {
    const host = guardHost({ guard: false })
    const seen: string[] = []
    host.root.on('tool/execute', (payload, next) => {
      seen.push(payload.name)
      return next()
    })
    host.root.plugin(planGuardPlugin)
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'write_file' }, { toolName: 'read_file' }])
    expect(seen).toEqual(['read_file'])
  })
})

describe('§14 the catalog never changes', () => {
  it('the model receives byte-identical tools with and without the guard, in both modes', async () => {
    const catalog = async (guard: boolean, plan: boolean) => {
      const host = guardHost(guard ? {} : { guard: false })
      const agent = plan ? await host.planAgent() : await host.agent()
      host.model.push({ text: 'hi' })
      await agent.prompt('hello')
      const header = eventsOf(agent.session, 'request/header')[0]!
      return {
        request: JSON.stringify(host.model.requests[0]!.tools),
        header: JSON.stringify(header.data.tools),
        schemas: JSON.stringify(host.root.require('tools').schemas()),
      }
    }
    const reference = await catalog(false, false)
    expect(await catalog(true, false)).toEqual(reference)
    expect(await catalog(true, true)).toEqual(reference)
    expect(await catalog(false, true)).toEqual(reference)
    expect(reference.schemas).not.toContain('readOnlyHint')
  })

  it('loading and disposing the guard leaves schemas() as it was', async () => {
    const host = guardHost({ guard: false })
    const before = JSON.stringify(host.root.require('tools').schemas())
    const guard = host.root.plugin(planGuardPlugin)
    expect(JSON.stringify(host.root.require('tools').schemas())).toBe(before)
    guard.dispose()
    expect(JSON.stringify(host.root.require('tools').schemas())).toBe(before)
  })
})

describe('§8 lifetime and composition', () => {
  it('requires planMode: loading without it throws a MissingServiceError naming the service', () => {
    const error = (() => {
      try {
        new Context().plugin(planGuardPlugin)
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(error).toBeInstanceOf(MissingServiceError)
    expect((error as MissingServiceError).service).toBe('planMode')
    expect((error as Error).message).toContain('"planMode"')
  })

  it('loads before any tools registry and guards the one composed later (the guard is a context event listener)', async () => {
    const root = new Context({ logger: recordingLogger() })
    root.plugin(sessionStorePlugin, {})
    root.plugin(planCorePlugin)
    const guard = root.plugin(planGuardPlugin)
    expect(guard.applied).toBe(true)
    root.plugin(toolsPlugin)
    const runs: string[] = []
    registerWorkspace(root, runs)
    root.plugin(agentsPlugin, { model: createScriptedModel([{ toolCalls: [{ toolName: 'write_file', input: {} }] }, { text: 'ok' }]) })
    const agent = root.require('agents').create({ session: await root.require('sessions').create() })
    await root.require('planMode').set(agent, true)
    await agent.prompt('go')
    expect(runs).toEqual([])
    expect(eventsOf(agent.session, 'tool/result')[0]!.data.content).toEqual(refusedContent('write_file'))
  })

  it('disposal removes the guard: the same call then runs in plan mode', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'before.txt' } }])
    host.guard!.dispose()
    expect(host.guard!.disposed).toBe(true)
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'after.txt' } }])
    expect(host.runs).toEqual(['write_file(after.txt)'])
    expect(host.planMode().get(agent)).toEqual({ active: true })
  })

  it('is undone when planMode goes away and guards again when a planMode service returns (flat)', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    host.core.dispose()
    expect(host.guard).toMatchObject({ applied: false, disposed: false })
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'no-core.txt' } }])
    expect(host.runs).toEqual(['write_file(no-core.txt)'])

    host.root.plugin(planCorePlugin)
    expect(host.guard).toMatchObject({ applied: true, disposed: false })
    // the session's log still says plan mode: the returned controller folds it, and the guard refuses again
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'core-back.txt' } }])
    expect(host.runs).toEqual(['write_file(no-core.txt)'])
    expect(host.results(agent).at(-1)!.content).toEqual(refusedContent('write_file'))
  })

  it('is undone and reapplied the same way when composed in a bundle beside plan-core', async () => {
    const host = guardHost({ guard: false })
    host.core.dispose()
    let core: ReturnType<Context['plugin']> | undefined
    let bundle: Context | undefined
    let guard: ReturnType<Context['plugin']> | undefined
    host.root.plugin({
      name: 'test/bundle',
      apply(ctx) {
        bundle = ctx
        core = ctx.plugin(planCorePlugin)
        guard = ctx.plugin(planGuardPlugin, { allow: ['run_tests'] })
      },
    })
    const agent = await host.planAgent()
    await host.turn(agent, [
      { toolName: 'write_file', input: { path: 'one.txt' } },
      { toolName: 'run_tests', input: {} },
    ])
    expect(host.runs).toEqual(['run_tests()'])
    core!.dispose()
    expect(guard).toMatchObject({ applied: false, disposed: false })
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'two.txt' } }])
    expect(host.runs).toEqual(['run_tests()', 'write_file(two.txt)'])
    bundle!.plugin(planCorePlugin)
    expect(guard).toMatchObject({ applied: true, disposed: false })
    await host.turn(agent, [
      { toolName: 'write_file', input: { path: 'three.txt' } },
      { toolName: 'run_tests', input: {} },
    ])
    expect(host.runs).toEqual(['run_tests()', 'write_file(two.txt)', 'run_tests()'])
  })

  it("nested in plan-core's own context: disposed with it for good", async () => {
    const host = guardHost({ guard: false })
    const nested = host.core.ctx.plugin(planGuardPlugin)
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'guarded.txt' } }])
    expect(host.runs).toEqual([])
    host.core.dispose()
    expect(nested.disposed).toBe(true)
    host.root.plugin(planCorePlugin)
    await host.turn(agent, [{ toolName: 'write_file', input: { path: 'unguarded.txt' } }])
    expect(host.runs).toEqual(['write_file(unguarded.txt)'])
  })

  it('a planMode controller that throws fails the call closed (the host reports it; the tool does not run)', async () => {
    const host = guardHost()
    const agent = await host.planAgent()
    const planMode = host.planMode()
    const original = planMode.get
    planMode.get = () => {
      throw new Error('plan state unreadable')
    }
    try {
      await host.turn(agent, [{ toolName: 'write_file' }])
    } finally {
      planMode.get = original
    }
    expect(host.runs).toEqual([])
    expect(host.results(agent)[0]!.content).toEqual([{ type: 'text', text: 'Error: plan state unreadable' }])
  })
})
