// Runs api-extractor for every entry point of the package in the current directory.
//   node ../../scripts/api-report.mjs          regenerate etc/<name>.api.md (local mode)
//   node ../../scripts/api-report.mjs --check  fail on any drift, printing the diff
// One report per entry: `index` → etc/<name>.api.md, `<entry>` → etc/<name>-<entry>.api.md.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'
import { entriesOf } from './manifest.mjs'

const check = process.argv.includes('--check')
const dir = process.cwd()
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
const unscoped = pkg.name.replace(/^@[^/]+\//, '')
const configPath = join(dir, 'api-extractor.json')
let failed = false

for (const entry of Object.keys(entriesOf(dir))) {
  const reportName = entry === 'index' ? unscoped : `${unscoped}-${entry}`
  const loaded = ExtractorConfig.loadFile(configPath)
  loaded.mainEntryPointFilePath = `<projectFolder>/dist/${entry}.d.ts`
  loaded.apiReport = { ...loaded.apiReport, reportFileName: reportName }
  const config = ExtractorConfig.prepare({
    configObject: loaded,
    configObjectFullPath: configPath,
    packageJsonFullPath: join(dir, 'package.json'),
  })
  const result = Extractor.invoke(config, { localBuild: !check, showVerboseMessages: false })
  const report = resolve(dir, 'etc', `${reportName}.api.md`)
  if (result.succeeded) {
    console.log(`${pkg.name}${entry === 'index' ? '' : `/${entry}`}: API report ${check ? 'up to date' : 'written'} (${report})`)
    continue
  }
  failed = true
  const temp = resolve(dir, 'temp', `${reportName}.api.md`)
  if (check && result.apiReportChanged && existsSync(temp)) {
    console.error(`\n${pkg.name}: the public API no longer matches etc/${reportName}.api.md.`)
    console.error('If the change is intended, run `pnpm api` and commit the report with it. Diff (committed → current):\n')
    const diff = spawnSync('diff', ['-u', existsSync(report) ? report : '/dev/null', temp], { encoding: 'utf8' })
    console.error(diff.stdout || diff.stderr)
  } else {
    console.error(`${pkg.name}: api-extractor reported ${result.errorCount} error(s) and ${result.warningCount} warning(s)`)
  }
}
process.exit(failed ? 1 : 0)
