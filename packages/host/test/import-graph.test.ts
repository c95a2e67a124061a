// The host's source reads top-down: no file imports, even for a type, a file that imports it back.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const src = fileURLToPath(new URL('../src/', import.meta.url))

/** Every `.ts` file under `dir`, as paths relative to `dir`. */
function sourceFiles(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((entry) => {
    const path = join(under, entry.name)
    if (entry.isDirectory()) return sourceFiles(dir, path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/**
 * The relative imports of a TypeScript source — `import … from`, `import type … from`, `export … from`,
 * side-effect `import '…'` and `import('…')` — as the files they name (`./x.js` is `./x.ts`).
 */
export function relativeImports(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?\sfrom\s+['"](\.[^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s+['"](\.[^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ].map((match) => match[1]!)
  return specifiers.map((specifier) => join(dirname(file), specifier.replace(/\.js$/, '.ts')))
}

/** The cycles of a directed graph (one per strongly connected component with more than one node, or a self-loop), each sorted. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm.
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (node: string): void => {
    indices.set(node, index)
    low.set(node, index)
    index += 1
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!))
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node)
  return cycles
}

/** The import graph of the source files under `dir`: file → the files it imports (relative paths). */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(join(dir, file), 'utf8')
    graph.set(file, relativeImports(file, text).map((target) => relative(dir, resolve(dir, target))))
  }
  return graph
}

describe('the import checker', () => {
  it('reads every form of relative import, and no package import', () => {
    const text = [
      "import { a } from './a.js'",
      "import type { B } from '../b.js'",
      "export { c } from './c.js'",
      "export type { D } from './d.js'",
      "import './e.js'",
      "const f = await import('./f.js')",
      "import {\n  g,\n  h,\n} from './g.js'",
      "import { z } from '@planmode/seams'",
    ].join('\n')
    expect(relativeImports('loop/x.ts', text)).toEqual(['loop/a.ts', 'b.ts', 'loop/c.ts', 'loop/d.ts', 'loop/g.ts', 'loop/e.ts', 'loop/f.ts'])
  })

  it('finds a cycle through type imports as through value imports, a self-import too, and none in a tree', () => {
    const cyclic = new Map([
      ['agent.ts', ['turn.ts']],
      ['turn.ts', ['step.ts']],
      ['step.ts', ['turn.ts', 'transcript.ts']],
      ['transcript.ts', []],
      ['self.ts', ['self.ts']],
    ])
    expect(cyclesOf(cyclic)).toEqual(expect.arrayContaining([['step.ts', 'turn.ts'], ['self.ts']]))
    expect(cyclesOf(cyclic)).toHaveLength(2)
    expect(cyclesOf(new Map([['a.ts', ['b.ts', 'c.ts']], ['b.ts', ['c.ts']], ['c.ts', []]]))).toEqual([])
  })
})

describe('packages/host/src', () => {
  const graph = importGraph(src)

  it('has no import cycle', () => {
    expect(graph.size).toBeGreaterThan(30)
    expect(cyclesOf(graph)).toEqual([])
  })

  it('its agent loop reads top-down: agents-plugin → agent → turn → step → request, tool-batch, transcript', () => {
    const imports = (file: string) => graph.get(`loop/${file}.ts`)
    expect(imports('agents-plugin')).toContain('loop/agent.ts')
    expect(imports('agent')).toContain('loop/turn.ts')
    expect(imports('turn')).toContain('loop/step.ts')
    for (const below of ['request', 'tool-batch', 'transcript']) expect(imports('step')).toContain(`loop/${below}.ts`)
  })
})
