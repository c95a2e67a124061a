import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMainThread } from 'node:worker_threads'
import type { ProjectionUnit } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { fileHost, removeTemp, tempDir } from './support.js'

afterEach(removeTemp)

const NOBODY = 65534
const root = process.getuid?.() === 0
/**
 * Root writes into a folder without write permission, so as root the test
 * drops its effective uid to `nobody` while the write runs. That changes the
 * whole process: allowed only in vitest's `forks` pool, where the test file
 * has a process of its own (its main thread).
 */
const canLoseWriteAccess = process.platform !== 'win32' && (!root || (isMainThread && typeof process.seteuid === 'function'))

async function withoutWriteAccess<T>(run: () => Promise<T>): Promise<T> {
  if (!root) return run()
  process.seteuid!(NOBODY)
  try {
    return await run()
  } finally {
    process.seteuid!(0)
  }
}

describe('a write that fails warns once, never throws into the host, and the next change writes again', () => {
  it('the folder removed mid-run is created again before the next write', async () => {
    const host = fileHost()
    const session = await host.session()
    await host.present(session, '# One')
    await host.settled()
    rmSync(host.dir, { recursive: true })
    await host.present(session, '# Two')
    await host.settled()
    expect(host.read(session)).toContain('rev: 2\nstatus: "open"\ntitle: "Two"\n')
    // Its parents too.
    rmSync(join(host.dir, '..'), { recursive: true })
    await host.present(session, '# Three')
    await host.settled()
    expect(host.read(session)).toContain('rev: 3\n')
    expect(host.warnings()).toEqual([])
  })

  it('a folder that cannot be created again (a file in its place): one warning per failed write, the append still resolves, then it writes again', async () => {
    const host = fileHost()
    const session = await host.session()
    rmSync(host.dir, { recursive: true })
    writeFileSync(host.dir, 'in the way')
    const file = host.service().pathOf(session.id)
    await expect(host.present(session, '# One')).resolves.toBeDefined()
    await host.settled()
    expect(host.warnings()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^@planmode/plan-file: could not write ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*EEXIST.*; the next change writes it again$`,
        ),
      ),
    ])
    await host.present(session, '# Two')
    await host.settled()
    expect(host.warnings()).toHaveLength(2)
    rmSync(host.dir)
    await host.present(session, '# Three')
    await host.settled()
    expect(host.warnings()).toHaveLength(2)
    expect(host.read(session)).toContain('rev: 3\nstatus: "open"\ntitle: "Three"\n---\n# Three')
    // The host's log and loop are untouched by the failures.
    expect(host.logger.lines.filter((line) => line.level === 'error')).toEqual([])
  })

  it.runIf(canLoseWriteAccess)(
    'a folder without write permission: one warning, no file, no temporary file; writable again, the next change writes',
    async () => {
      const parent = tempDir()
      chmodSync(parent, 0o755)
      const host = fileHost({ dir: join(parent, 'plans') })
      const session = await host.session()
      chmodSync(host.dir, 0o555)
      try {
        await withoutWriteAccess(async () => {
          await host.present(session, '# One')
          await host.settled()
        })
        expect(host.warnings()).toEqual([expect.stringMatching(/could not write .*: EACCES: permission denied/)])
        expect(readdirSync(host.dir)).toEqual([])
      } finally {
        chmodSync(host.dir, 0o755)
      }
      await host.present(session, '# Two')
      await host.settled()
      expect(host.warnings()).toHaveLength(1)
      expect(host.read(session)).toContain('rev: 2\n')
    },
  )

  it('a rename that fails (a folder where the file goes): one warning, the temporary file removed, the folder kept; then it writes again', async () => {
    const host = fileHost()
    const session = await host.session()
    const file = host.service().pathOf(session.id)
    mkdirSync(file)
    writeFileSync(join(file, 'inside'), 'x')
    await host.present(session, '# One')
    await host.settled()
    expect(host.warnings()).toEqual([expect.stringMatching(/^@planmode\/plan-file: could not write .*: (EISDIR|ENOTEMPTY|EEXIST|EPERM)/)])
    expect(host.strays()).toEqual([])
    expect(readdirSync(host.dir)).toEqual([`${session.id}.md`])
    expect(readdirSync(file)).toEqual(['inside'])
    rmSync(file, { recursive: true })
    await host.present(session, '# Two')
    await host.settled()
    expect(host.read(session)).toContain('rev: 2\n')
    expect(host.warnings()).toHaveLength(1)
  })

  it('a snapshot that cannot be read (another unit’s view fails its schema): one warning naming the session; the next change writes', async () => {
    const host = fileHost()
    let broken = true
    const unit: ProjectionUnit<number, number> = {
      key: 'fragile',
      stateVersion: 1,
      initial: () => 0,
      apply: (state) => state + 1,
      view: (state) => state,
      schema: {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: (value) => (broken ? { issues: [{ message: 'broken on purpose' }] } : { value: value as number }),
        },
      },
    }
    host.root.require('sessionProjections').register(unit)
    const session = await host.session()
    await host.present(session, '# One')
    await host.settled()
    expect(host.warnings()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^@planmode/plan-file: could not read the plan of session ${session.id} for .*broken on purpose.*; the next change writes it again$`,
        ),
      ),
    ])
    expect(host.read(session)).toBeUndefined()
    broken = false
    await host.present(session, '# Two')
    await host.settled()
    expect(host.read(session)).toContain('rev: 2\n')
    expect(host.warnings()).toHaveLength(1)
  })
})
