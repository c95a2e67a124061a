// SPEC §18 end to end, over both durable stores: the JSONL files of @planmode/host and PostgreSQL
// (@planmode/store-postgres, the run's server: PLANMODE_PG_URL, else the local one on 5432, else an embedded
// one started by the root global setup). A plan is explored, presented, approved with a fresh session on
// another model; the approving turn stops, the new session carries the plan out on that model, and a second
// host over the same store reads both sessions back and neither repeats nor loses anything.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { Context, type Plugin } from '@planmode/context'
import {
  createScriptedModel,
  hostPlugin,
  type AgentHandedOffPayload,
  type HostAgent,
  type HostSession,
  type ScriptedModel,
} from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin, type PlanReviewedPayload } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'
import { asPostgresStore, postgresSessions, setup } from '@planmode/store-postgres'
import { dropSchema, freshSchemaName, pgTestUrl, userTexts } from '@planmode/testkit'

const SECTION = 'PLAN MODE: explore, do not change anything, present a plan with exit_plan_mode.'
const PLAN = '# Cache the config\n\n## Steps\n\n1. Read the config once.\n2. Serve it from memory.\n'
const FRESH = 'The user approved the plan and will carry it out in a fresh session. Stop here: do not carry it out in this conversation.'
const HANDOFF_TEXT = `Carry out this approved plan:\n\n${PLAN}`

interface Store {
  readonly name: string
  /** The `sessions` plugin of one host over the store (a new one for each host). */
  sessions(): { readonly dir?: string; readonly sessions?: Plugin<void> }
  /** After a host is disposed: its store has released every session. */
  released(root: Context): Promise<void>
  /** The types of a session's events as the store holds them, read without the host. */
  stored(sessionId: string): Promise<string[]>
}

let dir: string
const schema = freshSchemaName('handoff')
let raw: pg.Client

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-e2e-handoff-'))
  await setup({ connection: pgTestUrl(), schema })
  raw = new pg.Client({ connectionString: pgTestUrl() })
  await raw.connect()
})

afterAll(async () => {
  await raw?.end()
  await dropSchema(pgTestUrl(), schema)
  await rm(dir, { recursive: true, force: true })
})

const stores: Store[] = [
  {
    name: 'the JSONL store',
    sessions: () => ({ dir }),
    released: async () => undefined,
    stored: async (id) => {
      const { readFile } = await import('node:fs/promises')
      return (await readFile(join(dir, `${id}.jsonl`), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as SessionEvent).type)
    },
  },
  {
    name: 'PostgreSQL',
    sessions: () => ({
      sessions: postgresSessions({ connection: pgTestUrl(), schema, holder: `handoff-${Math.random().toString(36).slice(2)}` }),
    }),
    released: async (root) => {
      await asPostgresStore(root.get('sessions'))?.end()
    },
    stored: async (id) =>
      (await raw.query<{ type: string }>(`SELECT type FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`, [id])).rows.map(
        (row) => row.type,
      ),
  },
]

/** One host over `store`: the whole reference host, every plan layer, plan-tool offering a fresh session and model `other`. */
function planHost(store: Store, main: ScriptedModel, other: ScriptedModel) {
  const root = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  root.plugin(hostPlugin, { ...store.sessions(), model: main, models: { other }, retryDelayMs: 0 })
  root.plugin(planCorePlugin)
  root.plugin(planPolicyPlugin, { section: SECTION })
  root.plugin(planCommandsPlugin)
  root.plugin(planToolPlugin, { handoff: { fresh: true, models: ['other'] } })
  root.plugin(planProjectionPlugin)
  root.plugin(planHistoryPlugin)
  root.require('tools').register<{ path: string }, string>({
    name: 'read',
    description: 'Reads a file.',
    annotations: { readOnlyHint: true },
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `contents of ${path}`,
  })
  root.require('userQuestions').registerProvider({
    ask: async () => [{ id: 'plan-review', selected: ['Approve'], handoff: { fresh: true, model: 'other' } }],
  })
  const reviewed: PlanReviewedPayload[] = []
  root.on('plan/reviewed', (payload) => void reviewed.push(payload))
  const handedOff: AgentHandedOffPayload[] = []
  root.on('agent/handed-off', (payload) => void handedOff.push(payload))
  return { root, reviewed, handedOff }
}

const typesOf = (events: readonly SessionEvent[]) => events.map((event) => event.type)
const of = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T) =>
  events.filter((event) => event.type === type) as unknown as SessionEvent<T>[]

