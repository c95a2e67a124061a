import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SessionEvent } from '@planmode/seams'
import { assertBuilt } from '@planmode/testkit'
import type { PostgresSession, PostgresSessionStore } from '../src/index.js'
import { append, pgFile, plain } from './support/stores.js'

// A writer that reopens a session whose last turn is open closes it at open
// (`step/end` for an open step, then `turn/end` reason `interrupted`), through
// the normal commit path, so every follower and later reader sees at once
// that the turn is over. A follower never writes.

const here = dirname(fileURLToPath(import.meta.url))
const childFile = join(here, 'interrupted-turn-child.mjs')
const db = pgFile('interrupted')

beforeAll(() => {
  assertBuilt('interrupted-turn test', ['context', 'seams', 'host', 'store-postgres'])
})

async function rows(id: string): Promise<SessionEvent[]> {
  const found = await db.admin<{ seq: string; time: number; type: string; data: unknown }>(
    `SELECT seq, time, type, data FROM "${db.schema}".events WHERE session_id = $1 ORDER BY seq`,
    [id],
  )
  return found.map((row) => ({ type: row.type, seq: Number(row.seq), time: row.time, data: row.data }) as SessionEvent)
}

const shape = (events: readonly SessionEvent[]) => events.map((event) => ({ type: event.type, data: event.data }))

/** Opens `id` in `store` once the lease a killed process held has gone (the server frees it as soon as it sees the backend's socket close). */
async function openWhenFree(store: PostgresSessionStore, id: string): Promise<PostgresSession> {
  for (;;) {
    try {
      return await store.open(id)
    } catch (error) {
      if ((error as { code?: string }).code !== 'LOCKED') throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

/** Runs the child writer on session `id` until it is mid-turn, then SIGKILLs it; resolves with the head it reported. */
async function killMidTurn(id: string): Promise<number> {
  const child = spawn(process.execPath, [childFile, db.schema, id], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PLANMODE_PG_URL: db.url() },
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
  const head = await new Promise<number>((resolve, reject) => {
    let buffered = ''
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const line = buffered.split('\n').find((text) => text.includes('"mid-turn"'))
      if (line !== undefined) resolve((JSON.parse(line) as { head: number }).head)
    })
    void exited.then(() => reject(new Error(`the child writer exited before it was mid-turn:\n${stderr}`)))
  })
  child.kill('SIGKILL')
  expect(await exited).toBe('SIGKILL')
  return head
}

describe('the next writer closes the turn a dead writer left open', () => {
  it("a writer SIGKILLed mid-turn: the next writer's open closes it (step/end, turn/end interrupted), a follower sees the closure live, later readers see it", async () => {
    const id = 'killed-mid-turn'
    const maker = db.process().store
    await maker.close(await maker.create({ id }))
    const head = await killMidTurn(id)
    const left = await rows(id)
    expect(left.at(-1)!.seq).toBe(head)
    const types = left.map((event) => event.type)
    expect(types.filter((type) => type === 'turn/start')).toHaveLength(1)
    expect(types).not.toContain('turn/end')
    expect(types.at(-1)).toBe('assistant/message')
    const step = left.findLast((event) => event.type === 'step/start')!.data as { turn: number; step: number }
    expect(types.lastIndexOf('step/start')).toBeGreaterThan(types.lastIndexOf('step/end'))

    // A follower in another process follows the open turn, and writes nothing.
    const watcher = db.process({ holder: 'watcher' })
    const follower = await watcher.store.follow(id)
    const live: string[] = []
    watcher.ctx.on('session/event', ({ session, event }) => {
      if (session === follower) live.push(event.type)
    })
    expect(plain(follower.events)).toEqual(plain(left))
    expect(await rows(id)).toHaveLength(left.length)
    expect(watcher.logger.lines.filter((line) => line.level === 'warn')).toEqual([])

    // The next writer (another process) takes the free lease; its open closes the turn.
    const next = db.process({ holder: 'next-writer' })
    const session = await openWhenFree(next.store, id)
    expect(session.epoch).toBe(3)
    expect(shape(session.events.slice(left.length))).toEqual([
      { type: 'step/end', data: { turn: step.turn, step: step.step } },
      { type: 'turn/end', data: { turn: step.turn, reason: 'interrupted' } },
    ])
    expect(next.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringContaining(`closing turn ${step.turn} of session ${id}, left open by a process that ended mid-turn`),
    ])
    // The follower sees the closure as it commits, each event announced.
    await follower.reached(session.events.at(-1)!.seq)
    expect(plain(follower.events)).toEqual(plain(session.events))
    expect(live).toEqual(['step/end', 'turn/end'])
    // And so does every later reader.
    expect(plain(await rows(id))).toEqual(plain(session.events))
    await next.store.close(session)
    const again = await db.process().store.open(id)
    expect(plain(again.events)).toEqual(plain(session.events))
  })

  it('a turn left open with no step open gets only turn/end; a closed log gets nothing; a follower of an open turn writes nothing', async () => {
    const a = db.process().store
    const open = await a.create({ id: 'open-no-step' })
    await append(open, 'turn/start', { turn: 4 })
    await append(open, 'step/start', { turn: 4, step: 1 })
    await append(open, 'step/end', { turn: 4, step: 1 })
    const closed = await a.create({ id: 'closed-turn' })
    await append(closed, 'turn/start', { turn: 1 })
    await append(closed, 'turn/end', { turn: 1, reason: 'completed' })
    await a.end()

    const reader = db.process()
    const follower = await reader.store.follow('open-no-step')
    expect(follower.events).toHaveLength(3)
    expect(await rows('open-no-step')).toHaveLength(3)

    const b = db.process()
    const reopened = await b.store.open('open-no-step')
    expect(shape(reopened.events.slice(3))).toEqual([{ type: 'turn/end', data: { turn: 4, reason: 'interrupted' } }])
    await follower.reached(3)
    expect(plain(follower.events)).toEqual(plain(reopened.events))
    const untouched = await b.store.open('closed-turn')
    expect(untouched.events.map((event) => event.type)).toEqual(['turn/start', 'turn/end'])
    expect(await rows('closed-turn')).toHaveLength(2)
    expect(b.logger.lines.filter((line) => line.level === 'warn')).toHaveLength(1)
  })

  it('a closing append the database refuses is a warning: the session opens all the same, the turn still open', async () => {
    await db.admin(`
      CREATE FUNCTION "${db.schema}".refuse_interrupted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.session_id = 'refused-close' AND NEW.type = 'turn/end' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
        RETURN NEW;
      END $$`)
    await db.admin(
      `CREATE TRIGGER refuse_interrupted BEFORE INSERT ON "${db.schema}".events FOR EACH ROW EXECUTE FUNCTION "${db.schema}".refuse_interrupted()`,
    )
    const a = db.process().store
    const session = await a.create({ id: 'refused-close' })
    await append(session, 'turn/start', { turn: 1 })
    await a.end()
    const b = db.process()
    const reopened = await b.store.open('refused-close')
    expect(reopened.events.map((event) => event.type)).toEqual(['turn/start'])
    expect(b.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringContaining('closing turn 1 of session refused-close'),
      expect.stringMatching(/could not close the interrupted turn of session refused-close: .*refused by the test trigger/),
    ])
    // The session is usable: the next append lands.
    expect((await append(reopened, 'custom/x', {})).seq).toBe(1)
  })
})
