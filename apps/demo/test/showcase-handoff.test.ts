// Stages 10-13 of `pnpm demo` (src/showcase-handoff.ts, src/showcase-verify.ts), run in-process through the
// real host: an approval with a model, the plan file with its progress, an approval into a fresh session that
// carries the plan out with update_plan, and a step marked done too early that the step check refuses until
// the sample project's tests pass (SPEC §25). The stages check themselves against the logs; this reads the
// logs again.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, describe, expect, it } from 'vitest'
import { runShowcase, SHOWCASE_GOAL } from '../src/showcase.js'
import { SHOWCASE_MODEL_GOAL } from '../src/showcase-handoff.js'
import { readSession } from './support/built-demo.js'

const sessionDir = mkdtempSync(join(tmpdir(), 'planmode-showcase-handoff-'))
afterAll(() => rmSync(sessionDir, { recursive: true, force: true }))
const data = (event: SessionEvent | undefined): Record<string, unknown> => (event?.data ?? {}) as unknown as Record<string, unknown>

describe('the showcase stages of the handoff, the plan file, progress and the step check', () => {
  it('all happen, in order, and the logs they leave say what they claim', async () => {
    let out = ''
    const result = await runShowcase({ out: { write: (chunk: string) => (out += chunk) }, color: false, sessionDir })
    expect(result.stages.filter((stage) => !stage.ok)).toEqual([])
    expect(result.ok).toBe(true)
    expect(result.stages).toHaveLength(39)
    expect(result.stages.slice(27).map((stage) => stage.name)).toEqual([
      'the review offers the handoff: Approve with fast or careful, or in a fresh session',
      'approved with fast: the record names it, and from the next step the request header names planmode-offline:fast',
      'the plan is tracked with update_plan step by step to the end: plan 3/3 beside the badge',
      "the plan file's front matter and text are the latest revision's, with its progress",
      'approved for a fresh session with careful: the record says so, and this turn makes no further request',
      'the new session starts with plan/handoff, and its first turn with the handoff message, no user message',
      'there update_plan tracks the plan step by step until every step is done (plan/progress in its log)',
      'the fresh session did the work: the workspace tests pass',
      'both sessions reopen from their logs: the handing one with its approved plan and plan mode off, the fresh one with its progress and model',
      'update_plan marked the tests step done before the code existed: refused with the failing tests, nothing logged',
      'the model read the refusal, wrote the code, and marked the step done again: the checks passed, plan 3/3',
      'the sample project’s tests pass, the new ones included',
    ])
    const stages = out.split('\n').filter((line) => line.startsWith('── '))
    expect(stages.slice(-6)).toEqual([
      '── 10. Approve with a model: the next steps use it (--models fast,careful) ──',
      '── 11. The plan as a file (--plan-dir): its front matter and text follow the latest revision and its progress ──',
      '── 12. Approve into a fresh session: a new session carries the plan out, with update_plan ──',
      expect.stringMatching(/^── fresh session s_\S+: “Plan: due dates for tasks” ──$/),
      '── 13. A step is done when the checks say so: marked done too early, refused, fixed, marked again ──',
      '── Done ──',
    ])
    expect(out).toContain('  (the reviewer picks 4. Approve with fast)\n  reviewer › Approve\n    with model fast\n')
    expect(out).toContain(
      '  (the reviewer picks 8. Approve in a fresh session with careful)\n  reviewer › Approve\n    in a fresh session, with model careful\n',
    )
    expect(out).toContain('\n[plan: off] plan 3/3 · model fast › /plans progress\n')
    expect(out).toContain('\n[plan: off] plan 5/5 · model careful › /plans progress\n')

    // The third session: both approvals recorded with what they handed on to.
    const third = readSession(result.handoffSessionFile!)
    expect(third.filter((event) => (event.type as string) === 'plan/review').map((event) => data(event).handoff)).toEqual([
      { model: 'fast' },
      { fresh: true, model: 'careful' },
    ])
    expect(
      third
        .filter((event) => event.type === 'user/message' && event.data.source.kind === 'user')
        .map((event) => (event.type === 'user/message' ? event.data.content[0] : undefined)),
    ).toEqual([
      { type: 'text', text: SHOWCASE_MODEL_GOAL },
      { type: 'text', text: SHOWCASE_GOAL },
    ])
    // The fresh session: handed on from the third, tracked to the end, on careful.
    const fresh = readSession(result.freshSessionFile!)
    expect(fresh[0]?.type as string).toBe('plan/handoff')
    expect(data(fresh[0]).from).toMatchObject({ session: basename(result.handoffSessionFile!, '.jsonl') })
    const last = fresh.filter((event) => (event.type as string) === 'plan/progress').at(-1)
    expect((data(last).steps as { status: string }[]).map((step) => step.status)).toEqual(['done', 'done', 'done', 'done', 'done'])
    expect(fresh.filter((event) => event.type === 'request/header').map((event) => data(event).model)).toEqual(['planmode-offline:careful'])
    // The plan file (kept with the session logs): the latest revision is the fresh-session approval, so no progress line.
    const file = readFileSync(result.planFile!, 'utf8')
    expect(file).toMatch(
      /^---\nsession: "s_\S+"\nrev: 2\nstatus: "approved"\ntitle: "Plan: due dates for tasks"\n---\n# Plan: due dates for tasks\n/,
    )
    expect(result.planFile).toBe(join(sessionDir, 'plans', `${basename(result.handoffSessionFile!, '.jsonl')}.md`))
    // The handing session's log says plan mode is off right after its turn (SPEC §22.2).
    expect(third.slice(-2).map((event) => event.type as string)).toEqual(['turn/end', 'plan/mode'])
    expect(third.at(-1)?.data).toEqual({ active: false, cause: 'review' })

    // The fourth session (stage 13): `update_plan` marks step 1 (the tests) done too early and is refused with the
    // failing tests, nothing logged for it; the model writes the code and the same step is marked done again.
    const fourth = readSession(result.verifySessionFile!)
    const updates = fourth.flatMap((event) =>
      event.type === 'assistant/message'
        ? event.data.content.flatMap((block) =>
            block.type === 'tool-call' && block.toolName === 'update_plan' ? [{ id: block.toolCallId, input: block.input }] : [],
          )
        : [],
    )
    const resultOf = (id: string) => fourth.find((event) => event.type === 'tool/result' && event.data.toolCallId === id)
    const texts = updates.map((call) => {
      const found = resultOf(call.id)
      return found?.type === 'tool/result'
        ? `${found.data.isError ? 'error' : 'ok'}: ${
            found.data.content
              .map((block) => block.text)
              .join('')
              .split('\n')[0]
          }`
        : 'none'
    })
    expect(updates.map((call) => call.input)).toEqual([
      { updates: [{ step: 1, status: 'in_progress' }] },
      { updates: [{ step: 1, status: 'done' }] },
      {
        updates: [
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
          { step: 3, status: 'done' },
        ],
      },
    ])
    expect(texts).toEqual(['ok: Plan progress: 0/3.', 'error: Error: update_plan: step 1 is not done:', 'ok: Plan progress: 3/3.'])
    const refused = resultOf(updates[1]!.id)
    expect(refused?.type === 'tool/result' && refused.data.content[0]?.text).toMatch(
      /\n- the workspace's tests fail \(node --test: 3 of 6 failed — “reopen makes a finished task open again” \(list\.reopen is not a function\); “reopen refuses an unknown id”; “tasks undo <id> reopens a task”\)$/,
    )
    const progress = fourth.filter((event) => (event.type as string) === 'plan/progress').map((event) => data(event))
    expect(progress.map((item) => item.toolCallId)).toEqual([updates[0]!.id, updates[2]!.id])
    const between = fourth.slice(fourth.indexOf(refused!), fourth.indexOf(resultOf(updates[2]!.id)!))
    expect(
      between.filter((event) => event.type === 'tool/result' && event.data.toolName === 'edit_file' && !event.data.isError),
    ).toHaveLength(3)
    expect(out).toContain("  → update_plan 1 done\n    ✗ step 1 is not done: the workspace's tests fail (node --test: 3 of 6 failed — ")
    expect(out).toContain('  assistant The check refused step 1: ')

    // Every workspace copy was temporary.
    expect(result.removed).toEqual(expect.arrayContaining([result.workspace, result.handoffWorkspace, result.verifyWorkspace]))
    expect(existsSync(result.handoffWorkspace)).toBe(false)
    expect(existsSync(result.verifyWorkspace)).toBe(false)
  })
})
