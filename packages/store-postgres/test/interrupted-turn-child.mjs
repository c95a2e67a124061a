// The writer that dies mid-turn in interrupted-turn.test.ts, run with plain
// `node` over the BUILT packages (`pnpm build` first). The database comes from
// env PLANMODE_PG_URL.
//
//   node interrupted-turn-child.mjs <schema> <sessionId>
//
// It composes the reference host over PostgreSQL, opens the session (the
// parent created it) and prompts an agent whose scripted model calls a tool
// that never returns. Once the tool runs (the turn and its step are open in
// the log) it prints one JSON line {kind:'mid-turn', head} and waits to be
// killed.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { asPostgresStore, postgresSessions } from '@planmode/store-postgres'

const [schema, id] = process.argv.slice(2)
const connection = process.env.PLANMODE_PG_URL
if (connection === undefined || connection === '') throw new Error('interrupted-turn-child: PLANMODE_PG_URL is not set')

const quiet = {
  debug() {},
  info() {},
  warn(message) {
    process.stderr.write(`warn: ${message}\n`)
  },
  error(message) {
    process.stderr.write(`error: ${message}\n`)
  },
}
const root = new Context({ logger: quiet })
const model = createScriptedModel([{ text: 'Starting.', toolCalls: [{ toolName: 'wait', input: { what: 'the build' } }] }])
root.plugin(hostPlugin, { sessions: postgresSessions({ connection, schema, holder: 'killed-writer' }), model, retryDelayMs: 0 })
const store = asPostgresStore(root.require('sessions'))
const session = await store.open(id)
root.require('tools').register({
  name: 'wait',
  description: 'Waits for something; never returns.',
  parameters: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] },
  async execute() {
    await session.settled()
    process.stdout.write(`${JSON.stringify({ kind: 'mid-turn', head: session.events[session.events.length - 1].seq })}\n`)
    return new Promise(() => {})
  },
})
const agent = root.require('agents').create({ session })
void agent.prompt('build it')
