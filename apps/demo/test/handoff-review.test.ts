// The terminal's side of the handoff (SPEC §18) and of progress (SPEC §17), piece by piece: the review's
// handoff choices and how a typed line picks one, how the transcript shows them, `--models`, the resume
// hint, `/plans progress`, the one-line renderings of update_plan, and the model a reopened session
// goes on with. The whole arc through the real host is in handoff-terminal.test.ts.
import type { PlanProgressView } from '@planmode/plan-progress/types'
import type { SessionEvent, UserQuestion } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { handoffMessageLine, progressMessageLine, updatePlanCallTitle, updatePlanResultLine } from '../src/render/progress-lines.js'
import { createStyle } from '../src/render/style.js'
import { TranscriptRenderer } from '../src/render/transcript.js'
import { parseCli, parseModelIds, START_USAGE } from '../src/terminal/cli-args.js'
import { describeHandoff, handoffChoices, handoffOffer, readHandoffChoice } from '../src/terminal/handoff-choices.js'
import { chooseModels } from '../src/terminal/model-choice.js'
import { PLANS_USAGE, runPlansCommand } from '../src/terminal/plans-command.js'
import { resumeCommand } from '../src/terminal/resume-hint.js'
import { ReviewDraft } from '../src/terminal/review-answer.js'
import { loggedModel } from '../src/terminal/session-model.js'

const plain = createStyle(false)
const review = (handoff?: { fresh: boolean; models: string[] }): UserQuestion => ({
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan and leave plan mode?',
  detail: '# Plan\n\n1. one\n2. two',
  options: [
    { label: 'Approve', description: 'leave plan mode' },
    { label: 'Keep planning', description: 'stay' },
    { label: 'Stop planning', description: 'leave without carrying it out' },
  ],
  intent: {
    kind: 'plan-review',
    approve: 'Approve',
    keep: 'Keep planning',
    stop: 'Stop planning',
    editable: true,
    comments: true,
    ...(handoff === undefined ? {} : { handoff }),
  },
})
const both = review({ fresh: true, models: ['fast', 'careful'] })

