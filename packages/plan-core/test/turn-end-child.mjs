// A host with plan-core over one JSONL session, killed by its parent at a
// chosen moment of an approval (SPEC §22.2). Plain `node` over the BUILT
// packages (`pnpm build` first):
//   node turn-end-child.mjs <dir> <sessionId> <before-turn-end|after-turn-end>
// It prints `approved` once the review record and the silent exit are in
// (before-turn-end: the tool then never returns, so the turn stays open), or
// `turn ended` once the `turn/end` is in the file, before plan-core's
// listener can append what that turn end commits (after-turn-end: the
// process then blocks). Either way it waits to be killed.
import { writeSync } from 'node:fs'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'

const [dir, id, when] = process.argv.slice(2)
const say = (line) => writeSync(1, `${line}\n`)
const logger = {
  debug() {},
  info() {},
  warn(message) {
    process.stderr.write(`${message}\n`)
  },
  error(message) {
    process.stderr.write(`${message}\n`)
  },
}
const root = new Context({ logger })
const model = createScriptedModel([])
root.plugin(hostPlugin, { dir, durability: 'append', model, maxSteps: 1, retryDelayMs: 0 })
// Registered before plan-core, so it runs first: the process stops with the turn/end in the file and nothing after it.
root.on('session/event', ({ event }) => {
  if (when !== 'after-turn-end' || event.type !== 'turn/end') return
  say('turn ended')
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
})
root.plugin(planCorePlugin)
const planMode = root.require('planMode')
root.require('tools').register({
  name: 'exit_plan_mode',
  description: 'Presents the plan; the stand-in reviewer approves it.',
  parameters: { type: 'object', properties: {} },
  async execute(_input, { agent, toolCallId }) {
    await agent.session.append('plan/review', { toolCallId, outcome: 'approved' })
    planMode.exitAtBoundary(agent)
    if (when === 'before-turn-end') {
      say('approved')
      await new Promise(() => {})
    }
    return { approved: true }
  },
})
const session = await root.require('sessions').create({ id })
const agent = root.require('agents').create({ session })
await planMode.set(agent, true)
model.push({ toolCalls: [{ toolName: 'exit_plan_mode', input: {} }] })
await agent.prompt('plan it')
say('turn done') // not reached in either mode