describe.each(stores)('a handoff to a fresh session on another model, over $name', (store) => {
  it('the approving turn stops; the new session carries the plan out on the chosen model; a second host reads both back', async () => {
    const main = createScriptedModel(
      [
        { toolCalls: [{ toolName: 'read', input: { path: 'config.ts' } }] },
        { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: PLAN }, toolCallId: 'exit-1' }] },
      ],
      { modelId: 'main' },
    )
    const other = createScriptedModel(
      [{ toolCalls: [{ toolName: 'read', input: { path: 'config.ts' } }] }, { text: 'Done: the config is cached.' }],
      { modelId: 'other' },
    )
    const first = planHost(store, main, other)
    const sessions = first.root.require('sessions')
    const origin = first.root.require('agents').create({ session: await sessions.create() })
    await first.root.require('commands').execute({ agent: origin, line: '/plan' })
    const outcome = await origin.prompt('Cache the config.')

    // The approving turn: two steps (read, exit_plan_mode), then nothing more.
    expect(outcome).toMatchObject({ reason: 'completed', steps: 2 })
    expect(main.requests).toHaveLength(2)
    const result = of(origin.session.events, 'tool/result').find((event) => event.data.toolCallId === 'exit-1')!
    expect(result.data).toMatchObject({
      isError: false,
      value: { approved: true, handoff: { fresh: true, model: 'other' } },
      content: [{ type: 'text', text: FRESH }],
    })
    expect(of(origin.session.events, 'plan/review').map((event) => event.data)).toEqual([
      { toolCallId: 'exit-1', outcome: 'approved', handoff: { fresh: true, model: 'other' } },
    ])
    expect(first.reviewed).toEqual([
      { agent: origin, toolCallId: 'exit-1', outcome: 'approved', plan: PLAN, handoff: { fresh: true, model: 'other' } },
    ])

    // The fresh session: announced before the prompt resolved, its first turn on the other model.
    expect(first.handedOff).toHaveLength(1)
    const { agent: fresh, turn, from } = first.handedOff[0]!
    expect(from).toBe(origin)
    expect(await turn).toMatchObject({ turn: 1, reason: 'completed', steps: 2 })
    const events = fresh.session.events
    expect(events[0]).toMatchObject({
      seq: 0,
      type: 'plan/handoff',
      data: { from: { session: origin.session.id, toolCallId: 'exit-1' }, plan: PLAN, title: 'Cache the config', model: 'other' },
    })
    expect(typesOf(events).slice(0, 5)).toEqual(['plan/handoff', 'turn/start', 'user/message', 'request/header', 'step/start'])
    expect(of(events, 'user/message').map((event) => event.data.source)).toEqual([{ kind: 'plugin', plugin: 'plan-mode', form: 'handoff' }])
    expect(of(events, 'request/header').map((event) => event.data.model)).toEqual(['scripted:other'])
    expect(other.requests).toHaveLength(2)
    expect(userTexts(other.requests[0]!)).toEqual([HANDOFF_TEXT])
    expect(other.requests[0]!.prompt.some((message) => message.role === 'system' && String(message.content).includes(SECTION))).toBe(false)
    const planMode = first.root.require('planMode')
    expect(planMode.get(fresh)).toEqual({ active: false })
    expect(first.root.require('sessionProjections').snapshot(fresh.session).values.plan).toEqual({ active: false, pending: false })
    // The origin left plan mode silently, and its turn ended with the exit pending: plan-core logged it right
    // after that turn/end (SPEC §22.2), so the origin's log says off and every reader of it agrees.
    await (origin.session as HostSession).settled()
    expect(planMode.get(origin)).toEqual({ active: false })
    expect(typesOf(origin.session.events).slice(-2)).toEqual(['turn/end', 'plan/mode'])
    expect(of(origin.session.events, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'review' })
    expect(first.root.require('sessionProjections').snapshot(origin.session).values.plan).toEqual({ active: false, pending: false })

    // What the store holds is what the host logged.
    expect(await store.stored(fresh.session.id)).toEqual(typesOf(events))
    expect(await store.stored(origin.session.id)).toEqual(typesOf(origin.session.events))

    const originId = origin.session.id
    const freshId = fresh.session.id
    const freshLength = events.length
    first.root.dispose()
    await store.released(first.root)

    // A second host over the same store: the new session goes on without a second handoff message; the origin's exit applies.
    const main2 = createScriptedModel([{ text: 'Back in the first session.' }], { modelId: 'main' })
    const other2 = createScriptedModel([], { modelId: 'other' })
    const second = planHost(store, main2, other2)
    const reopened = await second.root.require('sessions').open(freshId)
    expect(reopened.events).toHaveLength(freshLength)
    const again: HostAgent = second.root.require('agents').create({ session: reopened, model: other2 })
    other2.push({ text: 'The tests pass too.' })
    await again.prompt('Run the tests as well.')
    expect(of(reopened.events, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toHaveLength(1)
    expect(userTexts(other2.requests[0]!)).toEqual([HANDOFF_TEXT, 'Run the tests as well.'])
    const originAgain = second.root.require('agents').create({ session: await second.root.require('sessions').open(originId) })
    expect(second.root.require('planMode').get(originAgain)).toEqual({ active: false })
    const modesBefore = of(originAgain.session.events, 'plan/mode').length
    await originAgain.prompt('What now?')
    const modes = of(originAgain.session.events, 'plan/mode').map((event) => event.data)
    expect(modes.at(-1)).toEqual({ active: false, cause: 'review' })
    expect(modes).toHaveLength(modesBefore)
    expect(second.handedOff).toEqual([])
    second.root.dispose()
    await store.released(second.root)
  })
})
