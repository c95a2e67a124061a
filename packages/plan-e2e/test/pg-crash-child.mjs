// A scripted host that writes one PostgreSQL session until it is killed: the
// PostgreSQL twin of crash-child.mjs. Run with plain `node` against the BUILT
// packages (`pnpm build` first), the server's URL in PLANMODE_PG_URL:
//   node pg-crash-child.mjs <schema> <sessionId> <holder> <seed> <target> [report]
// It opens the existing session as its one writer, retrying while another
// process holds the lease (a killed writer's lease goes once the server sees
// its connection close), and prints, one per line:
//   `locked`                 once, if the first open found the lease held;
//   `open <json>`            once the lease is taken: the head it reopened at,
//                            how long it waited, and the plan state it rebuilt;
//   `<seq>`                  every event appended to the session, after its
//                            commit was acknowledged.
// <target> steers where the child SIGKILLs itself, right after an event is
// acknowledged: `plan` (a /plan whose command/run is logged, its command/done
// not), `exit` (an approved plan review not applied yet), `entry` (an agreed
// enter_plan_mode not applied yet), or `none` (the parent kills it).
// With `report` it only opens, prints `open`, closes and exits.
import { asPostgresStore, postgresSessions } from '@planmode/store-postgres'
import { composeCrashHost, seeded, workForever } from './crash-script.mjs'

const [schema, id, holder, seedText, target, report] = process.argv.slice(2)
const connection = process.env.PLANMODE_PG_URL
if (!connection) throw new Error('pg-crash-child: PLANMODE_PG_URL is not set')

const random = seeded(seedText)
const { root, model } = composeCrashHost({ sessions: postgresSessions({ connection, schema, holder }) })

const store = asPostgresStore(root.require('sessions'))
if (store === undefined) throw new Error('pg-crash-child: service sessions is not the PostgreSQL store')

// Take the lease: LOCKED while the previous writer's connection is still alive.
// No deadline of its own: the parent bounds each wait by its work and kills
// this process when it gives up; if the parent is gone, so is this process.
const started = Date.now()
const parent = process.ppid
let retries = 0
let session
for (;;) {
  try {
    session = await store.open(id)
    break
  } catch (error) {
    if (error?.code !== 'LOCKED') throw error
    if (retries === 0) process.stdout.write('locked\n')
    retries += 1
    if (process.ppid !== parent)
      throw new Error(`pg-crash-child: the test process went away while session ${id} stayed LOCKED: ${error.message}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}
const waitedMs = Date.now() - started
// What this writer reopened: read before the agent closes a turn its predecessor left open.
const head = session.events.length === 0 ? -1 : session.events[session.events.length - 1].seq

// Print acknowledged seqs, and kill this process at the targeted moment.
// The target arms only after a random number of acknowledged events, so the logs differ in shape.
let armAfter = Math.floor(random() * 40)
const atReviewRecord = random() < 0.5
const hit = (event) => {
  const data = event.data
  if (target === 'plan') return event.type === 'command/run' && data.name === 'plan'
  if (target === 'exit') {
    // Half at the review record (before the tool result), half at the approved tool result.
    return atReviewRecord
      ? event.type === 'plan/review' && data.outcome === 'approved'
      : event.type === 'tool/result' && data.toolName === 'exit_plan_mode' && data.isError === false && data.value?.approved === true
  }
  if (target === 'entry')
    return event.type === 'tool/result' && data.toolName === 'enter_plan_mode' && data.isError === false && data.value?.entered === true
  return false
}
root.on('session/event', ({ session: changed, event }) => {
  if (changed !== session) return
  process.stdout.write(`${event.seq}\n`) // synchronous on a pipe (Linux): the parent has the line before the kill
  if (armAfter > 0) armAfter -= 1
  else if (hit(event)) process.kill(process.pid, 'SIGKILL')
})

const agent = root.require('agents').create({ session })
const state = root.require('planMode').get(agent)
const projected = root.require('sessionProjections').snapshot(session).values.plan
process.stdout.write(`open ${JSON.stringify({ head, waitedMs, retries, epoch: session.epoch, state, projected })}\n`)
if (report === 'report') {
  await agent.idle()
  await store.close(session)
  await store.end()
  process.exit(0)
}

await workForever({ root, model, agent, random })
