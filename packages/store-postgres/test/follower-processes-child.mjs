// One process of the follower test (follower-processes.test.ts), run with plain
// `node` over the BUILT packages (`pnpm build` first). The database comes from
// env PLANMODE_PG_URL.
//
//   node follower-processes-child.mjs writer <schema> <sessionId>
//   node follower-processes-child.mjs follower <schema> <sessionId> <name>
//
// Every stdout line is one JSON object. Times (`at`) are wall-clock
// milliseconds with a fraction, comparable across processes on one machine.
//
// writer: composes the reference host over PostgreSQL with every plan layer
// and a scripted model, creates the session, prints {kind:'created', asOfSeq,
// values} (its snapshot of the empty session) and waits for `go` on stdin.
// Then it drives a plan-mode arc through the agent loop and prints
// {kind:'event', seq, at, asOfSeq, values} for every appended event, `at` the
// time its commit was acknowledged (the store announces the events of a commit
// together, once the database answered it). Halfway it prints {kind:'half', head} and
// waits for `continue`. At the end it prints {kind:'done', head, events} and
// exits.
//
// follower: composes the store, the projection registry and the same plan
// layers (no agent, no model), prints {kind:'ready'} and follows the session.
// It prints {kind:'event', seq, at, asOfSeq, values} for every `session/event`
// it receives, `at` read once its projections folded the event, then
// {kind:'open', seqs, asOfSeq, values} once follow() resolved (`seqs`: every
// event it holds then). On `until <seq>` it waits for that seq, prints
// {kind:'final', events}, ends the store and exits.
import { createInterface } from 'node:readline'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin, sessionProjectionsPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import { asPostgresStore, postgresSessions, postgresSessionsPlugin } from '@planmode/store-postgres'

const [role, schema, id, name = role] = process.argv.slice(2)
const connection = process.env.PLANMODE_PG_URL
if (connection === undefined || connection === '') throw new Error('follower-processes-child: PLANMODE_PG_URL is not set')

/**
 * Wall-clock milliseconds with sub-millisecond resolution. `performance.now()`
 * is monotonic and fine-grained but starts at each process's own origin;
 * adding `performance.timeOrigin` (the wall-clock time of that origin) puts
 * every process on the machine on one clock, so a time printed here can be
 * subtracted from a time printed by another process.
 */
const wallClock = () => performance.timeOrigin + performance.now()

