import { readFileSync } from 'node:fs'
import { Context, type Plugin } from '@planmode/context'
import { expect, it, vi } from 'vitest'
import { memorySessions, type MemoryDisk } from './memory-store.js'
import { firstSession } from './readme-example.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

it('shows test/readme-example.ts whole, and the example runs on a third store', async () => {
  const block = /<!-- file: test\/readme-example\.ts -->\n```ts\n([\s\S]*?)```\n/.exec(readme)?.[1]
  expect(block).toBe(readFileSync(new URL('./readme-example.ts', import.meta.url), 'utf8'))
  const disk: MemoryDisk = { logs: new Map(), held: new Set() }
  const memory: Plugin<void> = { name: 'memory-store', apply: (ctx: Context) => ctx.provide('sessions', memorySessions(ctx, disk)) }
  const log = vi.spyOn(console, 'log').mockImplementation(() => {})
  try {
    expect(await firstSession(memory)).toBe(1)
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/ #0 user\/message$/))
  } finally {
    log.mockRestore()
  }
  expect([...disk.logs.values()][0]!.map((event) => event.type)).toEqual(['user/message'])
  expect(disk.held.size).toBe(0)
})

it('says how long the third store of test/memory-store.ts is, as it is', () => {
  const lines = readFileSync(new URL('./memory-store.ts', import.meta.url), 'utf8')
    .trimEnd()
    .split('\n').length
  expect(readme).toContain(`(logs in memory, about ${Math.round(lines / 10) * 10} lines)`)
})
