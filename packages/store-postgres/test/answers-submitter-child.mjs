// A submitter for answers-processes.test.ts, run with plain `node` over the BUILT
// packages; the database comes from env PLANMODE_PG_URL.
//
//   node answers-submitter-child.mjs <schema> <sessionId> <questionId> <label> <by>
//
// It prints `ready` once loaded and connected, submits its answer when the
// parent writes a line on stdin, prints `result <json>` and exits.
import { postgresAnswers } from '@planmode/store-postgres'

const [schema, id, questionId, label, by] = process.argv.slice(2)
const answers = postgresAnswers({ connection: process.env.PLANMODE_PG_URL, schema, pollMs: 100 })
await answers.questions(id)
process.stdout.write('ready\n')
process.stdin.once('data', async () => {
  const result = await answers.submit({ sessionId: id, questionId, answers: [{ id: 'plan-review', selected: [label] }], by: { id: by } })
  process.stdout.write(`result ${JSON.stringify(result)}\n`)
  await answers.end()
  process.stdin.destroy()
})