describe('the handoff choices of a review (SPEC §18)', () => {
  it('one per model, then a fresh session alone and with each model, labelled after the approve option', () => {
    expect(handoffChoices(both).map((choice) => [choice.label, choice.handoff])).toEqual([
      ['Approve with fast', { model: 'fast' }],
      ['Approve with careful', { model: 'careful' }],
      ['Approve in a fresh session', { fresh: true }],
      ['Approve in a fresh session with fast', { fresh: true, model: 'fast' }],
      ['Approve in a fresh session with careful', { fresh: true, model: 'careful' }],
    ])
    expect(handoffChoices(review({ fresh: false, models: ['fast'] })).map((choice) => choice.label)).toEqual(['Approve with fast'])
    expect(handoffChoices(review({ fresh: true, models: [] })).map((choice) => choice.label)).toEqual(['Approve in a fresh session'])
  })

  it('offers nothing without a handoff in the intent, with one that chooses nothing, or for another question', () => {
    expect(handoffChoices(review())).toEqual([])
    expect(handoffOffer(review({ fresh: false, models: [] }))).toBeUndefined()
    expect(
      handoffOffer({ ...both, intent: { kind: 'plan-enter', approve: 'Enter plan mode', handoff: { fresh: true, models: [] } } }),
    ).toBeUndefined()
  })

  it('a typed line picks one by its number after the options, its label, or the short form', () => {
    expect(readHandoffChoice(both, '4')?.handoff).toEqual({ model: 'fast' })
    expect(readHandoffChoice(both, '8')?.handoff).toEqual({ fresh: true, model: 'careful' })
    expect(readHandoffChoice(both, 'approve in a fresh session')?.handoff).toEqual({ fresh: true })
    expect(readHandoffChoice(both, '1 fresh')?.handoff).toEqual({ fresh: true })
    expect(readHandoffChoice(both, '1 careful')?.handoff).toEqual({ model: 'careful' })
    expect(readHandoffChoice(both, '1 careful fresh')?.handoff).toEqual({ fresh: true, model: 'careful' })
    expect(readHandoffChoice(both, 'Approve fresh fast')?.handoff).toEqual({ fresh: true, model: 'fast' })
    // The question's own options, numbers past the last choice, and what is not offered are not handoff choices.
    for (const line of ['1', '3', '9', '1 fresh fresh', '1 fast careful', '2 fresh', '1 Fast'])
      expect(readHandoffChoice(both, line), line).toBeUndefined()
    expect(readHandoffChoice(review({ fresh: false, models: ['fast'] }), '1 fresh')).toBeUndefined()
  })

  it('the draft answers Approve with the handoff, comments and the edit riding along; the plain options are unchanged', () => {
    const draft = new ReviewDraft(both)
    expect(draft.read('c 3 why one?')).toMatchObject({ kind: 'note' })
    draft.setEdit('# Plan\n\n1. one\n2. two\n3. three')
    expect(draft.read('7')).toEqual({
      kind: 'answer',
      answer: {
        id: 'plan-review',
        selected: ['Approve'],
        handoff: { fresh: true, model: 'fast' },
        edit: '# Plan\n\n1. one\n2. two\n3. three',
        comments: [{ line: 3, text: 'why one?' }],
      },
    })
    expect(new ReviewDraft(both).read('1')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: ['Approve'] } })
    expect(new ReviewDraft(both).read('2: smaller steps')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: ['Keep planning'], custom: 'smaller steps' },
    })
    expect(new ReviewDraft(both).read('looks fine but split step 2')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: [], custom: 'looks fine but split step 2' },
    })
  })

  it('refuses a short form that names nothing offered, and a number past the last choice, keeping the review open', () => {
    expect(new ReviewDraft(both).read('1 fsat')).toEqual({
      kind: 'note',
      refused: true,
      text: '“1 fsat” hands the plan on to nothing offered: after 1 type fresh, fast, careful (or fresh and a model)',
    })
    expect(new ReviewDraft(both).read('9')).toEqual({ kind: 'note', refused: true, text: 'no choice 9: the review has 1-8' })
    // Without a handoff offered, the same lines are feedback, as before.
    expect(new ReviewDraft(review()).read('1 fsat')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: [], custom: '1 fsat' },
    })
    expect(new ReviewDraft(review()).read('9')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: [], custom: '9' } })
  })

  it('reads back as the transcript echoes it', () => {
    expect(describeHandoff({ model: 'fast' })).toBe('with model fast')
    expect(describeHandoff({ fresh: true })).toBe('in a fresh session')
    expect(describeHandoff({ fresh: true, model: 'careful' })).toBe('in a fresh session, with model careful')
  })
})

function render(draw: (renderer: TranscriptRenderer) => void, width?: number): string[] {
  let text = ''
  const renderer = new TranscriptRenderer({
    out: { write: (chunk: string) => (text += chunk) },
    style: plain,
    ...(width === undefined ? {} : { width }),
  })
  draw(renderer)
  return text.split('\n')
}
const event = (type: string, data: unknown): SessionEvent => ({ type, seq: 0, time: 0, data }) as unknown as SessionEvent

