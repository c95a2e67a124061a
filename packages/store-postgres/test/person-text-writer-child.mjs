// A writer for person-text.test.ts, run with plain `node` over the BUILT
// packages (`pnpm build` first); the database comes from env PLANMODE_PG_URL,
// the review it asks from env PLANMODE_TEST_REVIEW (JSON).
//
//   node person-text-writer-child.mjs <schema> <sessionId> <mode>
//
// It composes the reference host over PostgreSQL, creates the session, asks
// one plan review through the user-questions runtime and prints
// `asked <questionId>` once the question is committed. Modes: `wait` answers
// nothing itself (only another process's answer settles the ask) and prints
// `answered <json>`; `local` answers at its own terminal when the parent
// writes `local`, prints `rejected <code>` when the ask rejects, then, when
// the parent writes `next`, appends an event and prints `appended`.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { asPostgresStore, postgresSessions } from '@planmode/store-postgres'

const [schema, id, mode] = process.argv.slice(2)
const connection = process.env.PLANMODE_PG_URL
if (connection === undefined || connection === '') throw new Error('person-text-writer-child: PLANMODE_PG_URL is not set')
const quiet = { debug() {}, info() {}, warn() {}, error() {} }
const root = new Context({ logger: quiet })
root.plugin(hostPlugin, {
  sessions: postgresSessions({ connection, schema, holder: `person-text-${process.pid}`, poolSize: 2, answerPollMs: 100 }),
  model: createScriptedModel([]),
  retryDelayMs: 0,
})
const store = asPostgresStore(root.require('sessions'))
const session = await store.create({ id })
root.on('session/event', ({ event }) => {
  if (event.type === 'question/asked') process.stdout.write(`asked ${event.data.questionId}\n`)
})
const lines = []
let heard
process.stdin.on('data', (chunk) => {
  lines.push(...String(chunk).split('\n').filter(Boolean))
  heard?.()
})
const next = (word) =>
  new Promise((resolve) => {
    const look = () => {
      const at = lines.indexOf(word)
      if (at >= 0) {
        lines.splice(at, 1)
        resolve()
      } else heard = look
    }
    look()
  })
root.require('userQuestions').registerProvider({
  ask: ({ signal }) =>
    new Promise((resolve, reject) => {
      if (mode === 'local')
        void next('local').then(() => resolve([{ id: 'plan-review', selected: ['Keep planning'], custom: 'answered at the terminal' }]))
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    }),
})
// The review to ask, as the parent test passes it (testkit's REVIEW_QUESTION).
const review = JSON.parse(process.env.PLANMODE_TEST_REVIEW)
const agent = { id: 'writer-agent', session, steer() {}, async inject() {} }
try {
  const answers = await root.require('userQuestions').ask({ agent, questions: [review] })
  process.stdout.write(`answered ${JSON.stringify(answers)}\n`)
} catch (error) {
  process.stdout.write(`rejected ${error.code ?? error.message}\n`)
  await next('next')
  await session.append('test/event', { turn: 1 })
  process.stdout.write('appended\n')
}
await store.end()
process.stdin.destroy()
