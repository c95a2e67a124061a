// The pre-step job's parts, without timing: every row's call does what its label says on the real store
// (each call checks itself and throws otherwise), for both variants; the tree loader resolves @planmode/*
// to another tree as that package would import itself; the block renders every row and replaces itself.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateLog, writeJsonl } from '../src/generator.js'
import type { PrestepResult } from '../src/prestep-job.js'
import { prestepBlock, replacePrestepBlock } from '../src/prestep-report.js'
import { PRESTEP_ROWS, openPrestep, type PrestepVariant } from '../src/prestep-session.js'
import { initialize, resolve } from '../src/tree-hooks.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bench-prestep-'))
  await writeJsonl(join(dir, 'p2000.jsonl'), generateLog({ events: 2_000, seed: 1 }))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the pre-step rows', () => {
  it.each<PrestepVariant>(['core', 'layers'])(
    '%s: each row does what it says, idle rows then mid-turn ones, on the JSONL store',
    async (variant) => {
      const bench = await openPrestep(dir, 2_000, variant)
      if (variant === 'layers') expect(bench.layers).toEqual(['plan-policy', 'plan-progress', 'plan-tool', 'plan-projection'])
      let opened = false
      for (const row of PRESTEP_ROWS) {
        if (!row.idle && !opened) {
          await bench.openTurn()
          opened = true
        }
        // Each call throws when it did not do what the row measures (appended nothing, said something, …).
        for (let i = 0; i < 5; i++) await bench.call(row.id).fn()
        if (opened) await bench.settle()
      }
      await bench.close()
    },
  )
})

describe('the tree loader', () => {
  it('resolves @planmode/* imported from outside the tree as that package imports its own name there; anything else as usual', async () => {
    const calls: { specifier: string; parentURL?: string }[] = []
    const next = async (specifier: string, context: { parentURL?: string }) => void calls.push({ specifier, parentURL: context.parentURL })
    initialize({ tree: '/trees/old' })
    await resolve('@planmode/plan-core', { parentURL: 'file:///work/bench/dist/x.js' }, next)
    await resolve('@planmode/plan-core/invariant', { parentURL: 'file:///work/bench/dist/x.js' }, next)
    await resolve('@planmode/seams', { parentURL: pathToFileURL('/trees/old/packages/plan-core/dist/index.js').href }, next)
    await resolve('mitata', { parentURL: 'file:///work/bench/dist/x.js' }, next)
    expect(calls).toEqual([
      { specifier: '@planmode/plan-core', parentURL: pathToFileURL('/trees/old/packages/plan-core/package.json').href },
      { specifier: '@planmode/plan-core/invariant', parentURL: pathToFileURL('/trees/old/packages/plan-core/package.json').href },
      { specifier: '@planmode/seams', parentURL: pathToFileURL('/trees/old/packages/plan-core/dist/index.js').href },
      { specifier: 'mitata', parentURL: 'file:///work/bench/dist/x.js' },
    ])
    initialize(undefined)
    calls.length = 0
    await resolve('@planmode/plan-core', { parentURL: 'file:///work/bench/dist/x.js' }, next)
    expect(calls).toEqual([{ specifier: '@planmode/plan-core', parentURL: 'file:///work/bench/dist/x.js' }])
  })
})

describe('the block', () => {
  const figures = (scale: number) => ({
    core: { '1000': Object.fromEntries(PRESTEP_ROWS.map((row, i) => [row.id, (i + 1) * 100 * scale])) },
    layers: { '1000': Object.fromEntries(PRESTEP_ROWS.map((row, i) => [row.id, (i + 1) * 110 * scale])) },
  })
  const result: PrestepResult = {
    trees: [
      { name: 'this', commit: 'aaaaaaa' },
      { name: 'part2', dir: '/t', commit: 'bbbbbbb' },
    ],
    sizes: [1000],
    effort: 'full',
    rounds: 3,
    layers: { 'this/layers': ['plan-policy'], 'part2/layers': [] },
    time: { this: figures(1), part2: figures(2) },
    ir: { this: figures(10), part2: figures(10) },
  }

  it('prints every row of both variants in both tables, the ratios, and the targets', () => {
    const block = prestepBlock(result, { cpu: 'cpu', cores: 2, load: '1 → 1' }, '2026-01-01T00:00:00Z')
    for (const row of PRESTEP_ROWS) expect(block.split('\n').filter((line) => line.startsWith(`| ${row.label} |`))).toHaveLength(4)
    expect(block).toContain('| pre-step with nothing to append or say | layers | 6.60 k | 6.60 k | 1.00x |')
    expect(block).toContain('| pre-step with nothing to append or say | layers | 660 ns | 1.32 µs | 2.00x |')
    expect(block).toContain('against 6.60 k in part2: +0% (target: what it cost before part three; met, within 10%)')
  })

  it('replaces its own block and adds a section when there is none', () => {
    const block = prestepBlock(result, { cpu: 'cpu', cores: 2, load: '1' }, 'd')
    const added = replacePrestepBlock('# Results\n\n## Findings\n\ntext\n', block)
    expect(added).toMatch(
      /## Findings\n\ntext\n\n## The pre-step rows: plan calls on the JSONL store, before and after\n\n<!-- prestep:start/,
    )
    const again = replacePrestepBlock(added, prestepBlock({ ...result, rounds: 1 }, { cpu: 'cpu', cores: 2, load: '1' }, 'd'))
    expect(again.match(/prestep:start/g)).toHaveLength(1)
    expect(again).toContain('the median of 1 round,')
  })
})
