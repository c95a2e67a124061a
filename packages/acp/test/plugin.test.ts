import { acpPlugin, resolveAcpConfig } from '@planmode/acp'
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { describe, expect, it } from 'vitest'
import { connectTestClient } from './support/test-client.js'

const agents = { open: () => Promise.reject(new Error('unused')) }

describe('acpPlugin composes like a layer', () => {
  it('requires planMode: loading it without one throws naming it', () => {
    const ctx = new Context()
    expect(() => ctx.plugin(acpPlugin, { agents })).toThrow(/planMode/)
  })

  it('follows plan-core: its connections close when planMode goes away, and the service comes back with it', async () => {
    const ctx = new Context()
    const core = ctx.plugin(planCorePlugin)
    ctx.plugin(acpPlugin, { agents })
    const { client, closed } = connectTestClient(ctx.require('acp'))
    await client.initialize()
    expect(ctx.require('acp').connections).toBe(1)
    core.dispose()
    await closed
    expect(ctx.get('acp')).toBeUndefined()
    ctx.plugin(planCorePlugin)
    expect(ctx.get('acp')?.connections).toBe(0)
    ctx.dispose()
  })

  it('without a session store, session/new is an error that says what to compose', async () => {
    const ctx = new Context()
    ctx.plugin(planCorePlugin)
    ctx.plugin(acpPlugin, { agents })
    const { client } = connectTestClient(ctx.require('acp'))
    await client.initialize()
    await expect(client.agent.request('session/new', { cwd: '/work', mcpServers: [] })).rejects.toMatchObject({
      data: { details: expect.stringContaining('no session store') },
    })
    ctx.dispose()
  })

  it('checks its config at load', () => {
    expect(() => resolveAcpConfig(undefined)).toThrow('needs a config object with `agents`')
    expect(() => resolveAcpConfig({})).toThrow('needs `agents` with an `open(session, options)` function')
    expect(() => resolveAcpConfig({ agents, port: 1 })).toThrow('unknown key(s) port')
    expect(() => resolveAcpConfig({ agents, cwd: 'relative' })).toThrow('`cwd` must be an absolute path')
    expect(() => resolveAcpConfig({ agents, pageSize: 0 })).toThrow('`pageSize` must be a positive integer')
    expect(() => resolveAcpConfig({ agents, sessions: { create() {} } })).toThrow('`sessions` lacks open, list, get, close')
    expect(() => resolveAcpConfig({ agents, agentInfo: { name: ' ' } })).toThrow('`agentInfo.name` must be a non-empty string')
    expect(resolveAcpConfig({ agents, cwd: '/work', pageSize: 10 })).toEqual({ agents, cwd: '/work', pageSize: 10 })
  })
})