describe('the transcript of a review that offers a handoff, and of progress', () => {
  it('numbers the handoff choices after the options and names the short forms', () => {
    const lines = render((renderer) => renderer.review([both]))
    expect(lines).toContain('  │   3. Stop planning — leave without carrying it out')
    expect(lines).toContain(
      '  │   4. Approve with fast — Leave plan mode; the agent carries out the plan with model fast from its next step.',
    )
    expect(lines).toContain(
      '  │   6. Approve in a fresh session — Leave plan mode; a new session carries out the plan, starting from the plan alone, and this one stops here.',
    )
    expect(lines).toContain('  │   8. Approve in a fresh session with careful — The same, with model careful in the new session.')
    expect(lines).toContain(
      '    `e` edits the plan (Approve then sends your version); `c <line> <text>` comments on a line; `1 <model>`, `1 fresh`, `1 fresh <model>` for short',
    )
    const without = render((renderer) => renderer.review([review()]))
    expect(without.join('\n')).not.toMatch(/fresh session|for short|4\. /)
  })

  it('echoes the handoff an answer chose under the reviewer line', () => {
    const lines = render((renderer) =>
      renderer.answer([{ id: 'plan-review', selected: ['Approve'], handoff: { fresh: true, model: 'careful' } }], [both]),
    )
    expect(lines.slice(0, 2)).toEqual(['  reviewer › Approve', '    in a fresh session, with model careful'])
    expect(
      render((renderer) => renderer.answer([{ id: 'plan-review', selected: ['Approve'], handoff: { fresh: false } }], [both])),
    ).toEqual(['  reviewer › Approve', ''])
  })

  it('puts the progress and the model beside the badge', () => {
    const renderer = new TranscriptRenderer({ out: { write: () => true }, style: plain })
    expect(renderer.promptText('off')).toBe('[plan: off] › ')
    expect(renderer.promptText('off', { progress: { done: 2, total: 5 } })).toBe('[plan: off] plan 2/5 › ')
    expect(renderer.promptText('off', { progress: { done: 2, total: 5 }, model: 'fast' })).toBe('[plan: off] plan 2/5 · model fast › ')
    expect(renderer.promptText('pending-on', { model: 'fast' })).toBe('[plan: pending → on] model fast › ')
  })

  it('shows the handoff message, the progress messages, update_plan and the plan/handoff event on one line each', () => {
    const plan = '# Plan: due dates\n\nGoal: x\n\n1. a\n2. b'
    expect(handoffMessageLine(`Carry out this approved plan:\n\n${plan}`)).toBe(
      'the approved plan “Plan: due dates” to carry out (6 lines)',
    )
    expect(
      progressMessageLine(
        'Track the approved plan with update_plan: mark a step in_progress when you start it and done when it is finished.\nPlan progress: 0/2.\n[ ] 1. a\n[ ] 2. b',
      ),
    ).toBe('track the approved plan with update_plan (0/2 done)')
    expect(
      progressMessageLine(
        'The approved plan still has open steps; update them with update_plan as you work.\nPlan progress: 1/2.\n[x] 1. a\n[ ] 2. b',
      ),
    ).toBe('the approved plan still has open steps; update them with update_plan (1/2 done)')
    expect(
      updatePlanCallTitle({
        updates: [
          { step: 1, status: 'done' },
          { step: 2, status: 'done' },
          { step: 3, status: 'in_progress' },
        ],
      }),
    ).toBe('update_plan 1, 2 done; 3 in progress')
    expect(updatePlanCallTitle({ updates: [{ step: 2, status: 'skipped', note: 'not needed' }] })).toBe('update_plan 2 skipped')
    expect(updatePlanCallTitle({ updates: [] })).toBeUndefined()
    expect(updatePlanCallTitle({ updates: [{ step: 'one' }] })).toBeUndefined()
    expect(updatePlanResultLine('Plan progress: 1/3.\n[x] 1. a\n[>] 2. b\n[ ] 3. c')).toBe('plan 1/3, step 2 in progress')
    expect(updatePlanResultLine('Plan progress: 3/3.\n[x] 1. a\n[-] 2. b\n[x] 3. c')).toBe('plan 3/3')
    const lines = render((renderer) => {
      renderer.event(
        event('user/message', {
          content: [{ type: 'text', text: `Carry out this approved plan:\n\n${plan}` }],
          source: { kind: 'plugin', plugin: 'plan-mode', form: 'handoff' },
        }),
      )
      renderer.event(
        event('plan/handoff', { from: { session: 's_a', toolCallId: 'call_6' }, plan, title: 'Plan: due dates', model: 'careful' }),
      )
      renderer.event(
        event('assistant/message', {
          turn: 1,
          step: 1,
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'update_plan', input: { updates: [{ step: 1, status: 'in_progress' }] } },
          ],
        }),
      )
      renderer.event(
        event('tool/result', {
          toolCallId: 'c1',
          toolName: 'update_plan',
          isError: false,
          content: [{ type: 'text', text: 'Plan progress: 0/2.\n[>] 1. a\n[ ] 2. b' }],
        }),
      )
    })
    expect(lines).toEqual([
      '  ⓘ handoff (to the model) the approved plan “Plan: due dates” to carry out (6 lines)',
      '  ● plan/handoff logged: “Plan: due dates” from session s_a, model careful',
      '  → update_plan 1 in progress',
      '    ← plan 0/2, step 1 in progress',
      '',
    ])
  })
})

