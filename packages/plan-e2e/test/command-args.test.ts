// §5/§7/§9: `command/run.args` is always a string ('' for a bare `/plan`), and both readers of a
// restarted host — plan-core's rebuild and the `plan` projection — depend on it.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ENTER_NOTICE, eventsOf, requestSystem, userTexts } from '@planmode/testkit'
import { SECTION, createPlanHost } from './plan-host.js'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** Types `line` during the turn's only step (after its pre-step), lets the turn end, and closes the host. */
async function selectMidTurnThenQuit(line: string) {
  const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-args-'))
  dirs.push(dir)
  const first = createPlanHost(undefined, [], { dir })
  const agent = await first.agent()
  first.model.push(async () => {
    expect(await first.command(agent, line)).toEqual({
      kind: 'success',
      text: 'Entering plan mode from the next step. Send /plan off to leave.',
    })
    return { text: 'answered without another step' }
  })
  await agent.prompt('look around')
  const run = eventsOf(agent.session, 'command/run')
  expect(run.map((event) => event.data.args)).toEqual([''])
  expect(first.root.require('planMode').get(agent)).toEqual({ active: false, pending: true })
  expect(eventsOf(agent.session, 'turn/end')).toHaveLength(1)
  const id = agent.session.id
  await first.root.require('sessions').close(agent.session) // the process quits: nothing more reaches the file
  first.root.dispose()
  const files = (await readdir(dir)).filter((name) => name.endsWith('.jsonl'))
  expect(files).toHaveLength(1)
  return { dir, id, file: join(dir, files[0]!) }
}

describe("§5 command/run.args is always a string; a restarted host rebuilds a bare /plan's selection", () => {
  it.each(['/plan', '/plan   '])(
    '%s typed mid-turn, the turn ends, the process restarts: plan-core and the projection both say pending',
    async (line) => {
      const { dir, id, file } = await selectMidTurnThenQuit(line)
      const jsonl = await readFile(file, 'utf8')
      const runLine = jsonl.split('\n').find((text) => text.includes('"command/run"'))!
      expect(JSON.parse(runLine).data.args).toBe('')

      const second = createPlanHost(undefined, [{ text: 'planning' }], { dir })
      const session = await second.root.require('sessions').open(id)
      expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: true })
      const resumed = await second.agent(session)
      expect(second.root.require('planMode').get(resumed)).toEqual({ active: false, pending: true })

      await resumed.prompt('continue')
      expect(requestSystem(second.model.requests[0]!)).toContain(SECTION)
      expect(userTexts(second.model.requests[0]!).at(-1)).toBe(ENTER_NOTICE)
      expect(second.root.require('planMode').get(resumed)).toEqual({ active: true })
      expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: true, pending: false })
      second.root.dispose()
    },
  )

  it('a log written before args was always logged (no args on the record) reads as no selection, for both readers (§7)', async () => {
    const { dir, id, file } = await selectMidTurnThenQuit('/plan')
    const jsonl = await readFile(file, 'utf8')
    const legacy = jsonl
      .split('\n')
      .map((text) => {
        if (!text.includes('"command/run"')) return text
        const event = JSON.parse(text)
        delete event.data.args
        return JSON.stringify(event)
      })
      .join('\n')
    expect(legacy).not.toBe(jsonl)
    await writeFile(file, legacy)

    const second = createPlanHost(undefined, [{ text: 'default mode' }], { dir })
    const session = await second.root.require('sessions').open(id)
    expect(eventsOf(session, 'command/run')[0]!.data).not.toHaveProperty('args')
    expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: false })
    const resumed = await second.agent(session)
    expect(second.root.require('planMode').get(resumed)).toEqual({ active: false })
    await resumed.prompt('continue')
    expect(eventsOf(session, 'plan/mode')).toEqual([])
    expect(requestSystem(second.model.requests[0]!)).not.toContain(SECTION)
    second.root.dispose()
  })
})
