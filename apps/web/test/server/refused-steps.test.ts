/**
 * SPEC §25 in the web app: a step whose completion the `plan/verify` checks
 * refuse is shown on its step — the `refusedSteps` projection carries the
 * refusal (the refused call and the problems) in every frame and snapshot,
 * so every tab has it at the same asOfSeq and a reload has it too; it goes
 * when a later `plan/progress` has the step done, and when plan mode is
 * entered again. The check here is a real listener on the server's own
 * context, refusing step 4 once, with the offline model carrying the plan out.
 */
import type { PlanVerifyPayload } from '@planmode/plan-progress'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { refusalOf } from '../../server/refused-steps.js'
import { call, cleanup, post, SseClient, startTestServer, turnEnded, waitForEvent } from './support.js'

const servers: WebServer[] = []
const streams: SseClient[] = []
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
afterAll(() => cleanup())

describe('refused completions (SPEC §25)', () => {
  it('a refused update_plan is on its step in every frame and snapshot, and goes when the step is done or plan mode comes back', async () => {
    const server = await startTestServer()
    servers.push(server)
    let refused = 0
    server.host.ctx.on(
      'plan/verify',
      async (payload: PlanVerifyPayload, next: (payload?: PlanVerifyPayload) => Promise<PlanVerifyPayload>) => {
        if (payload.step !== 4 || refused > 0) return next()
        refused += 1
        return next({ ...payload, problems: [...payload.problems, 'the tests fail: 2 of 9', 'README.md says nothing of --due'] })
      },
    )
    const id = (await post(server, '/api/sessions', {})).body.id as string
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
    streams.push(stream)
    await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
    const question = (await stream.waitFor((item) => item.event === 'question')).data
    await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
    await waitForEvent(stream, turnEnded(1))
    expect(refused).toBe(1)
    const failed = stream
      .events()
      .find((event) => event.type === 'tool/result' && event.data.toolName === 'update_plan' && event.data.isError)!
    const toolCallId = (failed.data as { toolCallId: string }).toolCallId
    const expected = { 4: { toolCallId, problems: ['the tests fail: 2 of 9', 'README.md says nothing of --due'] } }
    // The frame of the refusal carries it, and so does every frame after.
    const frames = stream.frames()
    const at = frames.findIndex((frame) => frame.asOfSeq === failed.seq)
    expect(at).toBeGreaterThanOrEqual(0)
    for (const frame of frames.slice(at)) expect(frame.values.refusedSteps).toEqual(expected)
    for (const frame of frames.slice(0, at)) expect(frame.values.refusedSteps).toEqual({})
    // A new tab and a page load have it too.
    const page = (await call(server, 'GET', `/api/sessions/${id}`)).body
    expect(page.snapshot.values.refusedSteps).toEqual(expected)
    const late = await SseClient.open(server, `/api/sessions/${id}/stream`)
    streams.push(late)
    expect((await late.waitFor((item) => item.event === 'frame')).data.values.refusedSteps).toEqual(expected)

    // The step done after all: a plan/progress with step 4 done clears it.
    const open = server.host.get(id)!
    const last = stream
      .events()
      .filter((event) => event.type === 'plan/progress')
      .at(-1)!
    const steps = (last.data as { readonly steps: readonly { step: number; text: string; status: string }[] }).steps.map((step) =>
      step.step === 4 ? { ...step, status: 'done' } : step,
    )
    await (open.session.append as (type: string, data: unknown) => Promise<unknown>)('plan/progress', {
      ...(last.data as object),
      toolCallId: 'by-hand',
      steps,
    })
    expect(
      (await stream.waitFor((item) => item.event === 'frame' && Object.keys(item.data.values.refusedSteps).length === 0)).data.values
        .refusedSteps,
    ).toEqual({})
  })

  it('plan mode entered again leaves no refusal of the plan before', async () => {
    const server = await startTestServer()
    servers.push(server)
    server.host.ctx.on(
      'plan/verify',
      async (payload: PlanVerifyPayload, next: (payload?: PlanVerifyPayload) => Promise<PlanVerifyPayload>) =>
        payload.step === 4 ? next({ ...payload, problems: [...payload.problems, 'the tests fail'] }) : next(),
    )
    const id = (await post(server, '/api/sessions', {})).body.id as string
    const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
    streams.push(stream)
    await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
    const question = (await stream.waitFor((item) => item.event === 'question')).data
    await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
    await waitForEvent(stream, turnEnded(1))
    expect(Object.keys(stream.frames().at(-1)!.values.refusedSteps)).toEqual(['4'])
    await post(server, `/api/sessions/${id}/command`, { line: '/plan Add priorities to tasks' })
    await waitForEvent(stream, (event) => event.type === 'plan/mode' && event.data.active)
    await stream.waitFor((item) => item.event === 'frame' && Object.keys(item.data.values.refusedSteps).length === 0)
  })

  it('reads plan-progress’s refusal, and nothing else, from an update_plan error', () => {
    expect(refusalOf('Error: update_plan: step 4 is not done:\n- the tests fail\n- the README says nothing')).toEqual({
      step: 4,
      problems: ['the tests fail', 'the README says nothing'],
    })
    expect(refusalOf('update_plan: step 12 is not done:\n- x')).toEqual({ step: 12, problems: ['x'] })
    expect(refusalOf('Error: update_plan: only one step can be in progress')).toBeUndefined()
    expect(refusalOf('Error: update_plan: no step 9')).toBeUndefined()
  })
})
