// Writes a package's `exports` and `publishConfig.exports` from its tsup `entry` map,
// so exports never drift from the build.
// Usage: node scripts/manifest.mjs packages/<name> [...]   (rewrites each package.json in place)
import { readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

export function entriesOf(dir) {
  const config = readFileSync(join(dir, 'tsup.config.ts'), 'utf8')
  const block = /entry:\s*\{([^}]*)\}/.exec(config)
  if (!block) throw new Error(`${dir}/tsup.config.ts: no \`entry: { ... }\` map`)
  const entries = {}
  for (const match of block[1].matchAll(/['"]?([\w-]+)['"]?\s*:\s*['"]([^'"]+)['"]/g)) {
    entries[match[1]] = match[2]
  }
  return entries
}

export function exportsFor(entries, withSource) {
  const result = {}
  for (const [name, source] of Object.entries(entries)) {
    const key = name === 'index' ? '.' : `./${name}`
    result[key] = {
      ...(withSource ? { '@planmode/source': `./${source}` } : {}),
      import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
      require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
    }
  }
  result['./package.json'] = './package.json'
  return result
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  for (const dir of process.argv.slice(2)) {
    const path = join(dir, 'package.json')
    const pkg = JSON.parse(readFileSync(path, 'utf8'))
    const entries = entriesOf(dir)
    pkg.exports = exportsFor(entries, true)
    pkg.publishConfig = { ...(pkg.publishConfig ?? {}), access: 'public', exports: exportsFor(entries, false) }
    writeFileSync(path, JSON.stringify(pkg, null, 2) + '\n')
  }
}
