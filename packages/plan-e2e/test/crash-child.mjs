// A scripted host that appends to one JSONL session until it is killed.
// Run with plain `node` against the BUILT packages (`pnpm build` first):
//   node crash-child.mjs <dir> <sessionId> <durability> <seed>
// It prints `ready` once the session is open and then the seq of every event
// appended to it (after the append resolved), one per line.
import { composeCrashHost, seeded, workForever } from './crash-script.mjs'

const [dir, id, durability, seedText] = process.argv.slice(2)
const random = seeded(seedText)
const { root, model } = composeCrashHost({ dir, durability })

const sessions = root.require('sessions')
const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
const agent = root.require('agents').create({ session })

root.on('session/event', ({ session: changed, event }) => {
  if (changed === session) process.stdout.write(`${event.seq}\n`)
})

process.stdout.write('ready\n')
await workForever({ root, model, agent, random })
