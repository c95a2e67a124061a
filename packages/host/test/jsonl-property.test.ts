import { mkdtemp, readFile, rm, truncate } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { sessionStorePlugin } from '@planmode/host'
import { recordingLogger } from './helpers.js'

describe('JSONL repair (property)', () => {
  it('reopening a log cut at any byte keeps exactly the whole lines before the cut, and repairs the file', async () => {
    const data = fc.oneof(fc.string(), fc.integer(), fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 3 }), fc.constant(null))
    await fc.assert(
      fc.asyncProperty(
        fc.array(data, { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (values, where) => {
          const dir = await mkdtemp(join(tmpdir(), 'planmode-prop-'))
          try {
            const writer = new Context({ logger: recordingLogger() })
            writer.plugin(sessionStorePlugin, { dir, durability: 'never' })
            const session = await writer.require('sessions').create({ id: 'p' })
            for (const value of values) await session.append('test/value' as never, { value } as never)
            await writer.require('sessions').close(session)
            const lines = session.events.map((event) => JSON.stringify(event) + '\n')
            const bytes = Buffer.from(lines.join(''))
            const cut = Math.floor(where * bytes.length)
            await truncate(session.file!, cut)

            const reader = new Context({ logger: recordingLogger() })
            reader.plugin(sessionStorePlugin, { dir })
            const reopened = await reader.require('sessions').open('p')
            // Whole lines before the cut survive; a line missing only its newline survives too.
            let kept = 0
            let offset = 0
            for (const line of lines) {
              const length = Buffer.byteLength(line)
              if (offset + length - 1 <= cut) kept += 1
              offset += length
            }
            expect(reopened.events).toEqual(session.events.slice(0, kept))
            expect(await readFile(session.file!, 'utf8')).toBe(lines.slice(0, kept).join(''))
            reader.dispose()
          } finally {
            await rm(dir, { recursive: true, force: true })
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})
