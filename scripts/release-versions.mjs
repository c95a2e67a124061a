// What the release tooling knows about versions: the public packages of the
// workspace, the last release of each that changed its API (read from the
// CHANGELOG.md that `changeset version` writes), and the floor of a range.
// Used by scripts/peer-floors.mjs and scripts/test/release.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import semver from 'semver'

export const root = resolve(import.meta.dirname, '..')

/** Every public package under packages/: `{ name, dir, file, manifest }`. */
export function publicPackages() {
  return readdirSync(join(root, 'packages'))
    .map((name) => ({ dir: join(root, 'packages', name), file: join(root, 'packages', name, 'package.json') }))
    .filter(({ file }) => existsSync(file))
    .map((p) => ({ ...p, manifest: JSON.parse(readFileSync(p.file, 'utf8')) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map((p) => ({ ...p, name: p.manifest.name }))
}

/**
 * The releases a changesets CHANGELOG.md lists, newest first:
 * `{ version, api }`, where `api` says the release changed the package's
 * API (it has "Major Changes" or "Minor Changes": in 0.x a minor is the
 * bump for new or changed API, a patch for fixes only).
 */
export function releasesOf(changelog) {
  const releases = []
  const sections = changelog.split(/^## /m).slice(1)
  for (const section of sections) {
    const version = section.slice(0, section.indexOf('\n')).trim()
    if (semver.valid(version) === null) continue
    releases.push({ version, api: /^### (Major|Minor) Changes$/m.test(section) })
  }
  return releases
}

/** The package's version at its last release that changed its API, or undefined when its CHANGELOG lists none. */
export function lastApiRelease(dir) {
  const file = join(dir, 'CHANGELOG.md')
  if (!existsSync(file)) return undefined
  return releasesOf(readFileSync(file, 'utf8')).find((release) => release.api)?.version
}

/** The lowest version a range (with or without `workspace:`) admits. */
export function floorOf(range) {
  const plain = range.replace(/^workspace:/, '')
  if (plain === '^' || plain === '~' || plain === '*') return undefined
  return semver.minVersion(plain)?.version
}

/**
 * Every `@planmode/*` peer range of `packages` whose floor is below what
 * the peer's API needs (`needed(peer)`: its version at its last release that
 * changed its API, else its current version) or that does not admit the
 * peer's current version: `{ name, file, peer, range, needed, current }`.
 */
export function peerFloorProblems(packages, needed = (p) => lastApiRelease(p.dir) ?? p.manifest.version) {
  const byName = new Map(packages.map((p) => [p.name, p]))
  const problems = []
  for (const { name, file, manifest } of packages) {
    for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) {
      const target = byName.get(peer)
      if (target === undefined) continue
      const floor = floorOf(range)
      const want = needed(target)
      const current = target.manifest.version
      const admitsCurrent = semver.satisfies(current, range.replace(/^workspace:/, ''))
      if (floor === undefined || semver.lt(floor, want) || !admitsCurrent) problems.push({ name, file, peer, range, needed: want, current })
    }
  }
  return problems
}
