// Meets every package the way our users will: packed, installed with plain npm
// into a fresh project outside the workspace (with the line `pnpm pack:local`
// prints, and the `ai` major of the Node that runs it: 6 on Node 20, 7 on 22
// and later), then imported from ESM, required from CJS, type-checked from a
// consumer .ts file, and the AI SDK adapter's README example run. Also runs
// publint and attw on each tarball and checks the manifest rules of
// CONTRIBUTING.md.
//   node scripts/pack-check.mjs            every public package (needs `pnpm build` first)
//   node scripts/pack-check.mjs context    only the named packages
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { entriesOf, exportsFor } from './manifest.mjs'
import { aiMajorFor, installArgs, packPackage } from './pack-local.mjs'

const root = resolve(import.meta.dirname, '..')
const only = process.argv.slice(2)
const bin = (name) => join(root, 'node_modules', '.bin', name)
const run = (cmd, args, cwd, quiet = true) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: { ...process.env, FORCE_COLOR: '0' },
  })

const problems = []

/** Whether a changeset in `.changeset/` that `changeset version` has not applied yet names `name`. */
function namedByPendingChangeset(name) {
  const dir = join(root, '.changeset')
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .some((file) => new RegExp(`^['"]${name.replace(/[/@-]/g, '\\$&')}['"]:`, 'm').test(readFileSync(join(dir, file), 'utf8')))
}

const fail = (pkg, message) => problems.push(`${pkg}: ${message}`)
const rootEngines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node

const packages = readdirSync(join(root, 'packages'))
  .filter((name) => existsSync(join(root, 'packages', name, 'package.json')))
  .map((name) => ({
    name,
    dir: join(root, 'packages', name),
    manifest: JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')),
  }))
  .filter((p) => !p.manifest.private && (only.length === 0 || only.includes(p.name)))

const work = mkdtempSync(join(tmpdir(), 'planmode-pack-'))
const tarballs = join(work, 'tarballs')
mkdirSync(tarballs)
console.log(`pack-check: ${packages.length} package(s) in ${work}`)

for (const { name, dir, manifest } of packages) {
  const entries = entriesOf(dir)
  const expected = JSON.stringify(exportsFor(entries, false))
  if (
    JSON.stringify(manifest.publishConfig?.exports) !== expected ||
    JSON.stringify(manifest.exports) !== JSON.stringify(exportsFor(entries, true))
  ) {
    fail(manifest.name, 'exports drifted from the tsup entry map: run `node scripts/manifest.mjs packages/' + name + '`')
  }
  if (manifest.sideEffects !== false) fail(manifest.name, '`sideEffects` must be false')
  // The Node versions we test (CONTRIBUTING.md, "Tooling") are the ones every package says it supports.
  if (manifest.engines?.node !== rootEngines)
    fail(manifest.name, `engines.node is ${JSON.stringify(manifest.engines?.node)}, not the workspace's ${JSON.stringify(rootEngines)}`)
  if (manifest.type !== 'module') fail(manifest.name, '`type` must be "module"')
  for (const entry of Object.keys(entries)) {
    for (const ext of ['js', 'cjs', 'd.ts', 'd.cts']) {
      if (!existsSync(join(dir, 'dist', `${entry}.${ext}`))) fail(manifest.name, `dist/${entry}.${ext} is missing (run \`pnpm build\`)`)
    }
  }
  const tarball = packPackage(dir, tarballs)
  const listing = run('tar', ['-tzf', tarball], work).split('\n').filter(Boolean)
  const stray = listing.filter((file) => !/^package\/(dist\/|README\.md$|CHANGELOG\.md$|LICENSE$|package\.json$)/.test(file))
  if (stray.length > 0) fail(manifest.name, `ships files outside dist/README: ${stray.join(', ')}`)
  const packedManifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], work))
  if (JSON.stringify(packedManifest).includes('@planmode/source'))
    fail(manifest.name, 'the packed manifest still names the @planmode/source condition')
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
    if (packedRange !== range.replace(/^workspace:/, ''))
      fail(manifest.name, `peer ${peer} packed as ${packedRange}, not ${range.replace(/^workspace:/, '')}`)
  }
  for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
    const target = range === 'workspace:^' ? packages.find((p) => p.manifest.name === dependency) : undefined
    if (target !== undefined && packedManifest.dependencies?.[dependency] !== `^${target.manifest.version}`) {
      fail(
        manifest.name,
        `dependency ${dependency} packed as ${packedManifest.dependencies?.[dependency]}, not ^${target.manifest.version}`,
      )
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
// The line `pnpm pack:local` prints (every tarball, and the `ai` major of this Node), then the consumer's tools.
const nodeMajor = process.versions.node.split('.')[0]
const aiMajor = aiMajorFor()
console.log(`  installing into a fresh project on Node ${process.versions.node}: npm install <${files.length} tarballs> ai@${aiMajor}`)
run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...installArgs(files)], project)
run(
  'npm',
  [
    'install',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    '--save-dev',
    `typescript@${JSON.parse(readFileSync(join(root, 'node_modules/typescript/package.json'), 'utf8')).version}`,
    `@types/node@${nodeMajor}`,
  ],
  project,
)
const installedAi = JSON.parse(readFileSync(join(project, 'node_modules/ai/package.json'), 'utf8')).version
if (Number(installedAi.split('.')[0]) !== aiMajor) fail('consumer', `npm installed ai@${installedAi}, not ai@${aiMajor}`)

