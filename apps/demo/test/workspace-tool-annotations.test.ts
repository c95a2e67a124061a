import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planGuardPlugin, planGuardRefusal } from '@planmode/plan-guard'
import type { SessionEvent } from '@planmode/seams'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'
import { MUTATING_TOOLS, READ_ONLY_TOOLS, createWorkspaceTools, workspaceToolsPlugin } from '../src/workspace/workspace-tools.js'

let root: string
beforeEach(() => {
  root = copySampleWorkspace()
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

describe('workspace tool annotations', () => {
  it('declares the reading tools read-only and the writing tools destructive', () => {
    const annotations = Object.fromEntries(createWorkspaceTools(root).map((tool) => [tool.name, tool.annotations]))
    for (const name of READ_ONLY_TOOLS) expect(annotations[name]).toEqual({ readOnlyHint: true })
    for (const name of MUTATING_TOOLS) expect(annotations[name]).toEqual({ readOnlyHint: false, destructiveHint: true })
    expect(Object.keys(annotations).sort()).toEqual([...READ_ONLY_TOOLS, ...MUTATING_TOOLS].sort())
  })

  it('with plan-guard in plan mode, the reads run and the writes are refused (nothing written)', async () => {
    const ctx = new Context()
    const model = createScriptedModel([
      {
        toolCalls: [
          { toolName: 'list_files', input: {} },
          { toolName: 'read_file', input: { path: 'README.md' } },
          { toolName: 'search', input: { query: 'TaskList' } },
          { toolName: 'write_file', input: { path: 'NOTES.md', content: 'hi\n' } },
          { toolName: 'edit_file', input: { path: 'README.md', old_string: 'tiny', new_string: 'small' } },
        ],
      },
      { text: 'Planning instead.' },
    ])
    ctx.plugin(hostPlugin, { model, retryDelayMs: 0 })
    ctx.plugin(planCorePlugin)
    ctx.plugin(planGuardPlugin)
    ctx.plugin(workspaceToolsPlugin, { root })
    const agent = ctx.require('agents').create({ session: await ctx.require('sessions').create() })
    await ctx.require('planMode').set(agent, true)
    await agent.prompt('look around, then write notes')
    const results = agent.session.events
      .filter((event): event is SessionEvent<'tool/result'> => event.type === 'tool/result')
      .map((event) => [event.data.toolName, event.data.isError, event.data.isError ? event.data.content[0]!.text : ''])
    expect(results).toEqual([
      ['list_files', false, ''],
      ['read_file', false, ''],
      ['search', false, ''],
      ['write_file', true, `Error: ${planGuardRefusal('write_file')}`],
      ['edit_file', true, `Error: ${planGuardRefusal('edit_file')}`],
    ])
    expect(existsSync(join(root, 'NOTES.md'))).toBe(false)
    ctx.dispose()
  })
})
