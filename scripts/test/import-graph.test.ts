// The repository's import rules (docs/architecture.md), checked over every workspace package read from disk:
// the one-way arrows between tiers, the host's plan-agnosticism, and no import cycle. Type-only imports, decided
// once (the head of import-rules.ts says why): between packages they are arrows like any other; inside a package a
// type-only back-edge is allowed, since it is erased from the build and cannot make a runtime cycle.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { cyclesOf, importGraphProblems, importsOf, TIERS, workspacePackages } from './import-rules.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

describe('the repository', () => {
  it('keeps every rule: the arrows, the plan-agnostic host, no cycle between packages and no runtime cycle inside one', () => {
    expect(importGraphProblems(root)).toEqual([])
  })

  it('has every workspace package in a tier, each layer among the layers and each app above the host side', () => {
    const packages = workspacePackages(root)
    expect(packages.length).toBeGreaterThan(20)
    const tierOf = (name: string): string | undefined => {
      const pkg = packages.find((each) => each.name === name)!
      return TIERS.find((tier) => tier.holds(pkg.name, pkg.folder))?.name
    }
    for (const pkg of packages) expect(tierOf(pkg.name), pkg.name).toBeDefined()
    for (const layer of ['plan-policy', 'plan-commands', 'plan-tool', 'plan-projection', 'plan-guard', 'plan-progress', 'plan-file'])
      expect(tierOf(`@planmode/${layer}`)).toBe('layers')
    expect(tierOf('@planmode/plan-core')).toBe('core')
    expect(tierOf('@planmode/store')).toBe('core')
    expect(tierOf('@planmode/host')).toBe('host side')
    expect(tierOf('@planmode/plan-e2e')).toBe('apps')
    expect(tierOf('@planmode/example-own-host')).toBe('apps')
    // The packages that land with the session-store contract, the preset and the ACP agent have their place already.
    expect(TIERS.find((tier) => tier.holds('@planmode/preset', 'packages/preset'))?.name).toBe('host side')
    expect(TIERS.find((tier) => tier.holds('@planmode/acp', 'packages/acp'))?.name).toBe('host side')
  })

  it("reads each package's source and none of its tests or builds", () => {
    const host = workspacePackages(root).find((pkg) => pkg.name === '@planmode/host')!
    expect(host.files.length).toBeGreaterThan(30)
    expect(host.files.every((file) => file.startsWith('packages/host/src/'))).toBe(true)
  })

  it("the host's agent loop reads top-down: agents-plugin → agent → turn → step → request, tool-batch, transcript", async () => {
    const { readFileSync } = await import('node:fs')
    const imports = (file: string): string[] =>
      importsOf(readFileSync(join(root, `packages/host/src/loop/${file}.ts`), 'utf8'))
        .filter((each) => !each.typeOnly)
        .map((each) => each.specifier)
    expect(imports('agents-plugin')).toContain('./agent.js')
    expect(imports('agent')).toContain('./turn.js')
    expect(imports('turn')).toContain('./step.js')
    for (const below of ['request', 'tool-batch', 'transcript']) expect(imports('step')).toContain(`./${below}.js`)
  })
})

