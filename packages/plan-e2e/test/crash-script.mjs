// What both crash children (crash-child.mjs over JSONL, pg-crash-child.mjs
// over PostgreSQL) share: the seeded generator, the plan layers, and the
// endless scripted work — turns, `read` calls, `/plan` selections idle and
// mid-turn, reviews approved or refused, the model asking to enter plan mode.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'

/** mulberry32: a seeded generator, so a failing round can be replayed. */
export function seeded(seedText) {
  let seed = Number(seedText) >>> 0
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A context with the reference host (`host` is its store's part of the config) and every plan layer, over a scripted model. */
export function composeCrashHost(host) {
  const quiet = {
    debug() {},
    info() {},
    warn() {},
    error(message) {
      process.stderr.write(`${message}\n`)
    },
  }
  const root = new Context({ logger: quiet })
  const model = createScriptedModel([])
  root.plugin(hostPlugin, { ...host, model, maxSteps: 6, retryDelayMs: 0 })
  root.plugin(planModeInvariantPlugin)
  root.plugin(planCorePlugin)
  root.plugin(planPolicyPlugin, { section: 'PLAN MODE: explore and present a plan.' })
  root.plugin(planCommandsPlugin)
  root.plugin(planToolPlugin)
  root.plugin(planProjectionPlugin)
  return { root, model }
}

/** Registers the `read` tool and a scripted reviewer, then works the agent's session until the process is killed (or its parent is gone). */
export async function workForever({ root, model, agent, random }) {
  const planMode = root.require('planMode')
  const commands = root.require('commands')
  root.require('tools').register({
    name: 'read',
    description: 'Reads a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `contents of ${path}: ${'x'.repeat(Math.floor(random() * 300))}`,
  })
  root.require('userQuestions').registerProvider({
    async ask({ questions }) {
      if (questions[0]?.id === 'plan-enter') return [{ id: 'plan-enter', selected: [random() < 0.7 ? 'Enter plan mode' : 'Not now'] }]
      if (random() < 0.7) return [{ id: 'plan-review', selected: ['Approve'] }]
      return [{ id: 'plan-review', selected: [], custom: 'add a rollback step' }]
    },
  })

  const toggle = () => {
    const { active, pending } = planMode.get(agent)
    return (pending ?? active) ? '/plan off' : random() < 0.5 ? '/plan' : '/plan sketch the change first'
  }

  let call = 0
  const respond = async () => {
    call += 1
    // A selection mid-turn, while the request is in flight (applies at the next accepted pre-step).
    if (random() < 0.25) await commands.execute({ agent, line: toggle() })
    const roll = random()
    if (planMode.get(agent).active && roll < 0.5) {
      return {
        text: 'Here is the plan.',
        toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: `# Plan ${call}\n\n- read\n- change\n- test` } }],
      }
    }
    // The model asks to plan (a silent entry when the user agrees, applied at the next step).
    if (!planMode.get(agent).active && roll < 0.15)
      return { toolCalls: [{ toolName: 'enter_plan_mode', input: { reason: `task ${call} is risky` } }] }
    if (roll < 0.75) return { toolCalls: [{ toolName: 'read', input: { path: `src/file-${call}.ts` } }] }
    return { text: `done with request ${call}` }
  }

  // The parent kills this process; should the parent die first, stop rather than write on for nobody.
  const parent = process.ppid
  for (let turn = 0; ; turn += 1) {
    if (process.ppid !== parent) process.exit(3)
    if (model.remaining < 10) model.push(...Array.from({ length: 20 }, () => respond))
    // An idle selection (committed now), or a turn.
    // A `/plan <message>` steers the message, which starts a turn: wait for it.
    if (random() < 0.3) await commands.execute({ agent, line: toggle() })
    else await agent.prompt(`task ${turn}: look around`)
    await agent.idle()
  }
}
