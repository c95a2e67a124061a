import { RECOMMENDED_CHILD_SECTION } from '@planmode/plan-policy'
import { afterEach, describe, expect, it } from 'vitest'
import { createOwnHost, createScriptedModel, type OwnAgent, type OwnHost } from '../src/index.js'
import { exploreTool } from './explore-tool.js'
import { eventsOf, systemOf } from './helpers.js'

const hosts: OwnHost[] = []
afterEach(() => {
  for (const host of hosts.splice(0)) host.dispose()
})

describe('the sub-agent tool of docs/own-host.md', () => {
  it('runs a child of the caller, which inherits plan mode from its owner and reads the child section; its last words are the result', async () => {
    const model = createScriptedModel([{ text: 'The CLI parses flags in src/cli.ts.' }])
    const host = createOwnHost({ model })
    hosts.push(host)
    const parent = host.agent(await host.session())
    expect(await host.ctx.require('planMode').set(parent, true)).toBe('committed')
    const made: OwnAgent[] = []
    const tracked: OwnHost = { ...host, agent: (session, options) => made[made.push(host.agent(session, options)) - 1]! }
    const found = await exploreTool(tracked).execute(
      { question: 'Where are flags parsed?' },
      { agent: parent, signal: new AbortController().signal, toolCallId: 'call-1' },
    )
    expect(found).toBe('The CLI parses flags in src/cli.ts.')
    const [child] = made
    expect(child?.owner).toBe(parent)
    expect(eventsOf(child!.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'inherit' }])
    expect(systemOf(model.requests[0]!)).toContain(RECOMMENDED_CHILD_SECTION)
  })
})
