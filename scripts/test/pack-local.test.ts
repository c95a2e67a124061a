import { describe, expect, it } from 'vitest'
// @ts-expect-error -- a plain ESM script without declarations
import { aiMajorFor, installLine } from '../pack-local.mjs'

describe('pnpm pack:local', () => {
  it('names the ai major that runs on the Node it runs on: 6 on Node 20, 7 on 22 and later', () => {
    expect(aiMajorFor('20.19.0')).toBe(6)
    expect(aiMajorFor('22.12.0')).toBe(7)
    expect(aiMajorFor('24.21.0')).toBe(7)
  })

  it('prints one npm install line with every tarball, quoting paths a shell would split', () => {
    expect(installLine(['/tmp/a/planmode-context-0.2.0.tgz', '/tmp/my dir/planmode-seams-0.2.0.tgz'], '20.20.2')).toBe(
      "npm install /tmp/a/planmode-context-0.2.0.tgz '/tmp/my dir/planmode-seams-0.2.0.tgz' ai@6",
    )
  })
})
