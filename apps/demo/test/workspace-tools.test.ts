import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { copySampleWorkspace } from '../src/workspace/sample-workspace.js'
import { createWorkspaceTools } from '../src/workspace/workspace-tools.js'

let root: string
let tools: ReturnType<typeof createWorkspaceTools>
const execution = { signal: new AbortController().signal, toolCallId: 't1' }

async function run(name: string, input: unknown): Promise<unknown> {
  const tool = tools.find((candidate) => candidate.name === name)!
  return (tool.execute as (input: unknown, execution: unknown) => unknown)(input, execution)
}

beforeEach(() => {
  root = copySampleWorkspace()
  tools = createWorkspaceTools(root)
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

describe('workspace tools', () => {
  it('lists the sample project', async () => {
    const files = (await run('list_files', {})) as string[]
    expect(files).toContain('src/tasks.js')
    expect(files).toContain('README.md')
  })

  it('reads, searches, writes and edits inside the workspace', async () => {
    expect(await run('read_file', { path: 'src/format.js' })).toContain('formatTask')
    expect(await run('search', { query: 'TASKLIST' })).toContain('src/tasks.js:3: export class TaskList {')
    await run('write_file', { path: 'docs/notes.md', content: 'hi\n' })
    expect(readFileSync(join(root, 'docs/notes.md'), 'utf8')).toBe('hi\n')
    await run('edit_file', { path: 'docs/notes.md', old_string: 'hi', new_string: 'hello' })
    expect(readFileSync(join(root, 'docs/notes.md'), 'utf8')).toBe('hello\n')
  })

  it('refuses an edit whose text is missing or not unique', async () => {
    await expect(run('edit_file', { path: 'src/format.js', old_string: 'nope', new_string: 'x' })).rejects.toThrow(/not found/)
    await expect(run('edit_file', { path: 'src/format.js', old_string: 'task', new_string: 'x' })).rejects.toThrow(/more than once/)
  })

  it('refuses every path outside the workspace, symlinks included', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'planmode-outside-'))
    symlinkSync(outside, join(root, 'escape'))
    for (const [name, input] of [
      ['read_file', { path: '../secret.txt' }],
      ['read_file', { path: '/etc/passwd' }],
      ['list_files', { path: '..' }],
      ['search', { query: 'x', path: '../..' }],
      ['write_file', { path: '../evil.txt', content: 'x' }],
      ['write_file', { path: 'escape/evil.txt', content: 'x' }],
      ['edit_file', { path: '../../x', old_string: 'a', new_string: 'b' }],
    ] as const) {
      await expect(run(name, input), `${name} ${JSON.stringify(input)}`).rejects.toThrow(/is outside the workspace/)
    }
    expect(existsSync(join(outside, 'evil.txt'))).toBe(false)
    rmSync(outside, { recursive: true, force: true })
  })
})
