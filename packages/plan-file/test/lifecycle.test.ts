import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { planCorePlugin } from '@planmode/plan-core'
import { planFilePlugin } from '@planmode/plan-file'
import { afterEach, describe, expect, it } from 'vitest'
import { fileHost, removeTemp, steps, tempDir } from './support.js'

afterEach(removeTemp)

describe('disposal stops writing and leaves the files', () => {
  it('after dispose, changes write nothing, the file stays as it was, and `planFile` is gone', async () => {
    const host = fileHost()
    const session = await host.session()
    await host.present(session, '# One')
    await host.settled()
    const before = host.read(session)
    host.fiber!.dispose()
    expect(host.root.get('planFile')).toBeUndefined()
    await host.present(session, '# Two')
    // A second plan-file, loaded now, writes the change to its own folder: the first wrote nothing meanwhile.
    const other = join(tempDir(), 'other')
    host.root.plugin(planFilePlugin, { dir: other })
    await host.present(session, '# Three')
    await host.settled()
    expect(readdirSync(other)).toEqual([`${session.id}.md`])
    expect(host.read(session)).toBe(before)
    expect(readdirSync(host.dir)).toEqual([`${session.id}.md`])
  })

  it('a write that is due or running when the plugin is disposed is dropped (its temporary file removed); settled() still resolves', async () => {
    const host = fileHost()
    const session = await host.session()
    await host.present(session, '# One')
    // The write has just begun (it needs several trips to the disk before its rename).
    const settled = host.settled()
    host.fiber!.dispose()
    await settled
    expect(host.read(session)).toBeUndefined()
    expect(readdirSync(host.dir)).toEqual([])
    expect(host.warnings()).toEqual([])
  })

  it('follows planMode: plan-core gone, nothing is written; back, plan-file writes again (planHistory returning before it)', async () => {
    const host = fileHost({ progress: true })
    const session = await host.session()
    const id = await host.present(session, '# One')
    await host.settled()
    host.core.dispose()
    expect(host.fiber!.applied).toBe(false)
    expect(host.root.get('planFile')).toBeUndefined()
    await host.review(session, id, 'approved')
    await host.progress(session, id, steps('done'))
    expect(host.read(session)).toContain('status: "open"')
    host.root.plugin(planCorePlugin)
    expect(host.fiber!.applied).toBe(true)
    expect(host.logger.lines.filter((line) => line.level === 'error')).toEqual([])
    // The next change writes the whole state, the changes missed while it was away included.
    await host.progress(session, id, steps('done', 'pending'))
    await host.settled()
    expect(host.read(session)).toContain('status: "approved"\ntitle: "One"\nprogress: "1/2"\n')
  })

  it('with the planHistory unit gone (its plugin disposed), nothing is written and the file stays', async () => {
    const host = fileHost({ progress: true })
    const session = await host.session()
    const id = await host.present(session, '# One')
    await host.review(session, id, 'approved')
    await host.settled()
    const before = host.read(session)
    host.history.dispose()
    await host.progress(session, id, steps('done'))
    await host.present(session, '# Two')
    await host.settled()
    expect(host.read(session)).toBe(before)
    expect(host.warnings()).toEqual([])
  })
})
