// docs/architecture.md against the repository: its package table against the folders of packages/, each
// package's tier against the import rule's table, and "install with" against each manifest's peers.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { TIERS, workspacePackages } from './import-rules.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const page = readFileSync(join(root, 'docs/architecture.md'), 'utf8')

interface Row {
  readonly name: string
  readonly folder: string
  readonly tier: string
  readonly installWith: string
}

/** The rows of the page's package table: `| [`@planmode/x`](../packages/x) | tier | what | install with |`. */
const rows: Row[] = [
  ...page.matchAll(/^\| \[`(@planmode\/[\w-]+)`\]\(\.\.\/(packages\/[\w-]+)\) \| ([^|]+) \| [^|]+ \| ([^|]+) \|$/gm),
].map((match) => ({
  name: match[1]!,
  folder: match[2]!,
  tier: match[3]!.trim(),
  installWith: match[4]!.trim(),
}))

interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

describe('docs/architecture.md', () => {
  it('has one row per folder of packages/, with the name its manifest has', () => {
    const folders = readdirSync(join(root, 'packages'))
      .filter((name) => !name.startsWith('.'))
      .map((name) => `packages/${name}`)
    expect(rows.map((row) => row.folder).sort(), 'a folder of packages/ without a row, or a row without a folder').toEqual(folders.sort())
    for (const row of rows)
      expect(row.name, row.folder).toBe((JSON.parse(readFileSync(join(root, row.folder, 'package.json'), 'utf8')) as Manifest).name)
  })

  it("puts each package in the tier the import rule's table gives it", () => {
    const packages = workspacePackages(root)
    for (const row of rows) {
      const pkg = packages.find((each) => each.folder === row.folder)!
      expect(row.tier, row.name).toBe(TIERS.find((tier) => tier.holds(pkg.name, pkg.folder))?.name)
    }
  })

  it('says what each package is installed with: its required peer dependencies ((nothing), or private)', () => {
    for (const row of rows) {
      const manifest = JSON.parse(readFileSync(join(root, row.folder, 'package.json'), 'utf8')) as Manifest
      if (manifest.private === true) {
        expect(row.installWith, row.name).toBe('private')
        continue
      }
      const peers = Object.keys(manifest.peerDependencies ?? {})
        .filter((peer) => manifest.peerDependenciesMeta?.[peer]?.optional !== true)
        .map((peer) => peer.replace(/^@planmode\//, ''))
      const said = row.installWith === '(nothing)' ? [] : row.installWith.split(',').map((word) => word.trim())
      expect(said.sort(), row.name).toEqual(peers.sort())
    }
  })

  it('states the decision on type-only imports, as the import rule makes it, and the root README links the page', () => {
    expect(page).toContain('Type-only imports, decided once.')
    expect(readFileSync(join(root, 'scripts/test/import-rules.ts'), 'utf8')).toContain('Type-only imports')
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('](docs/architecture.md)')
  })
})
