import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BROKEN_HOST_VARIANTS, HOST_DUTIES } from '@planmode/host-conformance'

const root = new URL('../../../', import.meta.url)
const readme = readFileSync(new URL('packages/host-conformance/README.md', root), 'utf8')
/** A source file from its first import on, as the README quotes it. */
const quoted = (path: string): string => {
  const text = readFileSync(new URL(path, root), 'utf8')
  return text.slice(text.indexOf('import')).trimEnd()
}

describe('the README', () => {
  it('quotes the adapters and the test file that run in this repository, as they are', () => {
    for (const path of [
      'packages/host-conformance/test/support/reference-host.ts',
      'examples/own-host/test/own-host-factory.ts',
      'examples/own-host/test/conformance.test.ts',
    ]) {
      expect(readme, path).toContain(quoted(path))
    }
  })

  it('has a row for every duty in the table of checks, and for every broken variant with its failure', () => {
    for (const { duty, kind } of HOST_DUTIES) expect(readme).toContain(`| \`${duty}\` | ${kind} |`)
    const plain = readme.replaceAll('`', '')
    for (const variant of BROKEN_HOST_VARIANTS) expect(plain).toContain(`| ${variant.duty} | ${variant.name} | ${variant.failure} |`)
  })

  it('lists, for every duty, the duties its case builds on, as HOST_DUTIES has them', () => {
    for (const { duty, dependsOn } of HOST_DUTIES) {
      const builds = dependsOn.length === 0 ? '(nothing)' : dependsOn.map((prerequisite) => `\`${prerequisite}\``).join(', ')
      expect(readme).toContain(`| \`${duty}\` | ${builds} |`)
    }
  })
})