const specifiers = packages.flatMap(({ dir, manifest }) =>
  Object.keys(entriesOf(dir)).map((entry) => (entry === 'index' ? manifest.name : `${manifest.name}/${entry}`)),
)
writeFileSync(
  join(project, 'esm.mjs'),
  specifiers
    .map((s, i) => `import * as m${i} from '${s}'\nconsole.log('import ${s}: ' + Object.keys(m${i}).length + ' export(s)')`)
    .join('\n') + '\n',
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
const moduleKind = aiMajor >= 7 ? 'NodeNext' : 'Node16'
writeFileSync(
  join(project, 'tsconfig.json'),
  JSON.stringify({
    // With `ai` 7 (ESM only) a CommonJS file type-checks under `nodenext` (TypeScript 5.8 or later: require of ESM, as
    // Node 22 does), not `node16` (TS1479); packages/ai-sdk's README says so.
    compilerOptions: {
      target: 'ES2022',
      module: moduleKind,
      moduleResolution: moduleKind,
      strict: true,
      noEmit: true,
      types: ['node'],
      skipLibCheck: false,
    },
    include: ['*.mts', '*.cts'],
  }),
)
try {
  run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], project)
  console.log(`  type-checked ${packages.length * 2} consumer file(s) (ESM and CJS) against the installed types`)
} catch (error) {
  fail('consumer', `tsc failed:\n${error.stdout}${error.stderr}`)
}
// The AI SDK adapter's README example (its offline block, packages/ai-sdk/test/offline.ts) runs in the consumer as a
// user would run it, against the `ai` just installed, and prints what the README says it prints.
if (packages.some((p) => p.name === 'ai-sdk')) {
  const ts = createRequire(join(project, 'package.json'))('typescript')
  const example = readFileSync(join(root, 'packages/ai-sdk/test/offline.ts'), 'utf8')
  writeFileSync(
    join(project, 'readme-example.mjs'),
    ts.transpileModule(example, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText,
  )
  const expected = ['Done: --verbose is parsed. { active: false }', '[ true, false ]']
  try {
    const printed = run('node', ['readme-example.mjs'], project).trimEnd().split('\n')
    if (JSON.stringify(printed) !== JSON.stringify(expected))
      fail('@planmode/ai-sdk', `the README example printed ${JSON.stringify(printed)}, not ${JSON.stringify(expected)} (ai@${installedAi})`)
    else console.log(`  ran the @planmode/ai-sdk README example with ai@${installedAi}: ${printed.join(' / ')}`)
  } catch (error) {
    fail('@planmode/ai-sdk', `the README example failed with ai@${installedAi}:\n${error.stdout}${error.stderr}`)
  }
}

// packages/ai-sdk's README says: with exactOptionalPropertyTypes too, the only errors are in the AI SDK's own
// declarations (with `ai` 6, TS2344s in ai's dist/index.d.ts; with 7, TS2344s and a TS2420 in ai's and
// @ai-sdk/provider-utils' declarations), none in a planmode package. Check both halves, so the sentence changes
// when `ai` does.
if (packages.some((p) => p.name === 'ai-sdk')) {
  writeFileSync(
    join(project, 'tsconfig.exact.json'),
    JSON.stringify({ extends: './tsconfig.json', compilerOptions: { exactOptionalPropertyTypes: true } }),
  )
  let exact = ''
  try {
    run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.exact.json'], project)
  } catch (error) {
    exact = `${error.stdout}${error.stderr}`
  }
  const errors = [...exact.matchAll(/^(\S+?)\(\d+,\d+\): error (TS\d+)/gm)].map((match) => `${match[1]} ${match[2]}`)
  const sdk =
    aiMajor >= 7
      ? /^node_modules\/(ai\/dist\/index-\w+\.d\.ts TS(2344|2420)|(.+\/)?@ai-sdk\/provider-utils\/dist\/index\.d\.ts TS2344)$/
      : /^node_modules\/ai\/dist\/index\.d\.m?ts TS2344$/
  const foreign = errors.filter((error) => !sdk.test(error))
  if (errors.length === 0)
    fail(
      '@planmode/ai-sdk',
      `ai@${installedAi}'s declarations now compile with exactOptionalPropertyTypes and skipLibCheck: false: update the README paragraph "skipLibCheck: false"`,
    )
  else if (foreign.length > 0)
    fail('consumer', `with exactOptionalPropertyTypes and ai@${installedAi}, errors outside the AI SDK's own declarations:\n${exact}`)
  else
    console.log(
      `  with exactOptionalPropertyTypes: ${errors.length} error(s), all in the AI SDK's own declarations (ai@${installedAi}, as packages/ai-sdk's README says)`,
    )
}

if (problems.length > 0) {
  console.error(`\npack-check failed (${problems.length} problem(s)); files kept in ${work}\n`)
  for (const problem of problems) console.error(`- ${problem}`)
  process.exit(1)
}
rmSync(work, { recursive: true, force: true })
console.log('pack-check: every package installs, imports, requires and type-checks from its tarball')
