// SPEC §17 and §18 over real HTTP and SSE: the review offers a fresh session and the --models ids, the answer's
// handoff is checked against that offer, an approval with a model switches this session's next steps, one with a
// fresh session starts a new session there (listed, announced on every stream, linked from the old one) whose first
// turn runs with the chosen model and ticks the plan's steps with update_plan; a restart keeps the chosen model.
import { cpSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chooseModels } from '@planmode/demo/model-choice'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { sampleWorkspaceDir } from '../../server/options.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import { call, cleanup, post, readLog, SseClient, startTestServer, tempDir, turnEnded, waitForEvent } from './support.js'

const MODELS = ['fast', 'careful']
const models = () => chooseModels(MODELS, { offline: true }, RECOMMENDED_PLAN_SECTION)

const servers: WebServer[] = []
const streams: SseClient[] = []
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
const schema = freshSchemaName('web_handoff')
afterAll(async () => {
  cleanup()
  await dropSchema(pgTestUrl(), schema)
})

async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<WebServer> {
  const server = await startTestServer({ models: models(), ...options })
  servers.push(server)
  return server
}

async function open(server: WebServer, id: string, from = -1): Promise<SseClient> {
  const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=${from}`)
  streams.push(stream)
  return stream
}

/** A new session, `/plan Add due dates to tasks`, and its review question once it is asked. */
async function reviewed(server: WebServer) {
  const id = (await post(server, '/api/sessions', {})).body.id as string
  const stream = await open(server, id)
  await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
  const question = (await stream.waitFor((item) => item.event === 'question')).data
  return { id, stream, question }
}

const answer = (server: WebServer, id: string, qid: string, body: Record<string, unknown>) =>
  post(server, `/api/sessions/${id}/questions/${qid}`, { answers: [{ id: 'plan-review', ...body }] })

const headers = (events: readonly SessionEvent[]) => events.flatMap((event) => (event.type === 'request/header' ? [event.data.model] : []))
const updates = (events: readonly SessionEvent[]) =>
  events.flatMap((event) =>
    event.type === 'assistant/message'
      ? event.data.content.flatMap((block) => (block.type === 'tool-call' && block.toolName === 'update_plan' ? [block.input] : []))
      : [],
  )

describe('the review offers a handoff', () => {
  it('a fresh session (always) and the --models ids; without --models only the fresh session', async () => {
    const server = await start()
    const { question } = await reviewed(server)
    expect(question.request.questions[0].intent.handoff).toEqual({ fresh: true, models: MODELS })
    const plain = await start({ models: undefined })
    const other = await reviewed(plain)
    expect(other.question.request.questions[0].intent.handoff).toEqual({ fresh: true, models: [] })
  })

  it('an answer choosing what was not offered is a 400 and the question stays open', async () => {
    const server = await start()
    const { id, question, stream } = await reviewed(server)
    const before = (await call(server, 'GET', `/api/sessions/${id}`)).body.events.length
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ selected: ['Approve'], handoff: { model: 'slow' } }, /handoff\.model: "slow" is not a model the question offers/],
      [{ selected: ['Approve'], handoff: { model: 'FAST' } }, /"FAST" is not a model the question offers/],
      [{ selected: ['Approve'], handoff: { fresh: 'yes' } }, /handoff\.fresh must be a boolean/],
      [{ selected: ['Approve'], handoff: { model: 3 } }, /handoff\.model must be a string/],
      [{ selected: ['Approve'], handoff: { fresh: true, later: 1 } }, /handoff has an unknown member "later"/],
      [{ selected: ['Approve'], handoff: [true] }, /handoff must be an object \{ fresh\?, model\? \}/],
    ]
    for (const [body, message] of refused) {
      const reply = await answer(server, id, question.id, body)
      expect(reply.status, JSON.stringify(body)).toBe(400)
      expect(reply.body.error).toMatch(message)
    }
    // Nothing was logged and the question is still open: a valid answer closes it.
    const page = (await call(server, 'GET', `/api/sessions/${id}`)).body
    expect(page.events).toHaveLength(before)
    expect(page.questions.map((pending: { id: string }) => pending.id)).toEqual([question.id])
    expect((await answer(server, id, question.id, { selected: ['Stop planning'] })).status).toBe(200)
    await waitForEvent(stream, turnEnded(1))
  })

  it('a server started without a fresh-session offer is not possible to fool: a handoff on a question that offers none is refused', async () => {
    const server = await start()
    const id = (await post(server, '/api/sessions', {})).body.id as string
    const stream = await open(server, id)
    // The enter_plan_mode question offers no handoff.
    await post(server, `/api/sessions/${id}/prompt`, { text: "Let's plan first: add due dates to tasks" })
    const question = (await stream.waitFor((item) => item.event === 'question')).data
    const reply = await post(server, `/api/sessions/${id}/questions/${question.id}`, {
      answers: [
        { id: question.request.questions[0].id, selected: [question.request.questions[0].options[0].label], handoff: { fresh: true } },
      ],
    })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toMatch(/offers no handoff/)
  })
})

describe('approving with a handoff', () => {
  it('with a model only: this session goes on with it from its next step, and keeps it across a restart', async () => {
    const sessionDir = tempDir('planmode-web-handoff-')
    const server = await start({ sessionDir })
    const { id, question, stream } = await reviewed(server)
    expect((await answer(server, id, question.id, { selected: ['Approve'], handoff: { model: 'careful', fresh: false } })).status).toBe(200)
    await waitForEvent(stream, turnEnded(1))
    const log = readLog(sessionDir, id)
    const record = log.find((event) => event.type === 'plan/review')!
    expect(record.data).toEqual({ toolCallId: expect.any(String), outcome: 'approved', handoff: { model: 'careful' } })
    // Planned with the default model, carried out with the chosen one (the header records the change).
    const models = headers(log)
    expect(models[0]).toBe('planmode-offline:planner-1')
    expect(models.at(-1)).toBe('planmode-offline:careful')
    const switched = log.findIndex((event) => event.type === 'request/header' && event.data.model === 'planmode-offline:careful')
    expect(switched).toBeGreaterThan(log.indexOf(record))
    // The sessionModel frames: the choice as soon as it is recorded, then the model the header says.
    const frames = stream.frames()
    const chosen = frames.find((frame) => frame.values.sessionModel.chosen === 'careful')!
    expect(chosen.asOfSeq).toBe(record.seq)
    expect(chosen.values.sessionModel.model).toBe('planmode-offline:planner-1')
    expect(frames.at(-1)!.values.sessionModel).toEqual({ model: 'planmode-offline:careful', chosen: null })
    // Tracked in this session: every step done.
    expect(frames.at(-1)!.values.planProgress).toMatchObject({ done: 5, total: 5, active: null })

    // A restart on the same folder: the reopened agent keeps the chosen model (no header back to the default).
    await servers.splice(0).at(0)!.close()
    const again = await start({ sessionDir })
    const resumed = await open(again, id)
    await post(again, `/api/sessions/${id}/prompt`, { text: 'thanks' })
    await waitForEvent(resumed, turnEnded(2))
    expect(headers(readLog(sessionDir, id)).at(-1)).toBe('planmode-offline:careful')
    const page = (await call(again, 'GET', `/api/sessions/${id}`)).body
    expect(page.snapshot.values.sessionModel).toEqual({ model: 'planmode-offline:careful', chosen: null })
  })

  it('with a fresh session and a model: a new session starts there, announced, listed and linked, and carries out the plan with that model', async () => {
    const server = await start()
    const { id, question, stream } = await reviewed(server)
    // Another session's stream hears of the new session too (every tab refreshes its list).
    const elsewhere = (await post(server, '/api/sessions', {})).body.id as string
    const other = await open(server, elsewhere)
    expect((await answer(server, id, question.id, { selected: ['Approve'], handoff: { fresh: true, model: 'fast' } })).status).toBe(200)
    const link = await waitForEvent(stream, (event) => event.type === 'web/handed-off')
    const fresh = (link.data as { session: string }).session
    const record = stream.events().find((event) => event.type === 'plan/review')!
    expect(record.data).toMatchObject({ outcome: 'approved', handoff: { fresh: true, model: 'fast' } })
    expect(link.data).toEqual({ toolCallId: (record.data as { toolCallId: string }).toolCallId, session: fresh })
    // The approving turn stopped at once: no step after the approval's, nothing carried out here.
    const old = stream.events()
    const end = old.findIndex((event) => event.type === 'turn/end')
    expect(old.slice(old.indexOf(record), end).filter((event) => event.type === 'step/start')).toEqual([])
    expect(old.findIndex((event) => event.type === 'web/handed-off')).toBeGreaterThan(end)
    expect(
      old
        .flatMap((event) => (event.type === 'assistant/message' ? event.data.content : []))
        .some((block) => block.type === 'tool-call' && block.toolName === 'edit_file'),
    ).toBe(false)
    for (const client of [stream, other])
      expect((await client.waitFor((item) => item.event === 'sessions' && item.data.created === fresh)).data).toEqual({
        created: fresh,
        from: id,
      })
    // Listed under its plan's title (it has no message of its own).
    expect((await call(server, 'GET', '/api/sessions')).body.sessions.find((row: { id: string }) => row.id === fresh)).toMatchObject({
      open: true,
      title: 'Plan: due dates for tasks',
    })
    // The old session tracks nothing (the plan is tracked where it went) and still talks to the default model.
    expect(stream.frames().at(-1)!.values.planProgress).toEqual({ plan: null, steps: [], done: 0, total: 0, active: null })
    expect(stream.frames().at(-1)!.values.sessionModel).toEqual({ model: 'planmode-offline:planner-1', chosen: null })

    // The fresh session: plan/handoff first, its first turn with the chosen model, its steps ticked one batch at a time.
    const next = await open(server, fresh)
    await waitForEvent(next, turnEnded(1))
    const events = next.events()
    expect(events[0]).toMatchObject({
      type: 'plan/handoff',
      data: {
        from: { session: id, toolCallId: (record.data as { toolCallId: string }).toolCallId },
        model: 'fast',
        title: 'Plan: due dates for tasks',
      },
    })
    expect(events.some((event) => event.type === 'demo/workspace')).toBe(true)
    expect(headers(events)).toEqual(['planmode-offline:fast'])
    const forms = events.flatMap((event) =>
      event.type === 'user/message' && event.data.source.kind === 'plugin' ? [event.data.source.form] : [],
    )
    expect(forms).toEqual(['handoff', 'progress'])
    expect(updates(events)).toEqual([
      { updates: [{ step: 1, status: 'in_progress' }] },
      {
        updates: [
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
          { step: 3, status: 'done' },
          { step: 4, status: 'in_progress' },
        ],
      },
      {
        updates: [
          { step: 4, status: 'done' },
          { step: 5, status: 'done' },
        ],
      },
    ])
    const written = events.flatMap((event) =>
      event.type === 'tool/result' && ['edit_file', 'write_file'].includes(event.data.toolName) ? [event.data.isError] : [],
    )
    expect(written.length).toBeGreaterThan(0)
    expect(written.every((isError) => !isError)).toBe(true)
    // Its checklist: the plan's five steps, one in progress at a time, then all done.
    const lists = events.flatMap((event) => (event.type === 'plan/progress' ? [event.data.steps.map((step) => step.status)] : []))
    expect(lists).toEqual([
      ['in_progress', 'pending', 'pending', 'pending', 'pending'],
      ['done', 'done', 'done', 'in_progress', 'pending'],
      ['done', 'done', 'done', 'done', 'done'],
    ])
    const last = next.frames().at(-1)!.values
    expect(last.planProgress).toMatchObject({ plan: { title: 'Plan: due dates for tasks' }, done: 5, total: 5, active: null })
    expect(last.sessionModel).toEqual({ model: 'planmode-offline:fast', chosen: null })
  })

  it('a fresh session whose server died before its first request is reopened on the chosen model (the log has no header yet)', async () => {
    const sessionDir = tempDir('planmode-web-handoff-dead-')
    const server = await start({ sessionDir })
    const { id, question, stream } = await reviewed(server)
    expect((await answer(server, id, question.id, { selected: ['Approve'], handoff: { fresh: true, model: 'fast' } })).status).toBe(200)
    const fresh = ((await waitForEvent(stream, (event) => event.type === 'web/handed-off')).data as { session: string }).session
    await waitForEvent(await open(server, fresh), turnEnded(1))
    await servers.splice(0).at(0)!.close()
    // The log as a process that died before its first request would have left it: nothing from the first header on.
    const log = readLog(sessionDir, fresh)
    const kept = log.slice(
      0,
      log.findIndex((event) => event.type === 'request/header'),
    )
    expect(kept[0]).toMatchObject({ type: 'plan/handoff', data: { model: 'fast' } })
    writeFileSync(join(sessionDir, `${fresh}.jsonl`), kept.map((event) => `${JSON.stringify(event)}\n`).join(''))
    const again = await start({ sessionDir })
    const resumed = await open(again, fresh)
    expect((await post(again, `/api/sessions/${fresh}/prompt`, { text: 'go on' })).status).toBe(202)
    await waitForEvent(resumed, turnEnded(2))
    expect(headers(readLog(sessionDir, fresh))).toEqual(['planmode-offline:fast'])
  })

  it('over PostgreSQL: another server follows both sessions live, and takes the new one over with its chosen model', async () => {
    const store = { connection: pgTestUrl(), schema }
    // One workspace for both servers, as servers sharing a database should have: the system prompt is the same on both.
    const workspace = join(tempDir('planmode-web-handoff-ws-'), 'ws')
    cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
    const writer = await start({ sessionDir: undefined, store, workspace, leaseCheckMs: 100 })
    const follower = await start({ sessionDir: undefined, store, workspace, leaseCheckMs: 100 })
    const { id, question } = await reviewed(writer)
    const watching = await open(follower, id)
    expect((await answer(writer, id, question.id, { selected: ['Approve'], handoff: { fresh: true, model: 'fast' } })).status).toBe(200)
    // The follower's tab on the old session gets the link through the database.
    const link = await waitForEvent(watching, (event) => event.type === 'web/handed-off')
    const fresh = (link.data as { session: string }).session
    const next = await open(follower, fresh)
    await waitForEvent(next, turnEnded(1))
    const page = (await call(follower, 'GET', `/api/sessions/${fresh}`)).body
    expect(page).toMatchObject({ role: 'follower', holder: writer.host.self })
    expect(page.events[0]).toMatchObject({ type: 'plan/handoff', data: { from: { session: id }, model: 'fast' } })
    expect(page.snapshot.values.planProgress).toMatchObject({ done: 5, total: 5 })
    expect(page.snapshot.values.sessionModel).toEqual({ model: 'planmode-offline:fast', chosen: null })
    // The writer stops; a message on the follower takes the new session over, and its agent keeps fast.
    await servers.splice(servers.indexOf(writer), 1)[0]!.close()
    expect((await post(follower, `/api/sessions/${fresh}/prompt`, { text: 'thanks' })).status).toBe(202)
    await waitForEvent(next, turnEnded(2))
    const after = (await call(follower, 'GET', `/api/sessions/${fresh}?tail=100000`)).body
    expect(after.role).toBe('writer')
    // No header since the first: the taken-over agent sends to fast, with the same system text and tools.
    expect(headers(after.events)).toEqual(['planmode-offline:fast'])
  })
})
