// A host process that presents a plan for review and then waits on the review forever, until it is killed.
// Run with plain `node` against the BUILT packages (`pnpm build` first):
//   node question-child.mjs <dir> <sessionId>
// It prints `asked <questionId>` once the review's question/asked is logged and the provider holds it.
import { composeCrashHost } from './crash-script.mjs'

const [dir, id] = process.argv.slice(2)
const { root, model } = composeCrashHost({ dir, durability: 'append' })
const sessions = root.require('sessions')
const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
const agent = root.require('agents').create({ session })

root.require('userQuestions').registerProvider({
  ask() {
    const asked = session.events.findLast((event) => event.type === 'question/asked')
    process.stdout.write(`asked ${asked?.data.questionId}\n`)
    // Nobody answers: the parent kills this process while the review is open.
    return new Promise(() => {})
  },
})
// Should the parent die first, stop rather than wait for nobody.
const parent = process.ppid
setInterval(() => process.ppid !== parent && process.exit(3), 500)

const turns = session.events.filter((event) => event.type === 'turn/start').length
model.push({
  text: 'Here is the plan.',
  toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: `# Plan ${turns + 1}\n\n1. read\n2. change` } }],
})
if (!root.require('planMode').get(agent).active) await root.require('commands').execute({ agent, line: '/plan' })
await agent.prompt(`round ${turns + 1}: present a plan`)
