import { readFile } from 'node:fs/promises'
import { Context } from '@planmode/context'
import { createDeepSeekModel } from '@planmode/host'
import { presetPlugin } from '@planmode/preset'

const root = new Context()
// The reference host (sessions as JSONL files in .sessions/), every plan layer, and plan-guard.
root.plugin(presetPlugin, { dir: '.sessions', model: createDeepSeekModel(), guard: true })
// Your tools: while plan mode is on, plan-guard lets only the read-only ones run.
root.require('tools').register<{ path: string }, string>({
  name: 'read_file',
  description: 'Reads a file of the project.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  annotations: { readOnlyHint: true },
  execute: ({ path }) => readFile(path, 'utf8'),
})
// Your review UI answers here; this one approves every plan as it stands.
root
  .require('userQuestions')
  .registerProvider({ ask: async ({ questions }) => questions.map((q) => ({ id: q.id, selected: [q.options[0]!.label] })) })

const agent = root.require('agents').create({ session: await root.require('sessions').create() })
const reply = await root.require('commands').execute({ agent, line: '/plan Add a --verbose flag to the CLI.' })
console.log(reply?.text) // Plan mode on. Send /plan off to leave.
await agent.idle() // it explores, presents a plan, the plan is approved, then carried out and tracked with update_plan
const { plan, planProgress } = root.require('sessionProjections').snapshot(agent.session).values
console.log(plan, planProgress?.done, planProgress?.total) // { active: false, pending: false } 2 2
root.dispose()
