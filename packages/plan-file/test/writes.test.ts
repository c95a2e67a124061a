import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { afterEach, describe, expect, it } from 'vitest'
import { fileHost, removeTemp } from './support.js'

afterEach(removeTemp)

/** What the reader thread checks every read against (the same text as in concurrent-reader.mjs). */
const body = (rev: number, size: number) => `# Revision ${rev}\n\n${String(rev % 10).repeat(size)}\n`
const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

interface ReaderSummary {
  readonly reads: number
  readonly missing: number
  readonly missingAfter: number
  readonly bad: readonly string[]
  readonly seen: readonly number[]
}

function startReader(file: string, session: string, size: number) {
  const shared = new SharedArrayBuffer(8)
  const flags = new Int32Array(shared)
  const worker = new Worker(new URL('./concurrent-reader.mjs', import.meta.url), { workerData: { file, shared, session, size } })
  const summary = new Promise<ReaderSummary>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  return {
    /** Waits until the reader has read revision `rev` (or a later one) whole. */
    async saw(rev: number): Promise<void> {
      while (Atomics.load(flags, 1) < rev) await tick()
    },
    async stop(): Promise<ReaderSummary> {
      Atomics.store(flags, 0, 1)
      const result = await summary
      await worker.terminate()
      return result
    },
  }
}

describe('atomic writes (a temporary file in dir, then a rename)', () => {
  it('a concurrent reader never sees a partly written file: every read is one whole revision, and revisions never go back', async () => {
    const host = fileHost()
    const session = await host.session()
    const size = 512 * 1024
    const reader = startReader(host.service().pathOf(session.id), session.id, size)
    try {
      // One revision at a time, each read by the reader before the next is written…
      for (let rev = 1; rev <= 12; rev++) {
        await host.present(session, body(rev, size))
        await host.settled()
        await reader.saw(rev)
      }
      // …then bursts of revisions written while the reader reads.
      for (let burst = 0; burst < 4; burst++) {
        await Promise.all(Array.from({ length: 8 }, (_, at) => host.present(session, body(13 + burst * 8 + at, size))))
        await host.settled()
        await reader.saw(12 + (burst + 1) * 8)
      }
    } finally {
      const summary = await reader.stop()
      expect(summary.bad).toEqual([])
      expect(summary.reads).toBeGreaterThan(0)
      // Once written, the file is always there: each rename replaces it in one step.
      expect(summary.missingAfter).toBe(0)
      expect(summary.seen.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_, at) => at + 1))
      expect([...summary.seen].sort((a, b) => a - b)).toEqual(summary.seen)
    }
    expect(host.read(session)).toContain(`rev: 44\n`)
    expect(host.strays()).toEqual([])
    expect(host.warnings()).toEqual([])
  })
})

describe('writes of one session are serialised, the last change winning', () => {
  it('a burst of changes ends with the latest revision in the file, and nothing else in the folder', async () => {
    const host = fileHost()
    const session = await host.session()
    await Promise.all(Array.from({ length: 200 }, (_, at) => host.present(session, `# Revision ${at + 1}\n\nstep ${at + 1}`)))
    await host.settled()
    expect(host.read(session)).toBe(
      `---\nsession: ${JSON.stringify(session.id)}\nrev: 200\nstatus: "open"\ntitle: "Revision 200"\n---\n# Revision 200\n\nstep 200`,
    )
    expect(readdirSync(host.dir)).toEqual([`${session.id}.md`])
  })

  it('changes that arrive while a write runs are written after it, once, as the log says then', async () => {
    const host = fileHost({ progress: true })
    const session = await host.session()
    const id = await host.present(session, '# First')
    // The write of revision 1 has begun; these land while it runs.
    const pending = [
      host.review(session, id, 'approved', { plan: '# First, edited' }),
      host.progress(session, id, [{ step: 1, text: 'a', status: 'done' }]),
    ]
    await Promise.all(pending)
    await host.settled()
    expect(host.read(session)).toBe(
      `---\nsession: ${JSON.stringify(session.id)}\nrev: 1\nstatus: "approved"\ntitle: "First"\nprogress: "1/1"\n---\n# First, edited`,
    )
  })

  it('many sessions changing at once each end with their own latest revision', async () => {
    const host = fileHost()
    const sessions = await Promise.all(Array.from({ length: 12 }, () => host.session()))
    await Promise.all(sessions.flatMap((session, s) => Array.from({ length: 15 }, (_, at) => host.present(session, `# S${s} R${at + 1}`))))
    await host.settled()
    sessions.forEach((session, s) => expect(host.read(session)).toContain(`rev: 15\nstatus: "open"\ntitle: "S${s} R15"\n---\n# S${s} R15`))
    expect(readdirSync(host.dir).sort()).toEqual(sessions.map((session) => `${session.id}.md`).sort())
  })

  it('settled() with nothing due resolves at once; it waits for writes that are due when called', async () => {
    const host = fileHost()
    await host.settled()
    const session = await host.session()
    await host.present(session, '# One')
    const settled = host.settled()
    await host.present(session, '# Two')
    await settled
    await host.settled()
    expect(host.read(session)).toContain('rev: 2\n')
    expect(join(host.dir, `${session.id}.md`)).toBe(host.service().pathOf(session.id))
  })
})
