// Meets every package the way our users will: packed, installed with plain npm
// into a fresh project outside the workspace, then imported from ESM, required
// from CJS and type-checked from a consumer .ts file. Also runs publint and
// attw on each tarball and checks the manifest rules of CONTRIBUTING.md.
//   node scripts/pack-check.mjs            every public package (needs `pnpm build` first)
//   node scripts/pack-check.mjs context    only the named packages
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { entriesOf, exportsFor } from './manifest.mjs'

const root = resolve(import.meta.dirname, '..')
const only = process.argv.slice(2)
const bin = (name) => join(root, 'node_modules', '.bin', name)
const run = (cmd, args, cwd, quiet = true) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', env: { ...process.env, FORCE_COLOR: '0' } })

const problems = []

/** Whether a changeset in `.changeset/` that `changeset version` has not applied yet names `name`. */
function namedByPendingChangeset(name) {
  const dir = join(root, '.changeset')
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .some((file) => new RegExp(`^['"]${name.replace(/[/@-]/g, '\\$&')}['"]:`, 'm').test(readFileSync(join(dir, file), 'utf8')))
}

const fail = (pkg, message) => problems.push(`${pkg}: ${message}`)

const packages = readdirSync(join(root, 'packages'))
  .filter((name) => existsSync(join(root, 'packages', name, 'package.json')))
  .map((name) => ({ name, dir: join(root, 'packages', name), manifest: JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) }))
  .filter((p) => !p.manifest.private && (only.length === 0 || only.includes(p.name)))

const work = mkdtempSync(join(tmpdir(), 'planmode-pack-'))
const tarballs = join(work, 'tarballs')
mkdirSync(tarballs)
console.log(`pack-check: ${packages.length} package(s) in ${work}`)

for (const { name, dir, manifest } of packages) {
  const entries = entriesOf(dir)
  const expected = JSON.stringify(exportsFor(entries, false))
  if (JSON.stringify(manifest.publishConfig?.exports) !== expected || JSON.stringify(manifest.exports) !== JSON.stringify(exportsFor(entries, true))) {
    fail(manifest.name, 'exports drifted from the tsup entry map: run `node scripts/manifest.mjs packages/' + name + '`')
  }
  if (manifest.sideEffects !== false) fail(manifest.name, '`sideEffects` must be false')
  if (manifest.type !== 'module') fail(manifest.name, '`type` must be "module"')
  for (const entry of Object.keys(entries)) {
    for (const ext of ['js', 'cjs', 'd.ts', 'd.cts']) {
      if (!existsSync(join(dir, 'dist', `${entry}.${ext}`))) fail(manifest.name, `dist/${entry}.${ext} is missing (run \`pnpm build\`)`)
    }
  }
  const packed = run('pnpm', ['pack', '--pack-destination', tarballs], dir).trim().split('\n').pop()
  const tarball = resolve(dir, packed)
  const listing = run('tar', ['-tzf', tarball], work).split('\n').filter(Boolean)
  const stray = listing.filter((file) => !/^package\/(dist\/|README\.md$|CHANGELOG\.md$|LICENSE$|package\.json$)/.test(file))
  if (stray.length > 0) fail(manifest.name, `ships files outside dist/README: ${stray.join(', ')}`)
  const packedManifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], work))
  if (JSON.stringify(packedManifest).includes('@planmode/source')) fail(manifest.name, 'the packed manifest still names the @planmode/source condition')
  if (JSON.stringify(packedManifest).includes('workspace:')) fail(manifest.name, 'the packed manifest still has a workspace: range')
  // The release dry run: what `changeset publish` would upload is the version changesets cut, with its
  // CHANGELOG.md, and each peer range is the manifest's (scripts/peer-floors.mjs) without `workspace:`.
  if (packedManifest.version !== manifest.version) fail(manifest.name, `packed as ${packedManifest.version}, not ${manifest.version}`)
  if (manifest.version === '0.0.0') {
    // New since the last cut: nothing to publish yet, and the next `pnpm release:version` versions it by a pending changeset.
    if (!namedByPendingChangeset(manifest.name)) fail(manifest.name, 'is at 0.0.0 (never released) and no pending changeset names it')
  } else if (!listing.includes('package/CHANGELOG.md')) fail(manifest.name, 'the tarball has no CHANGELOG.md (run `pnpm release:version`)')
  for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) {
    const packedRange = packedManifest.peerDependencies?.[peer]
    if (packedRange !== range.replace(/^workspace:/, '')) fail(manifest.name, `peer ${peer} packed as ${packedRange}, not ${range.replace(/^workspace:/, '')}`)
  }
  for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
    const target = range === 'workspace:^' ? packages.find((p) => p.manifest.name === dependency) : undefined
    if (target !== undefined && packedManifest.dependencies?.[dependency] !== `^${target.manifest.version}`) {
      fail(manifest.name, `dependency ${dependency} packed as ${packedManifest.dependencies?.[dependency]}, not ^${target.manifest.version}`)
    }
  }
  try {
    run(bin('publint'), ['run', tarball, '--strict'], work)
  } catch (error) {
    fail(manifest.name, `publint:\n${error.stdout}${error.stderr}`)
  }
  try {
    run(bin('attw'), [tarball, '--profile', 'node16', '--format', 'ascii', '--no-emoji', '--no-color'], work)
  } catch (error) {
    fail(manifest.name, `attw:\n${error.stdout}${error.stderr}`)
  }
  console.log(`  packed ${manifest.name}@${manifest.version} (${listing.length} files)`)
}

