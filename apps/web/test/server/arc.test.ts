import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { call, cleanup, PNG_1X1, post, readLog, SseClient, startTestServer, turnEnded, waitForEvent } from './support.js'

let server: WebServer
let sessionDir: string

beforeAll(async () => {
  server = await startTestServer()
  sessionDir = server.host.sessions.dir!
})

afterAll(async () => {
  await server.close()
  cleanup()
})

const texts = (event: SessionEvent): string => {
  if (event.type === 'user/message' || event.type === 'assistant/message' || event.type === 'tool/result') {
    return event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  }
  return ''
}

async function newSession(): Promise<string> {
  const created = await post(server, '/api/sessions', {})
  expect(created.status).toBe(201)
  return created.body.id as string
}

describe('the whole arc through HTTP and SSE', () => {
  it('/plan with a message, exploration, a review with feedback and a comment, a revision, an edited approval, the implementation', async () => {
    const id = await newSession()
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
    try {
      const entered = await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      expect(entered.status).toBe(200)
      expect(entered.body.result).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })

      // Exploration, shown as tool cards; the review arrives as a question.
      const first = (await stream.waitFor((item) => item.event === 'question')).data
      expect(first.sessionId).toBe(id)
      const [review] = first.request.questions
      expect(review.id).toBe('plan-review')
      expect(review.header).toBe('Plan review')
      expect(review.options.map((option: { label: string }) => option.label)).toEqual(['Approve', 'Keep planning', 'Stop planning'])
      expect(review.intent).toEqual({
        kind: 'plan-review',
        approve: 'Approve',
        keep: 'Keep planning',
        stop: 'Stop planning',
        editable: true,
        comments: true,
        handoff: { fresh: true, models: [] },
      })
      expect(review.detail).toMatch(/^# /)
      const appends = stream.items.filter((item) => item.event === 'append')
      const explored = appends.filter(
        (item) => item.data.event.type === 'tool/result' && item.data.event.data.toolName !== 'exit_plan_mode',
      )
      expect(explored.length).toBeGreaterThan(0)
      // The workspace tools present their calls only; their results have no card of their own.
      for (const item of explored) expect(item.data.presentation).toBeUndefined()
      const callCards = appends.flatMap((item) => Object.values(item.data.presentation?.calls ?? {})) as { title: string; kind?: string }[]
      expect(callCards.some((card) => card.title.startsWith('list_files') && card.kind === 'read')).toBe(true)
      const exitCall = appends.find(
        (item) =>
          item.data.event.type === 'assistant/message' &&
          item.data.event.data.content.some((block: { toolName?: string }) => block.toolName === 'exit_plan_mode'),
      )!
      const exitCard = Object.values(exitCall.data.presentation.calls)[0] as { title: string; content: { text: string }[] }
      expect(exitCard.content[0]!.text).toBe(review.detail)
      // The question is in the page too, and the plan chip is on.
      const page = await call(server, 'GET', `/api/sessions/${id}`)
      expect(page.body.questions).toEqual([first])
      expect(page.body.running).toBe(true)
      expect(page.body.snapshot.values.plan).toEqual({ active: true, pending: false })
      expect(page.body.snapshot.values.planHistory.revisions).toHaveLength(1)
      expect(page.body.snapshot.values.planHistory.revisions[0].status).toBe('open')

      // Keep planning, with feedback and a comment on line 1.
      const kept = await post(server, `/api/sessions/${id}/questions/${first.id}`, {
        answers: [
          {
            id: 'plan-review',
            selected: ['Keep planning'],
            custom: 'Also cover the README.',
            comments: [{ line: 1, text: 'A shorter title, please.' }],
          },
        ],
      })
      expect(kept.status).toBe(200)
      const closed = await stream.waitFor((item) => item.event === 'question-closed')
      expect(closed.data).toEqual({ id: first.id, outcome: 'answered' })
      const keptResult = await waitForEvent(stream, (event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode')
      const keptItem = stream.items.find((item) => item.event === 'append' && item.data.event.seq === keptResult.seq)!
      expect(keptItem.data.presentation.result).toEqual({
        card: 'generic',
        title: 'Plan review',
        content: keptResult.type === 'tool/result' ? keptResult.data.content : [],
      })
      expect(texts(keptResult)).toBe(
        'Error: The user chose to keep planning; their feedback: Also cover the README.\n- line 1: A shorter title, please.',
      )

      // The revision: a second review, and the history holds both.
      const second = (await stream.waitFor((item) => item.event === 'question' && item.data.id !== first.id)).data
      const revised = second.request.questions[0].detail as string
      const history = stream.frames().at(-1)!.values.planHistory.revisions
      expect(history.map((revision: { rev: number; status: string }) => [revision.rev, revision.status])).toEqual([
        [1, 'keep-planning'],
        [2, 'open'],
      ])
      expect(history[0].feedback).toBe('Also cover the README.')
      expect(history[0].comments).toEqual([{ line: 1, text: 'A shorter title, please.' }])

      // Approve an edited version: plan mode goes off and the implementation follows.
      const edit = `${revised.trimEnd()}\n\n## Edited in the browser\n- one more step\n`
      expect(
        (
          await post(server, `/api/sessions/${id}/questions/${second.id}`, {
            answers: [{ id: 'plan-review', selected: ['Approve'], edit }],
          })
        ).status,
      ).toBe(200)
      const turnEnd = await waitForEvent(stream, turnEnded(1))
      expect(turnEnd.data).toEqual({ turn: 1, reason: 'completed' })
      const events = stream.events()
      const approval = events.filter((event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode').at(-1)!
      expect(texts(approval)).toBe(
        `The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:\n\n${edit}`,
      )
      expect(events.some((event) => event.type === 'plan/mode' && event.data.active === false && event.data.cause === 'review')).toBe(true)
      expect(
        events.some(
          (event) =>
            event.type === 'tool/result' &&
            (event.data.toolName === 'write_file' || event.data.toolName === 'edit_file') &&
            !event.data.isError,
        ),
      ).toBe(true)
      const last = stream.frames().at(-1)!
      expect(last.values.plan).toEqual({ active: false, pending: false })
      expect(last.values.planHistory.revisions[1]).toMatchObject({ rev: 2, status: 'approved', approvedPlan: edit })

      // Streamed text: each step's deltas add up to its logged text.
      const deltas = stream.items.filter((item) => item.event === 'delta')
      expect(deltas.length).toBeGreaterThan(0)
      for (const message of events.filter((event) => event.type === 'assistant/message')) {
        if (message.type !== 'assistant/message') continue
        const streamed = deltas
          .filter((item) => item.data.turn === message.data.turn && item.data.step === message.data.step)
          .map((item) => item.data.text)
          .join('')
        expect(streamed).toBe(texts(message))
      }

      // Nothing skipped, nothing twice: the stream is the log.
      await server.host.get(id)!.settled()
      expect(events).toEqual(readLog(sessionDir, id))
      expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
      const list = await call(server, 'GET', '/api/sessions')
      expect(list.body.sessions.find((row: { id: string }) => row.id === id)).toMatchObject({
        id,
        open: true,
        events: events.length,
        updatedSeq: events.length - 1,
        running: false,
        title: 'Add due dates to tasks',
      })
    } finally {
      stream.close()
    }
  })

  it('/plan with an image attachment steers the images first, then the text; /plan off refuses images', async () => {
    const id = await newSession()
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      const refused = await post(server, `/api/sessions/${id}/command`, {
        line: '/plan off',
        images: [{ mediaType: 'image/png', data: PNG_1X1 }],
      })
      expect(refused.body.result).toEqual({ kind: 'error', text: 'Image attachments cannot accompany /plan off.' })
      const entered = await post(server, `/api/sessions/${id}/command`, {
        line: '/plan Add due dates to tasks',
        images: [{ mediaType: 'image/png', data: PNG_1X1, name: 'sketch.png' }],
      })
      expect(entered.body.result.text).toBe('Plan mode on. Send /plan off to leave.')
      const steered = await waitForEvent(stream, (event) => event.type === 'user/message' && event.data.source.kind === 'user')
      if (steered.type !== 'user/message') throw new Error('expected a user message')
      expect(steered.data.content.map((block) => block.type)).toEqual(['image', 'text'])
      const image = steered.data.content[0]!
      if (image.type !== 'image') throw new Error('expected an image block')
      expect(image.attachment).toMatchObject({ mediaType: 'image/png', data: PNG_1X1, name: 'sketch.png' })
      expect(image.attachment.id).toMatch(/^img_/)
      expect(steered.data.content[1]).toEqual({ type: 'text', text: 'Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      expect((await post(server, `/api/sessions/${id}/questions/${question.id}/dismiss`, {})).status).toBe(200)
      await waitForEvent(stream, turnEnded(1))
    } finally {
      stream.close()
    }
  })

  it('a prompt starts a turn, and a prompt during a turn is steered into it', async () => {
    const id = await newSession()
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      const started = await post(server, `/api/sessions/${id}/prompt`, {
        text: 'hello',
        images: [{ mediaType: 'image/png', data: PNG_1X1 }],
      })
      expect(started.status).toBe(202)
      expect(started.body).toEqual({ steered: false })
      const prompt = await waitForEvent(stream, (event) => event.type === 'user/message')
      if (prompt.type !== 'user/message') throw new Error('expected a user message')
      expect(prompt.data.content.map((block) => block.type)).toEqual(['image', 'text'])
      await waitForEvent(stream, turnEnded(1))
      // A review holds turn 2 open; a prompt now is steered.
      await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      const steered = await post(server, `/api/sessions/${id}/prompt`, { text: 'and keep it small' })
      expect(steered.body).toEqual({ steered: true })
      await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Stop planning'] }] })
      const typed = await waitForEvent(stream, (event) => event.type === 'user/message' && texts(event) === 'and keep it small')
      expect(typed.seq).toBeGreaterThan(prompt.seq)
      await waitForEvent(stream, (event) => event.type === 'turn/end' && event.seq > typed.seq)
    } finally {
      stream.close()
    }
  })

  it('an unknown command resolves null and logs nothing', async () => {
    const id = await newSession()
    const before = (await call(server, 'GET', `/api/sessions/${id}`)).body.events.length
    const reply = await post(server, `/api/sessions/${id}/command`, { line: '/nothing here' })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ result: null })
    expect((await call(server, 'GET', `/api/sessions/${id}`)).body.events).toHaveLength(before)
  })

  it('cancel ends a running turn; its open question closes as aborted in every tab', async () => {
    const id = await newSession()
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      const cancelled = await post(server, `/api/sessions/${id}/cancel`, {})
      expect(cancelled.body).toEqual({ cancelled: true })
      expect((await stream.waitFor((item) => item.event === 'question-closed')).data).toEqual({ id: question.id, outcome: 'aborted' })
      const end = await waitForEvent(stream, turnEnded(1))
      expect(end.data).toEqual({ turn: 1, reason: 'cancelled' })
      const late = await post(server, `/api/sessions/${id}/questions/${question.id}`, {
        answers: [{ id: 'plan-review', selected: ['Approve'] }],
      })
      expect(late.status).toBe(409)
      expect((await call(server, 'GET', `/api/sessions/${id}`)).body.questions).toEqual([])
      expect((await post(server, `/api/sessions/${id}/cancel`, {})).body).toEqual({ cancelled: false })
    } finally {
      stream.close()
    }
  })

  it('the model asks to enter plan mode: the plan-enter question comes over SSE and an approval switches plan mode on', async () => {
    const id = await newSession()
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      await post(server, `/api/sessions/${id}/prompt`, { text: "Let's plan first: add due dates to tasks" })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      const [entry] = question.request.questions
      expect(entry).toMatchObject({ id: 'plan-enter', header: 'Plan mode', intent: { kind: 'plan-enter', approve: 'Enter plan mode' } })
      expect(entry.options.map((option: { label: string }) => option.label)).toEqual(['Enter plan mode', 'Not now'])
      // An edit is refused: this intent takes none.
      const refused = await post(server, `/api/sessions/${id}/questions/${question.id}`, {
        answers: [{ id: 'plan-enter', selected: ['Enter plan mode'], edit: '# x' }],
      })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatch(/does not take an edit/)
      await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-enter', selected: ['Enter plan mode'] }] })
      const on = await waitForEvent(stream, (event) => (event.type as string) === 'plan/mode')
      expect(on.data).toEqual({ active: true, cause: 'model' })
      const result = stream.events().find((event) => event.type === 'tool/result' && event.data.toolName === 'enter_plan_mode')!
      expect(texts(result)).toBe(
        'The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.',
      )
      // The plan review follows in the same turn; stop there.
      const review = (await stream.waitFor((item) => item.event === 'question' && item.data.id !== question.id)).data
      expect(review.request.questions[0].id).toBe('plan-review')
      await post(server, `/api/sessions/${id}/questions/${review.id}`, {
        answers: [{ id: 'plan-review', selected: ['Stop planning'], custom: 'not now' }],
      })
      await waitForEvent(stream, turnEnded(1))
      expect(stream.frames().at(-1)!.values.plan).toEqual({ active: false, pending: false })
    } finally {
      stream.close()
    }
  })

  it('a session another server holds is refused with 409, and nothing is written to it', async () => {
    const id = await newSession()
    const other = await startTestServer({ sessionDir })
    try {
      const listed = await call(other, 'GET', '/api/sessions')
      expect(listed.body.sessions.map((row: { id: string }) => row.id)).toContain(id)
      const before = readLog(sessionDir, id)
      const page = await call(other, 'GET', `/api/sessions/${id}`)
      expect(page.status).toBe(409)
      expect(page.body.error).toMatch(/LOCKED|lock/i)
      expect((await post(other, `/api/sessions/${id}/prompt`, { text: 'hello' })).status).toBe(409)
      expect(readLog(sessionDir, id)).toEqual(before)
    } finally {
      await other.close()
    }
  })
})
