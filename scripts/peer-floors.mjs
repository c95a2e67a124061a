// Run by `pnpm release:version` after `changeset version`: raises the floor
// of every `@planmode/*` peer range to that peer's version at its last
// release that changed its API (its CHANGELOG.md), so a range never admits a
// version older than the API a layer's imports need. The ceiling stays
// `<1.0.0` (see CONTRIBUTING.md, "Releases").
//   node scripts/peer-floors.mjs          rewrite the manifests
//   node scripts/peer-floors.mjs --check  exit 1 when one would change
import { readFileSync, writeFileSync } from 'node:fs'
import { peerFloorProblems, publicPackages } from './release-versions.mjs'

const check = process.argv.includes('--check')
const packages = publicPackages()
const problems = peerFloorProblems(packages)
for (const { name, peer, range, needed } of problems) console.log(`${name}: peer ${peer} ${range} → workspace:>=${needed} <1.0.0`)
if (check) {
  if (problems.length > 0) {
    console.error('peer-floors: these peer ranges admit versions older than the API they use; run `node scripts/peer-floors.mjs`')
    process.exit(1)
  }
} else {
  for (const { file } of packages) {
    const mine = problems.filter((problem) => problem.file === file)
    if (mine.length === 0) continue
    const manifest = JSON.parse(readFileSync(file, 'utf8'))
    for (const { peer, needed } of mine) manifest.peerDependencies[peer] = `workspace:>=${needed} <1.0.0`
    writeFileSync(file, JSON.stringify(manifest, null, 2) + '\n')
  }
}
