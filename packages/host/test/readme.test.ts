import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'

it('runs the README composition example', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'planmode-readme-'))
  try {
    const root = new Context()
    root.plugin(hostPlugin, {
      dir,
      model: createScriptedModel([{ text: 'Hello!' }]),
    })
    root.require('systemPrompt').section({ name: 'base', order: 0, text: 'You are a careful coding agent.' })
    root.require('tools').register<{ path: string }, string>({
      name: 'read_file',
      description: 'Reads a file of the workspace.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      execute: async ({ path }) => `contents of ${path}`,
    })
    const session = await root.require('sessions').create()
    const agent = root.require('agents').create({ session })
    const outcome = await agent.prompt('Say hello.')
    expect(outcome).toEqual({ turn: 1, reason: 'completed', steps: 1 })
    root.dispose()
    expect(root.get('sessions')).toBeUndefined()
    expect(agent.disposed).toBe(true)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