// A fresh project outside the workspace, installed with plain npm from the tarballs.
const project = join(work, 'consumer')
mkdirSync(project)
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'planmode-consumer', private: true, version: '0.0.0' }, null, 2))
const files = readdirSync(tarballs).map((file) => join(tarballs, file))
run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...files, `typescript@${JSON.parse(readFileSync(join(root, 'node_modules/typescript/package.json'), 'utf8')).version}`, '@types/node@20'], project)

const specifiers = packages.flatMap(({ dir, manifest }) =>
  Object.keys(entriesOf(dir)).map((entry) => (entry === 'index' ? manifest.name : `${manifest.name}/${entry}`)),
)
writeFileSync(
  join(project, 'esm.mjs'),
  specifiers.map((s, i) => `import * as m${i} from '${s}'\nconsole.log('import ${s}: ' + Object.keys(m${i}).length + ' export(s)')`).join('\n') + '\n',
)
writeFileSync(
  join(project, 'cjs.cjs'),
  specifiers.map((s) => `console.log('require ${s}: ' + Object.keys(require('${s}')).length + ' export(s)')`).join('\n') + '\n',
)
for (const file of ['esm.mjs', 'cjs.cjs']) {
  try {
    process.stdout.write(run('node', [file], project).trimEnd().replace(/^/gm, '  ') + '\n')
  } catch (error) {
    fail('consumer', `node ${file} failed:\n${error.stdout}${error.stderr}`)
  }
}

// Type-check consumer files (one ESM, one CJS) against the installed types.
const consumers = join(root, 'scripts', 'pack-consumer')
for (const { name } of packages) {
  const source = join(consumers, `${name}.ts`)
  if (existsSync(source)) {
    copyFileSync(source, join(project, `${name}.mts`))
    copyFileSync(source, join(project, `${name}.cts`))
  } else {
    fail(`@planmode/${name}`, `no consumer file at scripts/pack-consumer/${name}.ts`)
  }
}
writeFileSync(
  join(project, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'Node16', moduleResolution: 'Node16', strict: true, noEmit: true, types: ['node'], skipLibCheck: false },
    include: ['*.mts', '*.cts'],
  }),
)
try {
  run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], project)
  console.log(`  type-checked ${packages.length * 2} consumer file(s) (ESM and CJS) against the installed types`)
} catch (error) {
  fail('consumer', `tsc failed:\n${error.stdout}${error.stderr}`)
}
// packages/ai-sdk's README says: with exactOptionalPropertyTypes too, the only errors are TS2344s in `ai`'s own
// dist/index.d.ts (none in a planmode package). Check both halves, so the sentence changes when `ai` does.
if (packages.some((p) => p.name === 'ai-sdk')) {
  writeFileSync(join(project, 'tsconfig.exact.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { exactOptionalPropertyTypes: true } }))
  let exact = ''
  try {
    run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.exact.json'], project)
  } catch (error) {
    exact = `${error.stdout}${error.stderr}`
  }
  const errors = [...exact.matchAll(/^(\S+?)\(\d+,\d+\): error (TS\d+)/gm)].map((match) => `${match[1]} ${match[2]}`)
  const foreign = errors.filter((error) => !/^node_modules\/ai\/dist\/index\.d\.m?ts TS2344$/.test(error))
  if (errors.length === 0) fail('@planmode/ai-sdk', 'ai\'s declarations now compile with exactOptionalPropertyTypes and skipLibCheck: false: update the README paragraph "skipLibCheck: false"')
  else if (foreign.length > 0) fail('consumer', `with exactOptionalPropertyTypes, errors outside ai's own declarations:\n${exact}`)
  else console.log(`  with exactOptionalPropertyTypes: ${errors.length} error(s), all TS2344 in ai's own declarations (as packages/ai-sdk's README says)`)
}

if (problems.length > 0) {
  console.error(`\npack-check failed (${problems.length} problem(s)); files kept in ${work}\n`)
  for (const problem of problems) console.error(`- ${problem}`)
  process.exit(1)
}
rmSync(work, { recursive: true, force: true })
console.log('pack-check: every package installs, imports, requires and type-checks from its tarball')
