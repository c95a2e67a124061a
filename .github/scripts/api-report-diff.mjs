// The API report step of .github/workflows/api-report.yml, run after `pnpm api` regenerated every
// packages/*/etc/*.api.md from the pull request's code:
//   node .github/scripts/api-report-diff.mjs <base sha> <markdown file>
// Writes the markdown (the reports' diff against the base, per package, and the problems) to the file and to
// the job's summary, and sets the step outputs `changed` (a report differs from the base) and `problems`
// (how many): a committed report that is stale (the regenerated one differs), and a package whose report
// changed that no changeset of the pull request names. It never fails itself: the workflow's last step does.
import { execFileSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const REPORTS = 'packages/*/etc/*.api.md'
/** GitHub keeps a comment under 65,536 characters; the diff is cut before that. */
const MAX_DIFF = 60_000

/** The package names a changeset's front matter gives a bump (`'@planmode/x': minor`). */
export function changesetPackages(text) {
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)
  if (front === null) return []
  return [...front[1].matchAll(/^\s*['"]?(@?[^'":\s]+)['"]?\s*:\s*(major|minor|patch)\s*$/gm)].map((match) => match[1])
}

/** The folder under packages/ that a report path belongs to: `packages/<folder>/etc/…`. */
export function folderOf(path) {
  return /^packages\/([^/]+)\/etc\//.exec(path)?.[1]
}

/**
 * The problems of a pull request's reports: each stale report (regenerated ≠ committed), and each package
 * whose report differs from the base with no changeset of the pull request naming it.
 */
export function problemsOf({ stale, changed, named }) {
  const problems = stale.map(
    (path) => `\`${path}\` is stale: the code's public surface is not what it says. Run \`pnpm api\` and commit it.`,
  )
  for (const name of changed)
    if (!named.includes(name))
      problems.push(`\`${name}\`'s public surface changed and no changeset of this pull request names it: add one (\`pnpm changeset\`).`)
  return problems
}

/** The comment: the problems first, then each package's report diff. */
export function markdownOf({ diffs, problems }) {
  const lines = ['## API report changes', '']
  if (diffs.length === 0) lines.push("No package's public surface changed.", '')
  for (const problem of problems) lines.push(`- :x: ${problem}`)
  if (problems.length > 0) lines.push('')
  let budget = MAX_DIFF
  for (const { name, diff } of diffs) {
    const shown = diff.length <= budget ? diff : `${diff.slice(0, Math.max(0, budget))}\n… (cut: the whole diff is in the job's log)`
    budget -= shown.length
    lines.push(`### ${name}`, '', '```diff', shown.trimEnd(), '```', '')
  }
  return lines.join('\n')
}

function git(...args) {
  return execFileSync('git', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
}

function main([baseSha, output]) {
  if (baseSha === undefined || output === undefined) {
    console.error('usage: node .github/scripts/api-report-diff.mjs <base sha> <markdown file>')
    process.exit(2)
  }
  // The repository the command runs in (the workflow's checkout).
  const root = git('rev-parse', '--show-toplevel').trim()
  process.chdir(root)
  const base = git('merge-base', baseSha, 'HEAD').trim()
  // A report new in this run (a new package, or a new subpath) shows in the diffs too.
  const untracked = git('ls-files', '--others', '--exclude-standard', '--', REPORTS).split('\n').filter(Boolean)
  if (untracked.length > 0) git('add', '--intent-to-add', '--', ...untracked)
  const stale = git('diff', '--name-only', 'HEAD', '--', REPORTS).split('\n').filter(Boolean)
  const nameOf = (folder) => {
    const manifest = join(root, 'packages', folder, 'package.json')
    return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).name : folder
  }
  const byPackage = new Map()
  for (const path of git('diff', '--name-only', base, '--', REPORTS).split('\n').filter(Boolean)) {
    const name = nameOf(folderOf(path))
    byPackage.set(name, `${byPackage.get(name) ?? ''}${git('diff', '--no-color', base, '--', path)}`)
  }
  const diffs = [...byPackage].map(([name, diff]) => ({ name, diff }))
  const changesets = git('diff', '--name-only', '--diff-filter=AM', base, 'HEAD', '--', '.changeset/*.md')
    .split('\n')
    .filter((path) => path !== '' && !path.endsWith('README.md'))
  const named = changesets.flatMap((path) => changesetPackages(readFileSync(join(root, path), 'utf8')))
  const problems = problemsOf({ stale, changed: [...byPackage.keys()], named })
  const markdown = markdownOf({ diffs, problems })
  writeFileSync(output, markdown)
  if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, `${markdown}\n`)
  if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `changed=${diffs.length > 0}\nproblems=${problems.length}\n`)
  console.log(markdown)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) main(process.argv.slice(2))
