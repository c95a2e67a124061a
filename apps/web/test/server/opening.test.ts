/**
 * A stream's opening burst names the questions open at that moment
 * (`event: questions`), so a tab drops a question its earlier page load
 * listed but that closed before the stream opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { call, cleanup, post, SseClient, startTestServer, turnEnded, waitForEvent } from './support.js'

let server: WebServer

beforeAll(async () => {
  server = await startTestServer()
})

afterAll(async () => {
  await server.close()
  cleanup()
})

describe('the opening burst of a stream', () => {
  it('lists the open question ids right after the frame, then sends each open question; none once it closed', async () => {
    const id = (await post(server, '/api/sessions', {})).body.id as string
    const watcher = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await watcher.waitFor((item) => item.event === 'question')).data
      // A page loaded now lists the question...
      const page = await call(server, 'GET', `/api/sessions/${id}?tail=0`)
      expect(page.body.questions.map((open: { id: string }) => open.id)).toEqual([question.id])
      const during = await SseClient.open(server, `/api/sessions/${id}/stream?from=${page.body.lastSeq}`)
      try {
        await during.waitFor((item) => item.event === 'question')
        expect(during.items.map((item) => item.event)).toEqual(['frame', 'questions', 'question'])
        expect(during.items[1]!.data).toEqual({ open: [question.id] })
        expect(during.items[2]!.data).toEqual(question)
      } finally {
        during.close()
      }
      // ...and it closes before that page's stream opens: the stream says no question is open.
      expect(
        (
          await post(server, `/api/sessions/${id}/questions/${question.id}`, {
            answers: [{ id: 'plan-review', selected: ['Stop planning'] }],
          })
        ).status,
      ).toBe(200)
      await waitForEvent(watcher, turnEnded(1))
      const after = await SseClient.open(server, `/api/sessions/${id}/stream?from=${page.body.lastSeq}`)
      try {
        const opening = await after.waitFor((item) => item.event === 'questions')
        expect(opening.data).toEqual({ open: [] })
        expect(after.items.some((item) => item.event === 'question')).toBe(false)
        expect(after.items.some((item) => item.event === 'question-closed')).toBe(false)
        // It came after the replay and the frame, in the same opening stretch.
        const kinds = after.items.map((item) => item.event)
        expect(kinds.slice(-2)).toEqual(['frame', 'questions'])
        expect(kinds.slice(0, -2).every((kind) => kind === 'append')).toBe(true)
      } finally {
        after.close()
      }
    } finally {
      watcher.close()
    }
  })
})
