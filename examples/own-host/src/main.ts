// `pnpm --filter @planmode/example-own-host start`: runs the scripted plan-mode arc offline and prints its log.
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { describeEvent, runArc } from './arc.js'

const { host, agent, model } = await runArc()
for (const event of agent.session.events) console.log(describeEvent(event))
model.requests.forEach((request, index) => {
  const guided = request.prompt.some((message) => message.role === 'system' && message.content.includes(RECOMMENDED_PLAN_SECTION))
  console.log(`request ${index + 1}: plan guidance in the system prompt: ${guided ? 'yes' : 'no'}`)
})
console.log(`plan projection: ${JSON.stringify(host.ctx.require('sessionProjections').snapshot(agent.session).values.plan)}`)
host.dispose()