describe('the import reader', () => {
  it('reads every form of import with whether only types come through it, and nothing in a comment or a string', () => {
    const text = [
      "import { a } from './a.js'",
      "import type { B } from '../b.js'",
      "export { c } from './c.js'",
      "export type { D } from './d.js'",
      "import './e.js'",
      "const f = await import('./f.js')",
      "import {\n  g,\n  type G,\n} from './g.js'",
      "import { z } from '@planmode/seams'",
      "type H = typeof import('./h.js')",
      "// import { no } from './comment.js'",
      "const s = `import { no } from './string.js'`",
    ].join('\n')
    expect(importsOf(text)).toEqual([
      { specifier: './a.js', typeOnly: false },
      { specifier: '../b.js', typeOnly: true },
      { specifier: './c.js', typeOnly: false },
      { specifier: './d.js', typeOnly: true },
      { specifier: './e.js', typeOnly: false },
      { specifier: './f.js', typeOnly: false },
      { specifier: './g.js', typeOnly: false },
      { specifier: '@planmode/seams', typeOnly: false },
      { specifier: './h.js', typeOnly: true },
    ])
  })

  it('finds a cycle and a self-import, and none in a tree', () => {
    const cyclic = new Map([
      ['agent.ts', ['turn.ts']],
      ['turn.ts', ['step.ts']],
      ['step.ts', ['turn.ts', 'transcript.ts']],
      ['transcript.ts', []],
      ['self.ts', ['self.ts']],
    ])
    expect(cyclesOf(cyclic)).toEqual(expect.arrayContaining([['step.ts', 'turn.ts'], ['self.ts']]))
    expect(cyclesOf(cyclic)).toHaveLength(2)
    expect(
      cyclesOf(
        new Map([
          ['a.ts', ['b.ts', 'c.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', []],
        ]),
      ),
    ).toEqual([])
  })
})

// A small workspace written to a temporary folder: each test plants one violation in an otherwise clean tree.
const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

type Files = Record<string, string>

const manifest = (name: string, dependencies: readonly string[] = []): string =>
  JSON.stringify({ name, dependencies: Object.fromEntries(dependencies.map((dependency) => [dependency, 'workspace:^'])) })

/** A clean workspace: the base, plan-core and the store, two layers, the host, the cli and an app, each importing what it may. */
const CLEAN: Files = {
  'pnpm-workspace.yaml': 'packages:\n  - packages/*\n  - apps/*\n',
  'packages/context/package.json': manifest('@planmode/context'),
  'packages/context/src/index.ts': 'export const context = 1\n',
  'packages/seams/package.json': manifest('@planmode/seams', ['@planmode/context']),
  'packages/seams/src/index.ts': "import type { context } from '@planmode/context'\nexport type Seam = typeof context\n",
  'packages/plan-core/package.json': manifest('@planmode/plan-core', ['@planmode/seams']),
  'packages/plan-core/src/index.ts': "import type { Seam } from '@planmode/seams'\nexport const core: Seam | undefined = undefined\n",
  'packages/store/package.json': manifest('@planmode/store', ['@planmode/seams']),
  'packages/store/src/index.ts': "export { writer } from './writer.js'\n",
  // A type-only back-edge inside a package: allowed.
  'packages/store/src/writer.ts': "import { commit } from './commit.js'\nexport const writer = { commit }\n",
  'packages/store/src/commit.ts': "import type { writer } from './writer.js'\nexport const commit = (w?: typeof writer) => w\n",
  'packages/plan-tool/package.json': manifest('@planmode/plan-tool', ['@planmode/plan-core']),
  'packages/plan-tool/src/index.ts': "import { core } from '@planmode/plan-core'\nexport const tool = core\n",
  'packages/plan-policy/package.json': manifest('@planmode/plan-policy', ['@planmode/plan-core']),
  'packages/plan-policy/src/index.ts':
    "import { core } from '@planmode/plan-core'\n// import { tool } from '@planmode/plan-tool' (a comment is no import)\nexport const policy = core\n",
  'packages/host/package.json': manifest('@planmode/host', ['@planmode/seams', '@planmode/store']),
  'packages/host/src/index.ts': "import { writer } from '@planmode/store'\nexport const host = writer\n",
  'packages/host/test/host.test.ts': "import { tool } from '@planmode/plan-tool'\nexport const planMode = tool\n",
  'packages/cli/package.json': manifest('@planmode/cli', ['@planmode/host']),
  'packages/cli/src/index.ts': "import { host } from '@planmode/host'\nexport const cli = host\n",
  'apps/demo/package.json': manifest('@planmode/demo', ['@planmode/host', '@planmode/plan-tool']),
  'apps/demo/src/main.ts':
    "import { host } from '@planmode/host'\nimport { tool } from '@planmode/plan-tool'\nexport const demo = [host, tool]\n",
}

function workspace(changes: Files): string {
  const dir = mkdtempSync(join(tmpdir(), 'planmode-import-graph-'))
  made.push(dir)
  for (const [file, text] of Object.entries({ ...CLEAN, ...changes })) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  return dir
}

describe('a planted violation fails the check, naming it', () => {
  it('a clean workspace passes (a type-only back-edge inside a package, a comment, a test importing upwards)', () => {
    expect(importGraphProblems(workspace({}))).toEqual([])
  })

  it('a layer importing another layer', () => {
    const problems = importGraphProblems(
      workspace({ 'packages/plan-policy/src/index.ts': "import { tool } from '@planmode/plan-tool'\nexport const policy = tool\n" }),
    )
    expect(problems).toEqual([
      'packages/plan-policy/src/index.ts: @planmode/plan-policy imports @planmode/plan-tool, against the arrows (two packages of tier layers never import each other)',
    ])
  })

  it('a plan package importing a host package, in its source or its manifest', () => {
    const problems = importGraphProblems(
      workspace({
        'packages/plan-core/src/index.ts': "import { host } from '@planmode/host'\nexport const core = host\n",
        'packages/plan-tool/package.json': manifest('@planmode/plan-tool', ['@planmode/plan-core', '@planmode/cli']),
      }),
    )
    expect(problems).toEqual(
      expect.arrayContaining([
        'packages/plan-core/src/index.ts: @planmode/plan-core imports @planmode/host, against the arrows (host side is above core)',
        'packages/plan-tool/package.json: @planmode/plan-tool imports @planmode/cli, against the arrows (host side is above layers)',
      ]),
    )
  })

  it('a type-only back-edge between packages', () => {
    const problems = importGraphProblems(
      workspace({ 'packages/seams/src/index.ts': "import type { host } from '@planmode/host'\nexport type Seam = typeof host\n" }),
    )
    expect(problems).toContain(
      'packages/seams/src/index.ts: @planmode/seams imports @planmode/host, against the arrows (host side is above base)',
    )
  })

  it('the host importing a plan package, or naming plan mode', () => {
    const problems = importGraphProblems(
      workspace({
        'packages/host/src/index.ts':
          "import { core } from '@planmode/plan-core'\nexport const host = core\nexport const hint = 'planMode'\n",
      }),
    )
    expect(problems).toEqual([
      'packages/host/src/index.ts: @planmode/host imports @planmode/plan-core (the host is plan-agnostic)',
      "packages/host/src/index.ts:1: the host names plan mode (import { core } from '@planmode/plan-core'); it stays plan-agnostic",
      "packages/host/src/index.ts:3: the host names plan mode (export const hint = 'planMode'); it stays plan-agnostic",
    ])
  })

  it('a runtime cycle inside a package, an inline `type` specifier included; a type-only one passes', () => {
    const problems = importGraphProblems(
      workspace({
        'packages/host/src/index.ts': "import { a } from './a.js'\nexport const host = a\n",
        'packages/host/src/a.ts': "import { b } from './b.js'\nexport const a = b\n",
        'packages/host/src/b.ts': "import { type A } from './a.js'\nexport const b = 1\nexport type B = A\n",
      }),
    )
    expect(problems).toEqual(['a runtime import cycle in packages/host: packages/host/src/a.ts ↔ packages/host/src/b.ts'])
  })

  it('a cycle between packages of a tier whose packages may import each other', () => {
    const problems = importGraphProblems(
      workspace({ 'packages/host/src/index.ts': "import { cli } from '@planmode/cli'\nexport const host = cli\n" }),
    )
    expect(problems).toEqual(['an import cycle between packages: @planmode/cli ↔ @planmode/host'])
  })

  it('a package in no tier', () => {
    const problems = importGraphProblems(
      workspace({ 'packages/mystery/package.json': manifest('@planmode/mystery'), 'packages/mystery/src/index.ts': 'export {}\n' }),
    )
    expect(problems).toEqual([
      '@planmode/mystery (packages/mystery) is in no tier: place it in the table of scripts/test/import-rules.ts and docs/architecture.md',
    ])
  })

  it('acp importing the host rather than reaching it through the seams', () => {
    const problems = importGraphProblems(
      workspace({
        'packages/acp/package.json': manifest('@planmode/acp', ['@planmode/host']),
        'packages/acp/src/index.ts': "export { host } from '@planmode/host'\n",
      }),
    )
    expect(problems).toEqual([
      'packages/acp/package.json: @planmode/acp imports @planmode/host (acp reaches a host through the seams only)',
      'packages/acp/src/index.ts: @planmode/acp imports @planmode/host (acp reaches a host through the seams only)',
    ])
  })
})