const view = (steps: PlanProgressView['steps']): PlanProgressView => ({
  plan: { toolCallId: 'call_1', title: 'Plan: due dates' },
  steps,
  done: steps.filter((step) => step.status === 'done' || step.status === 'skipped').length,
  total: steps.length,
  active: steps.find((step) => step.status === 'in_progress')?.step ?? null,
})

describe('/plans progress', () => {
  it('lists the steps with their state, the step in progress marked, notes after their step', () => {
    const output = runPlansCommand(
      'progress',
      undefined,
      plain,
      undefined,
      undefined,
      view([
        { step: 1, text: 'a', status: 'done' },
        { step: 2, text: 'b', status: 'skipped', note: 'not needed' },
        { step: 3, text: 'c', status: 'in_progress' },
        { step: 4, text: 'd', status: 'pending' },
      ]),
    )
    expect(output.lines).toEqual([
      'plan 2/4  “Plan: due dates”',
      '  [x] 1. a',
      '  [-] 2. b  (skipped: not needed)',
      '  [>] 3. c  ← in progress',
      '  [ ] 4. d',
    ])
    const done = runPlansCommand('progress', undefined, plain, undefined, undefined, view([{ step: 1, text: 'a', status: 'done' }]))
    expect(done.lines[0]).toBe('plan 1/1  “Plan: due dates”  (every step done)')
  })

  it('says why nothing is tracked, and refuses extra words', () => {
    expect(runPlansCommand('progress', undefined, plain).lines).toEqual([
      'no approved plan is tracked in this session (once you approve a plan, its steps are tracked here with update_plan)',
    ])
    expect(
      runPlansCommand('progress', undefined, plain, undefined, undefined, { plan: null, steps: [], done: 0, total: 0, active: null })
        .lines[0],
    ).toMatch(/^no approved plan is tracked/)
    expect(runPlansCommand('progress', undefined, plain, undefined, undefined, view([])).lines).toEqual([
      'the approved plan “Plan: due dates” has no steps to track (a numbered list, a task list or a "Steps" section makes them)',
    ])
    expect(runPlansCommand('progress 2', undefined, plain)).toEqual({ lines: [PLANS_USAGE], refused: true })
    expect(PLANS_USAGE).toMatch(/\| \/plans progress$/)
  })

  it('a session with a handed-on plan and no revisions names where the plan came from', () => {
    expect(
      runPlansCommand('', { revisions: [] }, plain, undefined, undefined, undefined, { session: 's_a', title: 'Plan: due dates' }).lines,
    ).toEqual([
      'no plan revisions in this session: it carries out “Plan: due dates”, approved in session s_a (/plans there lists its revisions; /plans progress here)',
    ])
  })
})

