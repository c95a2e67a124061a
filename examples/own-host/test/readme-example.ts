import { approvingReviewer, createOwnHost, createScriptedModel } from '@planmode/example-own-host'

const host = createOwnHost({ model: createScriptedModel([{ text: 'Exploring first.' }]), questions: approvingReviewer })
const agent = host.agent(await host.session())
await host.command(agent, '/plan sketch the migration') // plan mode on; the message starts a turn
await agent.idle()
console.log(host.ctx.require('sessionProjections').snapshot(agent.session).values.plan) // { active: true, pending: false }
host.dispose()
