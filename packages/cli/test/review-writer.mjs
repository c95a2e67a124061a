// The writer of cli.test.ts: the reference host with plan-core and plan-tool
// over a scripted model that presents a plan with exit_plan_mode, run with
// plain `node` over the BUILT packages (`pnpm build` first).
//
//   node review-writer.mjs dir <folder> <sessionId> <rounds>
//   node review-writer.mjs postgres <schema> <sessionId> <rounds>     (env PLANMODE_PG_URL)
//   node review-writer.mjs dir <folder> <sessionId> 1 hostile
//
// Each round it enters plan mode and prompts the agent, whose model calls
// exit_plan_mode; the review waits (its provider never answers: only an
// answer from another process, `planmode answer`, settles it). It prints
// `asked <questionId>` once the review is in the log, then, when the turn
// ends, `result <json>` with the tool result's text and whether plan mode
// is still on. After the last round it closes the session and exits.
//
// `hostile` first asks one question of its own whose header, text, detail
// and labels hold terminal escapes and a bidirectional override (printing
// it raw would clear the screen or reorder the line), and prints
// `answered <json>` once it is answered; its review's plan title has an
// escape too. What `planmode` prints of them must show them escaped.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planToolPlugin } from '@planmode/plan-tool'
import { postgresSessions } from '@planmode/store-postgres'

const [kind, where, id, rounds, mode] = process.argv.slice(2)
const hostile = mode === 'hostile'
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
const model = createScriptedModel([])
const store =
  kind === 'dir'
    ? { dir: where, durability: 'append' }
    : { sessions: postgresSessions({ connection: process.env.PLANMODE_PG_URL, schema: where, answerPollMs: 100 }) }
root.plugin(hostPlugin, { ...store, model, retryDelayMs: 0 })
root.plugin(planCorePlugin)
root.plugin(planToolPlugin)
root.require('userQuestions').registerProvider({
  ask: ({ signal }) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true })),
})
root.on('session/event', ({ event }) => {
  if (event.type === 'question/asked') process.stdout.write(`asked ${event.data.questionId}\n`)
})
const sessions = root.require('sessions')
const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
const agent = root.require('agents').create({ session })
const planMode = root.require('planMode')
const plan = `# Add ${hostile ? '\x1b[2J' : ''}a login page\n\n1. Read the routes\n2. Add the form\n3. Test it`
if (hostile) {
  const question = {
    id: 'deploy',
    header: 'Deploy\x1b[2J',
    question: 'Ship it now?\u202e',
    detail: 'to production\x1b]0;pwned\x07\nsecond line',
    options: [{ label: 'Yes\x1b[31m' }, { label: 'No' }],
  }
  const answers = await root.require('userQuestions').ask({ agent, questions: [question] })
  process.stdout.write(`answered ${JSON.stringify(answers)}\n`)
}
for (let round = 1; round <= Number(rounds); round++) {
  if (!planMode.get(agent).active) await planMode.set(agent, true)
  model.push({ text: 'Here is the plan.', toolCalls: [{ toolName: 'exit_plan_mode', input: { plan } }] }, { text: 'Understood.' })
  await agent.prompt(`round ${round}: plan the login page`)
  const result = session.events.findLast((event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode')
  process.stdout.write(
    `result ${JSON.stringify({ isError: result?.data.isError, text: result?.data.content?.map((part) => part.text).join(''), active: planMode.get(agent).active })}\n`,
  )
}
await sessions.close(session)
root.dispose()
