import { planHistory, type PlanRevision } from '@planmode/plan-projection'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { call, message, place, result, review, type Raw } from './history-helpers.js'

/** A person of a record as the model reads it: a copy of `{ id, name? }`, or undefined when absent or malformed. */
function person(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const { id, name } = value as Record<string, unknown>
  if (typeof id !== 'string' || id.trim() === '' || (name !== undefined && typeof name !== 'string')) return undefined
  return name === undefined ? { id } : { id, name }
}

/** The comments of a record as the model reads them: all copied when every one is well formed (a `by` included), else none. */
function commentsOf(value: unknown): Record<string, unknown>[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined
  const out: Record<string, unknown>[] = []
  for (const comment of value as Record<string, unknown>[]) {
    if (!Number.isInteger(comment['line']) || typeof comment['text'] !== 'string') return undefined
    if (comment['by'] === undefined) out.push({ line: comment['line'], text: comment['text'] })
    else {
      const by = person(comment['by'])
      if (by === undefined) return undefined
      out.push({ line: comment['line'], text: comment['text'], by })
    }
  }
  return out
}

/**
 * The plain model of §15: walk the whole log for each prefix, with no
 * state carried between events beyond the list being built.
 */
function model(bodies: readonly Raw[]): PlanRevision[] {
  const out: Record<string, unknown>[] = []
  bodies.forEach((body, seq) => {
    const data = body.data as Record<string, unknown>
    if (body.type === 'assistant/message') {
      for (const block of data['content'] as Record<string, unknown>[]) {
        const plan = (block['input'] as { plan?: unknown } | undefined)?.plan
        if (block['type'] !== 'tool-call' || block['toolName'] !== 'exit_plan_mode' || typeof plan !== 'string') continue
        if (!/^#\s+\S/.test(plan.trim())) continue
        const heading = plan
          .split('\n')
          .map((line) => /^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*$/.exec(line))
          .find(Boolean)
        out.push({ rev: out.length + 1, toolCallId: block['toolCallId'], seq, title: heading ? heading[1] : 'Plan', plan, status: 'open' })
      }
      return
    }
    if (body.type !== 'tool/result' && body.type !== 'plan/review') return
    const target = out.findLast((revision) => revision['toolCallId'] === data['toolCallId'])
    if (target === undefined || target['status'] !== 'open') return
    if (body.type === 'tool/result') {
      target['status'] = 'refused'
      return
    }
    target['status'] = data['outcome']
    if (data['outcome'] === 'approved' && data['plan'] !== undefined) target['approvedPlan'] = data['plan']
    if (data['feedback'] !== undefined) target['feedback'] = data['feedback']
    const comments = commentsOf(data['comments'])
    if (comments !== undefined) target['comments'] = comments
    if (data['unattended'] !== undefined) target['unattended'] = true
    const by = person(data['by'])
    if (by !== undefined) target['by'] = by
  })
  return out as unknown as PlanRevision[]
}

const ids = fc.constantFrom('a', 'b', 'c', 'd')
// Titles the model's simple regex agrees on: no closing #s, no odd blanks.
const plans = fc.oneof(
  fc.constantFrom('# Plan A', '# Plan B\n- step', '  # Indented  ', 'intro\n## Sub\n# Top', '# x\n', ''),
  fc.constantFrom('do things', '## Only sub', '#NoSpace', '   '),
)
const block = fc.oneof(
  fc.tuple(ids, plans).map(([id, plan]) => call(id, plan)),
  fc.tuple(ids, plans).map(([id, plan]) => call(id, plan, 'read_file')),
  fc.constant({ type: 'text', text: '# not a call' }),
)
const body: fc.Arbitrary<Raw> = fc.oneof(
  { weight: 3, arbitrary: fc.array(block, { maxLength: 3 }).map((blocks) => message(...blocks)) },
  { weight: 2, arbitrary: fc.tuple(ids, fc.boolean()).map(([id, isError]) => result(id, isError)) },
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          id: ids,
          outcome: fc.constantFrom('approved', 'keep-planning', 'stopped', 'dismissed'),
          plan: fc.constantFrom('# Edited'),
          feedback: fc.constantFrom('more detail', ''),
          comments: fc.constantFrom<unknown[]>(
            [{ line: 1, text: 'why?' }],
            [
              { line: 1, text: 'a', by: { id: 'u-rita', name: 'Rita' } },
              { line: 2, text: 'b' },
            ],
            [{ line: 3, text: 'c', by: { id: 'u-sam', role: 'reviewer' } }],
            [
              { line: 1, text: 'ok' },
              { line: 2, text: 'bad by', by: { id: '  ' } },
            ],
            [{ line: 1, text: 'bad name', by: { id: 'u-x', name: 5 } }],
          ),
          unattended: fc.constant(true as const),
          by: fc.constantFrom<unknown>(
            { id: 'u-olga', name: 'Olga' },
            { id: 'u-sam' },
            { id: 'u-x', name: 'X', token: 't' },
            { id: '' },
            { name: 'no id' },
            'olga',
            null,
          ),
        },
        { requiredKeys: ['id', 'outcome'] },
      )
      .map(({ id, outcome, ...extra }) => review(id, outcome, extra)),
  },
  { weight: 1, arbitrary: fc.nat(3).map((turn): Raw => ({ type: 'turn/start', data: { turn } })) },
  { weight: 1, arbitrary: fc.boolean().map((active): Raw => ({ type: 'plan/mode', data: { active } })) },
)

describe('planHistory incremental replay equals a plain fold (fast-check)', () => {
  it('at every prefix, for arbitrary calls, results, records (duplicates, unknown calls) and other events', () => {
    fc.assert(
      fc.property(fc.array(body, { maxLength: 40 }), (bodies) => {
        const events = place(bodies)
        let state = planHistory.initial()
        events.forEach((event, at) => {
          const next = planHistory.apply(state, event)
          const view = planHistory.view(next)
          expect(view.revisions).toEqual(model(bodies.slice(0, at + 1)))
          if (JSON.stringify(planHistory.view(state)) === JSON.stringify(view)) expect(next).toBe(state)
          expect(planHistory.schema['~standard'].validate(view)).toEqual({ value: view })
          state = next
        })
      }),
      { numRuns: 300 },
    )
  })

  it('on long logs whose revisions fill several of the persistent list’s leaves (over 32 revisions), at checkpoints and at the end', () => {
    // Every tenth body is preceded by a call of its own, so every log holds well over 32 revisions.
    const spined = fc
      .array(body, { minLength: 600, maxLength: 1_800 })
      .map((list) => list.flatMap((item, i) => (i % 10 === 0 ? [message(call(`s${i}`, `# Spine ${i}`)), item] : [item])))
    fc.assert(
      fc.property(spined, (bodies) => {
        const events = place(bodies)
        let state = planHistory.initial()
        events.forEach((event, at) => {
          state = planHistory.apply(state, event)
          if (at % 150 !== 149 && at !== events.length - 1) return
          const view = planHistory.view(state)
          expect(view.revisions).toEqual(model(bodies.slice(0, at + 1)))
          expect(planHistory.schema['~standard'].validate(view)).toEqual({ value: view })
        })
        expect(state.revisions.size).toBeGreaterThan(32)
      }),
      { numRuns: 12 },
    )
  })
})
