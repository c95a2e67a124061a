// A reader in its own thread: reads the plan file over and over, as fast as it
// can, until the test sets the stop flag. Every read must be a whole version
// (what `expected(rev)` says the file of that revision is) or no file at all.
// It publishes the highest rev it has read in shared memory, so the test can
// wait until a version was seen, and posts a summary when it stops.
import { readFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'

const { file, shared, session, size } = workerData
const flags = new Int32Array(shared) // [0] stop, [1] highest rev read
const body = (rev) => `# Revision ${rev}\n\n${String(rev % 10).repeat(size)}\n`
const expected = (rev) =>
  `---\nsession: ${JSON.stringify(session)}\nrev: ${rev}\nstatus: "open"\ntitle: ${JSON.stringify(`Revision ${rev}`)}\n---\n${body(rev)}`

let reads = 0
let missing = 0
let missingAfter = 0
const bad = []
const seen = []
while (Atomics.load(flags, 0) === 0) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if (error.code !== 'ENOENT') throw error
    missing += 1
    if (reads > 0) missingAfter += 1
    continue
  }
  reads += 1
  const rev = Number(/^rev: (\d+)$/m.exec(text)?.[1])
  if (!Number.isInteger(rev) || text !== expected(rev)) {
    if (bad.length < 5) bad.push(text.slice(0, 120) + ` … (${text.length} characters)`)
    continue
  }
  if (seen.at(-1) !== rev) seen.push(rev)
  if (rev > Atomics.load(flags, 1)) Atomics.store(flags, 1, rev)
}
parentPort.postMessage({ reads, missing, missingAfter, bad, seen })