describe('--models', () => {
  it('takes ids separated by commas, trimmed, in order; [] when absent', () => {
    expect(parseCli([]).models).toEqual([])
    expect(parseCli(['--models', 'fast,careful']).models).toEqual(['fast', 'careful'])
    expect(parseCli(['--models= fast , qwen2.5-coder:14b ']).models).toEqual(['fast', 'qwen2.5-coder:14b'])
  })

  it('refuses a blank id, an id given twice, and the flag without a value', () => {
    expect(() => parseModelIds('')).toThrow('--models takes model ids separated by commas ("fast,careful"), not ""')
    expect(() => parseModelIds('fast,,careful')).toThrow(
      '--models takes model ids separated by commas ("fast,careful"), not "fast,,careful"',
    )
    expect(() => parseModelIds('fast, fast')).toThrow('--models names "fast" twice')
    expect(() => parseCli(['--models'])).toThrow(/--models/)
  })

  it('is in --help, and carried by the resume hint', () => {
    expect(START_USAGE).toMatch(/--models <ids>\s+models a review may hand the approved plan to, e\.g\. "fast,careful"/)
    expect(START_USAGE).toMatch(/"Approve in a fresh session"/)
    expect(resumeCommand('/s/a.jsonl', { models: ['fast', 'careful'] }, 'pnpm@1.0.0')).toBe(
      'npx -y pnpm@1.0.0 start --resume /s/a.jsonl --models fast,careful',
    )
    expect(resumeCommand('/s/a.jsonl', { models: ['big model'] }, 'pnpm@1.0.0')).toBe(
      "npx -y pnpm@1.0.0 start --resume /s/a.jsonl --models 'big model'",
    )
    expect(resumeCommand('/s/a.jsonl', { models: [] }, 'pnpm@1.0.0')).toBe('npx -y pnpm@1.0.0 start --resume /s/a.jsonl')
  })

  it('offline, each id is the offline planner reporting that id', () => {
    const models = chooseModels(['fast', 'careful'], { offline: true }, 'PLAN MODE', {}, 0)
    expect(Object.keys(models)).toEqual(['fast', 'careful'])
    expect([models.fast!.provider, models.fast!.modelId, models.careful!.modelId]).toEqual(['planmode-offline', 'fast', 'careful'])
  })
})

describe('the model a reopened session goes on with', () => {
  const fallback = createOfflineModel({ modelId: 'planner-1' })
  const models = { fast: createOfflineModel({ modelId: 'fast' }), careful: createOfflineModel({ modelId: 'careful' }) }
  const header = (model: string) => event('request/header', { reason: 'change', turn: 1, step: 1, model, system: '', tools: [] })
  const approved = (handoff: unknown) => event('plan/review', { toolCallId: 'c', outcome: 'approved', handoff })

  it('the latest handoff choice or request to a known model wins', () => {
    expect(loggedModel([header('planmode-offline:planner-1')], models, fallback)).toEqual({ kind: 'default' })
    expect(loggedModel([header('planmode-offline:planner-1'), approved({ model: 'fast' })], models, fallback)).toEqual({
      kind: 'model',
      id: 'fast',
    })
    expect(loggedModel([approved({ model: 'fast' }), header('planmode-offline:fast')], models, fallback)).toEqual({
      kind: 'model',
      id: 'fast',
    })
    expect(loggedModel([approved({ model: 'fast' }), header('planmode-offline:careful')], models, fallback)).toEqual({
      kind: 'model',
      id: 'careful',
    })
    expect(
      loggedModel(
        [event('plan/handoff', { from: { session: 's', toolCallId: 'c' }, plan: '# P', title: 'P', model: 'careful' })],
        models,
        fallback,
      ),
    ).toEqual({ kind: 'model', id: 'careful' })
    // A fresh handoff's model is the new session's, not this one's.
    expect(loggedModel([approved({ fresh: true, model: 'fast' })], models, fallback)).toEqual({ kind: 'default' })
  })

  it('a handoff model that --models no longer names is unknown; a request to an unknown model changes nothing', () => {
    expect(loggedModel([approved({ model: 'fast' })], {}, fallback)).toEqual({ kind: 'unknown', name: 'fast' })
    // Once a request went to it, the host resumes from the header, and warns itself when --models lacks it.
    expect(loggedModel([approved({ model: 'fast' }), header('planmode-offline:fast')], {}, fallback)).toEqual({ kind: 'default' })
    expect(
      loggedModel([approved({ model: 'fast' }), header('planmode-offline:fast'), header('planmode-offline:planner-1')], {}, fallback),
    ).toEqual({ kind: 'default' })
    expect(loggedModel([header('other:model')], models, fallback)).toEqual({ kind: 'default' })
  })
})
