import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runChild, startChild, stopChildren } from '@planmode/testkit'

let dir: string
let script: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-testkit-child-'))
  script = join(dir, 'child.mjs')
  // Prints what its arguments say, a line in two chunks, then waits for a line on stdin (`wait`) or exits with a code.
  await writeFile(
    script,
    [
      'const [mode, code] = process.argv.slice(2)',
      "process.stdout.write('asked a\\nasked b\\nhalf')",
      "setTimeout(() => process.stdout.write(' line\\n'), 20)",
      "process.stderr.write(`env ${process.env.TESTKIT_CHILD ?? 'unset'}\\n`)",
      "if (mode === 'wait') process.stdin.once('data', (chunk) => { process.stdout.write(`got ${chunk}`); process.exit(0) })",
      'else setTimeout(() => process.exit(Number(code ?? 0)), 40)',
    ].join('\n'),
  )
})
afterAll(async () => {
  stopChildren()
  await rm(dir, { recursive: true, force: true })
})

describe('startChild', () => {
  it('hands out lines in order, each once, a line split across chunks whole; rejects, with the output, for a line never printed', async () => {
    const child = startChild(script, ['exit', '3'], { env: { TESTKIT_CHILD: 'set' } })
    expect(await child.line(/^asked (\S+)$/)).toBe('a')
    expect(await child.line(/^asked (\S+)$/)).toBe('b')
    expect(await child.line(/^half line$/)).toBe('half line')
    await expect(child.line(/^never$/)).rejects.toThrow(/exited \(3\) before printing \/\^never\$\/: stdout .*asked a.* stderr .*env set/)
    expect(await child.exited).toEqual({ code: 3, signal: null })
  })

  it('talks through stdin; a line written after the child ended is dropped, not thrown', async () => {
    const child = startChild(script, ['wait'])
    await child.line(/^half line$/)
    child.child.stdin!.write('hello\n')
    expect(await child.line(/^got (.+)$/)).toBe('hello')
    await child.exited
    child.child.stdin!.write('too late\n')
    await new Promise((resolve) => setImmediate(resolve))
  })

  it('stopChildren kills the children still running', async () => {
    const child = startChild(script, ['wait'])
    await child.line(/^asked a$/)
    stopChildren()
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' })
  })
})

describe('runChild', () => {
  it('runs to the end and resolves with the code and everything printed', async () => {
    const result = await runChild(script, ['exit', '0'], { env: { TESTKIT_CHILD: 'run' } })
    expect(result).toEqual({ code: 0, signal: null, stdout: 'asked a\nasked b\nhalf line\n', stderr: 'env run\n' })
  })
})
