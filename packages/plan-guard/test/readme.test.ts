import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planGuardPlugin } from '@planmode/plan-guard'
import { expect, it } from 'vitest'
import { eventsOf, readmeMirror } from '@planmode/testkit'

it('runs the README composition example, which is the code below', async () => {
  const mirror = readmeMirror(new URL('../README.md', import.meta.url), new URL(import.meta.url))
  expect(mirror.block).toEqual(mirror.mirrored)
  expect(mirror.missingImports).toEqual([])

  const example = async () => {
    // readme:start
    const root = new Context()
    root.plugin(hostPlugin, {
      model: createScriptedModel([
        { toolCalls: [{ toolName: 'write_file', input: { path: 'hello.txt', text: 'hi' } }] },
        { text: 'I will plan the file instead.' },
      ]),
    })
    root.plugin(planCorePlugin) // first: the layers require `planMode`
    root.plugin(planGuardPlugin, { allow: ['run_tests'] })

    const files = new Map<string, string>()
    const tools = root.require('tools')
    tools.register<{ path: string }, string>({
      name: 'read_file',
      description: 'Reads a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      annotations: { readOnlyHint: true },
      execute: ({ path }) => files.get(path) ?? '',
    })
    tools.register<{ path: string; text: string }, string>({
      name: 'write_file',
      description: 'Creates or overwrites a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
      annotations: { readOnlyHint: false, destructiveHint: true },
      execute: ({ path, text }) => {
        files.set(path, text)
        return `wrote ${path}`
      },
    })

    const session = await root.require('sessions').create()
    const agent = root.require('agents').create({ session })
    await root.require('planMode').set(agent, true)
    await agent.prompt('Add a hello file.')
    // files is still empty; the model read:
    // Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: …
    // readme:end
    return { files, session }
  }
  const { files, session } = await example()
  expect(files.size).toBe(0)
  expect(eventsOf(session, 'tool/result')[0]!.data.content[0]!.text).toMatch(
    /^Error: write_file is not available in plan mode\. Plan mode is read-only until the user approves a plan: /,
  )
})
