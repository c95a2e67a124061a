// One plan-mode arc, offline: /plan, a prompt, the review. Put your host in place of createOwnHost.
import { createConformanceModel } from '@planmode/host-conformance'
import { approvingReviewer, createOwnHost } from '../src/index.js'

const model = createConformanceModel([
  { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: '# Add a --verbose flag\n\n1. Parse it in src/cli.ts.' } }] },
  { text: 'Carrying out the plan.' },
])
const host = createOwnHost({ model, questions: approvingReviewer })
const agent = host.agent(await host.session())
await host.command(agent, '/plan') // idle: plan mode is on at once
await agent.prompt('add a --verbose flag') // step 1 presents the plan, the reviewer approves, step 2 carries it out
const { plan, planHistory } = host.ctx.require('sessionProjections').snapshot(agent.session).values
console.log(
  plan,
  planHistory?.revisions.map((revision) => revision.status),
) // { active: false, pending: false } [ 'approved' ]
console.log(model.requests.length, host.ctx.require('planMode').get(agent)) // 2 { active: false }
host.dispose()
