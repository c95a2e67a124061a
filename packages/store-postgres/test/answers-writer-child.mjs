// A writer for answers-processes.test.ts, run with plain `node` over the BUILT
// packages (`pnpm build` first); the database comes from env PLANMODE_PG_URL,
// the review it asks from env PLANMODE_TEST_REVIEW (JSON).
//
//   node answers-writer-child.mjs <schema> <sessionId> <mode>
//
// It composes the reference host over PostgreSQL, opens the session (or
// creates it), asks one plan review through the user-questions runtime with a
// provider that answers only when the parent writes `local` on stdin, and
// prints `asked <questionId>` once the question is committed and `answered
// <json>` when the ask resolves. Modes: `kill-before-log` SIGKILLs itself when
// it is about to commit the settlement of an answer another process sent (the
// invariant runs before the statement); `kill-after-log` once that settlement
// is committed, before the submitter hears back; `plain` does neither.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { asPostgresStore, postgresSessions } from '@planmode/store-postgres'

const [schema, id, mode] = process.argv.slice(2)
const connection = process.env.PLANMODE_PG_URL
if (connection === undefined || connection === '') throw new Error('answers-writer-child: PLANMODE_PG_URL is not set')
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
root.plugin(hostPlugin, {
  sessions: postgresSessions({ connection, schema, holder: `answers-writer-${process.pid}`, poolSize: 2, answerPollMs: 100 }),
  model: createScriptedModel([]),
  retryDelayMs: 0,
})
const store = asPostgresStore(root.require('sessions'))
let session
for (;;) {
  try {
    session = (await store.list()).includes(id) ? await store.open(id) : await store.create({ id })
    break
  } catch (error) {
    // The lease of a writer killed a moment ago goes once the server sees its connection close.
    if (error.code !== 'LOCKED') throw error
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
let mine
const remote = (event) => event.type === 'question/settled' && event.data.questionId === mine && event.data.submission !== undefined
if (mode === 'kill-before-log')
  root.require('sessionInvariants').register('kill', (event) => {
    if (remote(event)) process.kill(process.pid, 'SIGKILL')
  })
if (mode === 'kill-after-log')
  root.on('session/event', ({ event }) => {
    if (remote(event)) process.kill(process.pid, 'SIGKILL')
  })
root.on('session/event', ({ event }) => {
  if (event.type === 'question/asked') process.stdout.write(`asked ${(mine = event.data.questionId)}\n`)
})
let answerLocally
process.stdin.on('data', (chunk) => {
  if (String(chunk).includes('local')) answerLocally?.()
})
root.require('userQuestions').registerProvider({
  ask: ({ signal }) =>
    new Promise((resolve, reject) => {
      answerLocally = () => resolve([{ id: 'plan-review', selected: ['Keep planning'], custom: 'answered at the terminal' }])
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    }),
})
// The review to ask, as the parent test passes it (testkit's REVIEW_QUESTION).
const review = JSON.parse(process.env.PLANMODE_TEST_REVIEW)
const agent = { id: 'writer-agent', session, steer() {}, async inject() {} }
const answers = await root.require('userQuestions').ask({ agent, questions: [review] })
process.stdout.write(`answered ${JSON.stringify(answers)}\n`)
await store.end()
process.stdin.destroy()
