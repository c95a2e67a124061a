// Packs every public package of the workspace into one folder, as `pnpm publish` would pack it (every
// `workspace:` range replaced by a plain one), and prints the `npm install` line that installs them all
// into a project of yours: the way to use the packages from a clone before they are on the registry.
//   pnpm pack:local                   builds, then packs into .pack-local/ (emptied first)
//   node scripts/pack-local.mjs DIR   packs into DIR (needs `pnpm build` first)
// The packages are found in packages/*, not listed: a new public package is packed once it exists.
// scripts/pack-check.mjs packs with the same functions and installs the same line.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { publicPackages, root } from './release-versions.mjs'

/** The `ai` majors the AI SDK adapter supports, newest first, with the Node major each needs. */
const AI_MAJORS = [
  { major: 7, node: 22 },
  { major: 6, node: 20 },
]

/** The `ai` major for a Node version: the newest that runs on it (7 needs Node 22). */
export function aiMajorFor(nodeVersion = process.versions.node) {
  const node = Number(nodeVersion.split('.')[0])
  return (AI_MAJORS.find((entry) => node >= entry.node) ?? AI_MAJORS[AI_MAJORS.length - 1]).major
}

/** The pnpm that runs this script (`pnpm pack:local`), else the workspace's own through npx. */
function pnpmCommand() {
  const running = process.env.npm_execpath
  if (running !== undefined && /pnpm/.test(running)) return [process.execPath, running]
  const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  return ['npx', '-y', packageManager]
}

/**
 * Packs one package with `pnpm pack` into `destination` and returns the tarball's absolute path.
 * `pnpm pack` applies `publishConfig` and replaces `workspace:` ranges, as `pnpm publish` does.
 */
export function packPackage(dir, destination) {
  const [command, ...args] = pnpmCommand()
  const output = execFileSync(command, [...args, 'pack', '--pack-destination', destination], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return resolve(dir, output.trim().split('\n').pop())
}

/** Packs every public package into `destination`: `[{ name, dir, manifest, tarball }]`, in folder order. */
export function packAll(destination, packages = publicPackages()) {
  mkdirSync(destination, { recursive: true })
  return packages.map((p) => ({ ...p, tarball: packPackage(p.dir, destination) }))
}

/**
 * What `npm install` gets: every tarball, and the `ai` major for `nodeVersion` (the adapter's peer; npm
 * would otherwise pick the newest `ai`, which needs Node 22).
 */
export function installArgs(tarballs, nodeVersion = process.versions.node) {
  return [...tarballs, `ai@${aiMajorFor(nodeVersion)}`]
}

/** The `npm install` line of {@link installArgs}, to paste into a shell: paths are quoted when they need it. */
export function installLine(tarballs, nodeVersion = process.versions.node) {
  const quote = (arg) => (/^[\w./@+-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`)
  return ['npm', 'install', ...installArgs(tarballs, nodeVersion).map(quote)].join(' ')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const destination = resolve(process.argv[2] ?? join(root, '.pack-local'))
  mkdirSync(destination, { recursive: true })
  // Only tarballs of this run: an older version left in the folder would be installed beside the new one.
  for (const file of readdirSync(destination, { withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith('.tgz'))) {
    rmSync(join(destination, file.name))
  }
  const packed = packAll(destination)
  for (const { name, manifest } of packed) console.log(`packed ${name}@${manifest.version}`)
  console.log(`\n${packed.length} tarballs in ${destination}. In your project (Node ${process.versions.node}), install them all with:\n`)
  console.log(installLine(packed.map((p) => p.tarball)))
  console.log('\nEvery public package is on the line, so npm finds each planmode dependency among the tarballs, not on the registry.')
  console.log("`ai` is the AI SDK adapter's peer: ai@6 runs on Node 20, ai@7 needs Node 22 or later.")
}
