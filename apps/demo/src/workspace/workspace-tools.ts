import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Plugin } from '@planmode/context'
import type { ToolAnnotations, ToolDefinition, ToolPresentation } from '@planmode/seams'
import { createExploreTool } from './explore-tool.js'
import { resolveInWorkspace, workspaceRelative } from './workspace-path.js'

/** Names of the workspace tools that never change a file. */
export const READ_ONLY_TOOLS = ['list_files', 'read_file', 'search'] as const

/** Names of the workspace tools that write. */
export const MUTATING_TOOLS = ['write_file', 'edit_file'] as const

const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist'])
const MAX_LIST = 300
const MAX_READ_BYTES = 64 * 1024
const MAX_MATCHES = 100

function walk(root: string, dir: string, out: string[]): void {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
  for (const entry of entries) {
    if (out.length >= MAX_LIST) return
    const full = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (SKIPPED_DIRS.has(entry.name)) continue
      out.push(`${workspaceRelative(root, full)}/`)
      walk(root, full, out)
    } else if (entry.isFile()) {
      out.push(workspaceRelative(root, full))
    }
  }
}

function listFiles(root: string, path: string): string[] {
  const dir = resolveInWorkspace(root, path)
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`"${path}" is not a directory`)
  const out: string[] = []
  walk(root, dir, out)
  return out
}

function readText(root: string, path: string): string {
  const file = resolveInWorkspace(root, path)
  const stat = statSync(file, { throwIfNoEntry: false })
  if (stat === undefined) throw new Error(`"${path}" does not exist`)
  if (!stat.isFile()) throw new Error(`"${path}" is not a file`)
  if (stat.size > MAX_READ_BYTES) throw new Error(`"${path}" is larger than ${MAX_READ_BYTES} bytes`)
  return readFileSync(file, 'utf8')
}

/** What the reading tools declare: they change nothing (plan-guard lets them run in plan mode). */
const READS: ToolAnnotations = { readOnlyHint: true }

/** What the writing tools declare: they change files and may overwrite what is there. */
const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: true }

function present(title: string, kind: ToolPresentation['kind'], text?: string): ToolPresentation {
  return { card: 'generic', title, kind, content: text === undefined ? [] : [{ type: 'text', text }] }
}

/**
 * The five workspace tools, confined to `root`: a path outside it is a tool
 * error. The reading tools are annotated `readOnlyHint: true`; the writing
 * ones `readOnlyHint: false, destructiveHint: true` (an edit replaces text, a
 * write may overwrite a file).
 */
export function createWorkspaceTools(root: string): ToolDefinition<never, unknown>[] {
  const listTool: ToolDefinition<{ path?: string }, string[]> = {
    name: 'list_files',
    annotations: READS,
    description: 'List the files under a directory of the workspace, recursively (read-only).',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Directory relative to the workspace root; defaults to `.`.' } },
      additionalProperties: false,
    },
    execute: (input) => listFiles(root, input.path ?? '.'),
    toModelOutput: (files) => (files.length === 0 ? '(empty directory)' : files.join('\n')),
    presentCall: (input) => present(`list_files ${input.path ?? '.'}`, 'read'),
  }

  const readTool: ToolDefinition<{ path: string }, string> = {
    name: 'read_file',
    annotations: READS,
    description: 'Read a text file of the workspace (read-only).',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'File path relative to the workspace root.' } },
      required: ['path'],
      additionalProperties: false,
    },
    execute: (input) => readText(root, input.path),
    toModelOutput: (text) => text,
    presentCall: (input) => present(`read_file ${input.path}`, 'read'),
  }

  const searchTool: ToolDefinition<{ query: string; path?: string }, string[]> = {
    name: 'search',
    annotations: READS,
    description: 'Search the workspace files for a literal text, case-insensitively (read-only). Returns `file:line: text` lines.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'The text to look for.' },
        path: { type: 'string', description: 'Directory to search, relative to the workspace root; defaults to `.`.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    execute: (input) => {
      const query = input.query.toLowerCase()
      if (query.trim() === '') throw new Error('search needs a non-empty query')
      const matches: string[] = []
      for (const file of listFiles(root, input.path ?? '.')) {
        if (file.endsWith('/')) continue
        let text: string
        try {
          text = readText(root, file)
        } catch {
          continue
        }
        if (text.includes('\u0000')) continue
        const lines = text.split('\n')
        for (let i = 0; i < lines.length && matches.length < MAX_MATCHES; i++) {
          if (lines[i]!.toLowerCase().includes(query)) matches.push(`${file}:${i + 1}: ${lines[i]!.trim()}`)
        }
      }
      return matches
    },
    toModelOutput: (matches) => (matches.length === 0 ? 'No matches.' : matches.join('\n')),
    presentCall: (input) => present(`search "${input.query}"`, 'read'),
  }

  const writeTool: ToolDefinition<{ path: string; content: string }, string> = {
    name: 'write_file',
    annotations: WRITES,
    description: 'Create or overwrite a file of the workspace with the given content.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.' },
        content: { type: 'string', description: 'The whole new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    execute: (input) => {
      const file = resolveInWorkspace(root, input.path)
      if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`"${input.path}" is a directory`)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, input.content)
      return `Wrote ${Buffer.byteLength(input.content)} bytes to ${workspaceRelative(root, file)}.`
    },
    toModelOutput: (text) => text,
    presentCall: (input) => present(`write_file ${input.path}`, 'edit', input.content),
  }

  const editTool: ToolDefinition<{ path: string; old_string: string; new_string: string }, string> = {
    name: 'edit_file',
    annotations: WRITES,
    description:
      'Replace one exact occurrence of `old_string` with `new_string` in a workspace file. Fails when the text is missing or not unique.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.' },
        old_string: { type: 'string', description: 'The exact text to replace; it must occur exactly once.' },
        new_string: { type: 'string', description: 'The replacement text.' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    execute: (input) => {
      const text = readText(root, input.path)
      if (input.old_string === '') throw new Error('old_string must not be empty')
      const first = text.indexOf(input.old_string)
      if (first < 0) throw new Error(`old_string was not found in "${input.path}"`)
      if (text.indexOf(input.old_string, first + 1) >= 0) throw new Error(`old_string occurs more than once in "${input.path}"`)
      const next = text.slice(0, first) + input.new_string + text.slice(first + input.old_string.length)
      writeFileSync(resolveInWorkspace(root, input.path), next)
      return `Edited ${input.path}.`
    },
    toModelOutput: (text) => text,
    presentCall: (input) => present(`edit_file ${input.path}`, 'edit'),
  }

  return [listTool, readTool, searchTool, writeTool, editTool] as unknown as ToolDefinition<never, unknown>[]
}

/** Config of {@link workspaceToolsPlugin}. */
export interface WorkspaceToolsConfig {
  /** The workspace root every path is confined to. */
  readonly root: string
}

/**
 * Registers the five workspace tools whenever a `tools` registry is
 * composed, and `explore` (a read-only helper agent, see
 * {@link createExploreTool}) whenever the host's `agents` and `sessions` are
 * composed too.
 */
export const workspaceToolsPlugin: Plugin<WorkspaceToolsConfig> = {
  name: '@planmode/demo/workspace-tools',
  apply(ctx, config) {
    const tools = createWorkspaceTools(config.root)
    ctx.inject(['tools'], (child) => {
      const registry = child.require('tools')
      for (const tool of tools) child.effect(registry.register(tool))
    })
    ctx.inject(['tools', 'agents', 'sessions'], (child) => {
      child.effect(child.require('tools').register(createExploreTool(child)))
    })
  },
}
