import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error -- plain ESM scripts without declarations
import { floorOf, lastApiRelease, peerFloorProblems, publicPackages, releasesOf, root } from '../release-versions.mjs'

interface Pkg {
  name: string
  dir: string
  file: string
  manifest: { version: string; peerDependencies?: Record<string, string>; dependencies?: Record<string, string> }
}

const packages = publicPackages() as Pkg[]

const CHANGELOG = `# @planmode/example

## 0.3.1

### Patch Changes

- abc1234: a fix
- Updated dependencies

## 0.3.0

### Minor Changes

- def5678: new API

## 0.2.0

### Major Changes

- 0123456: removed API
`

describe('the release tooling reads what changesets writes', () => {
  it('lists releases newest first and says which changed the API', () => {
    expect(releasesOf(CHANGELOG)).toEqual([
      { version: '0.3.1', api: false },
      { version: '0.3.0', api: true },
      { version: '0.2.0', api: true },
    ])
  })

  it('reads the floor of the ranges our manifests use', () => {
    expect(floorOf('workspace:>=0.4.0 <1.0.0')).toBe('0.4.0')
    expect(floorOf('>=0.1.0 <1.0.0')).toBe('0.1.0')
    expect(floorOf('^0.2.3')).toBe('0.2.3')
    expect(floorOf('workspace:^')).toBeUndefined()
  })

  it('names a peer range that admits a version older than the API it uses', () => {
    const core = { name: '@x/core', dir: '', file: 'core', manifest: { version: '0.3.1' } }
    const layer = {
      name: '@x/layer',
      dir: '',
      file: 'layer',
      manifest: { version: '0.1.0', peerDependencies: { '@x/core': 'workspace:>=0.1.0 <1.0.0', other: '^1.0.0' } },
    }
    expect(peerFloorProblems([core, layer], () => '0.3.0')).toEqual([
      { name: '@x/layer', file: 'layer', peer: '@x/core', range: 'workspace:>=0.1.0 <1.0.0', needed: '0.3.0', current: '0.3.1' },
    ])
    const raised = { ...layer, manifest: { ...layer.manifest, peerDependencies: { '@x/core': 'workspace:>=0.3.0 <1.0.0' } } }
    expect(peerFloorProblems([core, raised], () => '0.3.0')).toEqual([])
    // A range that no longer admits the peer's current version is as wrong.
    const stale = { ...layer, manifest: { ...layer.manifest, peerDependencies: { '@x/core': 'workspace:>=0.3.0 <0.3.1' } } }
    expect(peerFloorProblems([core, stale], () => '0.3.0')).toHaveLength(1)
  })
})

describe('the released packages', () => {
  it.each(packages.map((p) => [p.name, p] as const))('%s was cut by changesets: its CHANGELOG.md starts with its version', (_name, pkg) => {
    const file = join(pkg.dir, 'CHANGELOG.md')
    if (pkg.manifest.version === '0.0.0') {
      // A package new since the last cut: no release yet, and a pending changeset that the next cut versions it by.
      expect(existsSync(file), `${file}: a package at 0.0.0 has not been released, so it has no CHANGELOG.md yet`).toBe(false)
      const pending = readdirSync(join(root, '.changeset')).filter((name) => name.endsWith('.md') && name !== 'README.md')
      const named = pending.filter((name) =>
        new RegExp(`^['"]${pkg.name}['"]:`, 'm').test(readFileSync(join(root, '.changeset', name), 'utf8')),
      )
      expect(named, `${pkg.name} is at 0.0.0: a pending changeset must name it`).not.toEqual([])
      return
    }
    expect(existsSync(file), `${file} (run \`pnpm release:version\`)`).toBe(true)
    const releases = releasesOf(readFileSync(file, 'utf8')) as { version: string }[]
    expect(releases[0]?.version).toBe(pkg.manifest.version)
    expect(pkg.manifest.version).not.toBe('0.0.0')
  })

  it('no @planmode peer range admits a version older than that peer at its last release that changed its API', () => {
    const problems = peerFloorProblems(packages) as { name: string; peer: string; range: string; needed: string }[]
    expect(problems.map((p) => `${p.name}: peer ${p.peer} ${p.range} needs >=${p.needed}`)).toEqual([])
    // Not vacuous: every layer peer-depends on something, and every peer has released API.
    const peers = packages.flatMap((p) => Object.keys(p.manifest.peerDependencies ?? {}).filter((peer) => peer.startsWith('@planmode/')))
    expect(peers.length).toBeGreaterThan(10)
    for (const peer of new Set(peers)) {
      const target = packages.find((p) => p.name === peer)!
      // A package new since the last cut (0.0.0) has no release yet: its dependents' floor is 0.0.0 until the cut raises it.
      if (target.manifest.version !== '0.0.0') expect(lastApiRelease(target.dir), peer).toBeDefined()
    }
  })

  it('a regular @planmode dependency is published at the version it was built with (workspace:^)', () => {
    for (const pkg of packages) {
      for (const [dependency, range] of Object.entries(pkg.manifest.dependencies ?? {})) {
        if (dependency.startsWith('@planmode/')) expect(range, `${pkg.name} → ${dependency}`).toBe('workspace:^')
      }
    }
  })

  it('every pending changeset names workspace packages, and never a published one beside a private one (changesets refuses to version such a set)', () => {
    const manifests = ['packages', 'apps', 'examples']
      .flatMap((folder) => readdirSync(join(root, folder)).map((name) => join(root, folder, name, 'package.json')))
      .concat(join(root, 'bench', 'package.json'))
      .filter((file) => existsSync(file))
      .map((file) => JSON.parse(readFileSync(file, 'utf8')) as { name: string; private?: boolean })
    const isPrivate = new Map(manifests.map((manifest) => [manifest.name, manifest.private === true]))
    const pending = readdirSync(join(root, '.changeset')).filter((name) => name.endsWith('.md') && name !== 'README.md')
    const problems: string[] = []
    for (const name of pending) {
      const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(root, '.changeset', name), 'utf8'))?.[1] ?? ''
      const named = [...front.matchAll(/^['"]([^'"]+)['"]:\s*(major|minor|patch)\s*$/gm)].map((match) => match[1]!)
      if (named.length === 0) problems.push(`${name}: names no package`)
      for (const pkg of named) if (!isPrivate.has(pkg)) problems.push(`${name}: ${pkg} is not a workspace package`)
      const kinds = new Set(named.filter((pkg) => isPrivate.has(pkg)).map((pkg) => isPrivate.get(pkg)))
      if (kinds.size > 1) problems.push(`${name}: names a published and a private package together`)
    }
    expect(problems).toEqual([])
  })

  it('pnpm release builds, runs the whole test and publishes with changesets; CI packs the versioned tarballs', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
    expect(scripts.release).toBe('pnpm test && changeset publish')
    expect(scripts.test).toMatch(/^pnpm build && /)
    expect(scripts['release:version']).toBe('changeset version && node scripts/peer-floors.mjs && pnpm install --no-frozen-lockfile')
    expect(scripts['pack:check']).toBeDefined()
  })
})