const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`)

/** Lines from the test, one at a time. */
const input = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const nextLine = async () => {
  const { value, done } = await input.next()
  if (done) throw new Error(`follower-processes-child (${name}): stdin closed`)
  return value.trim()
}

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
const SECTION = 'PLAN MODE: explore, do not change anything, present a plan with exit_plan_mode.'

/** The plan layers, composed as plan-e2e's plan-host does (plan-core first). */
function planLayers(root) {
  root.plugin(planCorePlugin)
  root.plugin(planPolicyPlugin, { section: SECTION })
  root.plugin(planCommandsPlugin)
  root.plugin(planToolPlugin)
  root.plugin(planProjectionPlugin)
  root.plugin(planHistoryPlugin)
}

if (role === 'writer') await writer()
else if (role === 'follower') await follower()
else throw new Error(`follower-processes-child: unknown role ${role}`)

async function writer() {
  const root = new Context({ logger: quiet })
  const model = createScriptedModel([])
  root.plugin(hostPlugin, { sessions: postgresSessions({ connection, schema, holder: 'writer' }), model, maxSteps: 8, retryDelayMs: 0 })
  root.plugin(planModeInvariantPlugin)
  planLayers(root)
  const store = asPostgresStore(root.require('sessions'))
  const projections = root.require('sessionProjections')
  const session = await store.create({ id })
  const agent = root.require('agents').create({ session })
  const commands = root.require('commands')

  // The time of the acknowledgment: a batch of appends commits in one statement and its events are
  // announced one after the other in one synchronous run, so the first one's time stands for the batch
  // (the later ones would otherwise also count the listeners of the earlier ones).
  let ackedAt
  root.on('session/event', ({ session: changed, event }) => {
    if (changed !== session) return
    if (ackedAt === undefined) {
      ackedAt = wallClock()
      queueMicrotask(() => (ackedAt = undefined))
    }
    const at = ackedAt
    const { asOfSeq, values } = projections.snapshot(session)
    print({ kind: 'event', seq: event.seq, at, asOfSeq, values })
  })

  const tools = root.require('tools')
  tools.register({
    name: 'read',
    description: 'Reads a file.',
    annotations: { readOnlyHint: true },
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `contents of ${path}`,
  })
  tools.register({
    name: 'write',
    description: 'Writes a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `wrote ${path}`,
  })
  /** Answers of plan reviews, in order; an entry question is always accepted. */
  const reviews = []
  root.require('userQuestions').registerProvider({
    async ask({ questions }) {
      if (questions[0]?.id === 'plan-enter') return [{ id: 'plan-enter', selected: ['Enter plan mode'] }]
      const next = reviews.shift()
      if (next === undefined) throw new Error('follower-processes-child: no review answer scripted')
      return next
    },
  })
  const approve = [{ id: 'plan-review', selected: ['Approve'] }]
  const keepPlanning = (feedback) => [{ id: 'plan-review', selected: [], custom: feedback }]

  /** A short pause between actions, so followers see commits one at a time rather than in one burst. */
  const pause = () => new Promise((resolve) => setTimeout(resolve, 15))
  const turn = async (text, ...responses) => {
    model.push(...responses)
    await agent.prompt(text)
    await agent.idle()
    await pause()
  }
  const command = async (line, ...responses) => {
    model.push(...responses)
    await commands.execute({ agent, line })
    await agent.idle()
    await pause()
  }
  const read = (path) => ({ toolCalls: [{ toolName: 'read', input: { path } }] })
  const write = (path) => ({ toolCalls: [{ toolName: 'write', input: { path } }] })
  const exit = (plan) => ({ text: 'Here is the plan.', toolCalls: [{ toolName: 'exit_plan_mode', input: { plan } }] })

  const round = async (n) => {
    await turn(`round ${n}: look around`, read(`src/a-${n}.ts`), read(`src/b-${n}.ts`), { text: `found the entry point (${n})` })
    await command('/plan')
    reviews.push(keepPlanning(`round ${n}: add a rollback step`))
    await turn(`round ${n}: plan the change`, read(`src/c-${n}.ts`), exit(`# Plan ${n}\n\n- change a\n- test`), {
      text: 'I will add the rollback step.',
    })
    reviews.push(approve)
    await turn(
      `round ${n}: revise it`,
      exit(`# Plan ${n}, revised\n\n- change a\n- roll back on failure\n- test`),
      write(`src/a-${n}.ts`),
      { text: `changed src/a-${n}.ts` },
    )
    // `/plan <message>`: plan mode on, and the message starts a turn.
    reviews.push(keepPlanning(`round ${n}: smaller steps`))
    await command(`/plan round ${n}: sketch the follow-up`, read(`src/d-${n}.ts`), exit(`# Follow-up ${n}\n\n- one big step`), {
      text: 'Splitting it up.',
    })
    await command('/plan off')
    // A `/plan` selected mid-turn, while a request is in flight: pending until the next step.
    const midTurn = async () => {
      await commands.execute({ agent, line: '/plan' })
      return write(`src/d-${n}.ts`)
    }
    await turn(`round ${n}: finish`, midTurn, { text: `round ${n} done` })
    await command('/plan off')
    // The model asks to plan; the user agrees; the plan is approved.
    reviews.push(approve)
    await turn(
      `round ${n}: risky part`,
      { toolCalls: [{ toolName: 'enter_plan_mode', input: { reason: `round ${n} is risky` } }] },
      read(`src/e-${n}.ts`),
      exit(`# Risky ${n}\n\n- guard it`),
      { text: 'Approved; going ahead.' },
    )
    await command('/plan off')
  }

  print({ kind: 'created', ...projections.snapshot(session) })
  if ((await nextLine()) !== 'go') throw new Error('writer: expected go')
  await round(1)
  await round(2)
  const head = () => session.events[session.events.length - 1].seq
  await session.settled?.()
  print({ kind: 'half', head: head() })
  if ((await nextLine()) !== 'continue') throw new Error('writer: expected continue')
  await round(3)
  await round(4)
  if (model.remaining !== 0 || reviews.length !== 0)
    throw new Error(`writer: ${model.remaining} responses and ${reviews.length} reviews left over: the script and the loop disagree`)
  print({ kind: 'done', head: head(), events: session.events })
  await store.end()
  process.exit(0)
}

async function follower() {
  const root = new Context({ logger: quiet })
  root.plugin(postgresSessionsPlugin, { connection, schema, holder: name })
  root.plugin(sessionProjectionsPlugin)
  planLayers(root)
  const store = asPostgresStore(root.require('sessions'))
  const projections = root.require('sessionProjections')
  // Registered before follow(): the events it reads while catching up are announced before it resolves.
  root.on('session/event', ({ session, event }) => {
    if (session.id !== id) return
    const { asOfSeq, values } = projections.snapshot(session)
    const at = wallClock()
    print({ kind: 'event', seq: event.seq, at, asOfSeq, values })
  })
  print({ kind: 'ready' })
  const followed = await store.follow(id)
  const { asOfSeq, values } = projections.snapshot(followed)
  print({ kind: 'open', seqs: followed.events.map((event) => event.seq), asOfSeq, values })
  const line = await nextLine()
  const until = /^until (\d+)$/.exec(line)
  if (until === null) throw new Error(`follower: expected "until <seq>", got ${JSON.stringify(line)}`)
  await followed.reached(Number(until[1]))
  print({ kind: 'final', events: followed.events })
  await store.end()
  process.exit(0)
}
