// The store reads a log in chunks of about 1 MiB (issue 19: peak memory of
// a large open). These logs are a few MiB, so lines, multi-byte characters,
// a bad byte, a line longer than a chunk and a torn tail fall across the
// chunk boundaries.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { storeContext } from './helpers.js'

const MiB = 1024 * 1024
let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-jsonl-chunks-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const event = (seq: number, text: string) => ({ type: 'user/message', seq, time: 1000 + seq, data: { content: [{ type: 'text', text }] } })
const lineOf = (seq: number, text: string): string => JSON.stringify(event(seq, text)) + '\n'
// Text with one-, two-, three- and four-byte UTF-8 characters, so a chunk boundary can fall inside one.
const piece = 'plan é 計画 🗺 '

/** Events whose lines add up to about `bytes`, their lengths from `lengths` in turn. */
function log(bytes: number, lengths: readonly number[]): { text: string; events: ReturnType<typeof event>[] } {
  const events: ReturnType<typeof event>[] = []
  let size = 0
  for (let seq = 0; size < bytes; seq++) {
    const length = lengths[seq % lengths.length]!
    const text = piece.repeat(Math.ceil(length / piece.length)).slice(0, length)
    events.push(event(seq, text))
    size += Buffer.byteLength(lineOf(seq, text))
  }
  return { text: events.map((e) => JSON.stringify(e) + '\n').join(''), events }
}

describe('JSONL logs read in chunks', () => {
  it('a log of several chunks, with lines of any length across the boundaries (one longer than a chunk), reopens equal and untouched', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 40_000 }), { minLength: 1, maxLength: 8 }), async (lengths) => {
        const { text, events } = log(2.2 * MiB, [...lengths, 2.5 * MiB])
        const file = join(dir, 'big.jsonl')
        await writeFile(file, text)
        const { ctx, sessions, logger } = storeContext({ dir })
        const session = await sessions.open('big')
        expect(session.events).toEqual(events)
        expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([])
        expect(await readFile(file, 'utf8')).toBe(text)
        ctx.dispose()
      }),
      { numRuns: 4 },
    )
  })

  it('a byte that is not UTF-8 in the third MiB is named by its line', async () => {
    const { text, events } = log(3 * MiB, [700, 9_000, 130])
    const bytes = Buffer.from(text)
    // A line well into the third MiB: its first text byte becomes 0xff.
    let at = 0
    let line = 0
    while (at < 2.4 * MiB) {
      at = bytes.indexOf(0x0a, at) + 1
      line += 1
    }
    bytes[bytes.indexOf('"text":"', at) + 8] = 0xff
    await writeFile(join(dir, 'bad.jsonl'), bytes)
    const { sessions } = storeContext({ dir })
    await expect(sessions.open('bad')).rejects.toMatchObject({
      code: 'CORRUPT_LINE',
      line: line + 1,
      message: expect.stringContaining('not valid UTF-8'),
    })
    expect(events.length).toBeGreaterThan(line + 1)
  })

  it('a seq out of order past the first chunk is named by its line', async () => {
    const { events } = log(1.5 * MiB, [5_000])
    const lines = events.map((e) => JSON.stringify(e) + '\n')
    const swap = lines.length - 3
    ;[lines[swap], lines[swap + 1]] = [lines[swap + 1]!, lines[swap]!]
    await writeFile(join(dir, 'order.jsonl'), lines.join(''))
    const { sessions } = storeContext({ dir })
    await expect(sessions.open('order')).rejects.toMatchObject({ code: 'SEQ_ORDER', line: swap + 2 })
  })

  it('a torn last line after several chunks is dropped and cut off; one missing only its newline is kept', async () => {
    const { text, events } = log(2.5 * MiB, [3_000, 70_000])
    const last = lineOf(events.length, 'the last one')
    await writeFile(join(dir, 'torn.jsonl'), text + last.slice(0, 20))
    await writeFile(join(dir, 'whole.jsonl'), text + last.slice(0, -1))
    const { sessions, logger } = storeContext({ dir })
    const torn = await sessions.open('torn')
    expect(torn.events).toEqual(events)
    expect(await readFile(join(dir, 'torn.jsonl'), 'utf8')).toBe(text)
    const whole = await sessions.open('whole')
    expect(whole.events).toEqual([...events, event(events.length, 'the last one')])
    expect(await readFile(join(dir, 'whole.jsonl'), 'utf8')).toBe(text + last)
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      expect.stringContaining(`torn.jsonl:${events.length + 1}: dropped a torn last line (20 bytes,`),
      expect.stringContaining(`whole.jsonl:${events.length + 1}: the last line had no newline; it parses whole, so it was kept`),
    ])
  })
})
