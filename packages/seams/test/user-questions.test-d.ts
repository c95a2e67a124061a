import { describe, expectTypeOf, it } from 'vitest'
import type {
  AgentHandoffPayload,
  PlanReviewHandoffOffer,
  PlanReviewIntent,
  QuestionAnswerer,
  SessionEventInput,
  QuestionIntent,
  UserAnswer,
  UserAnswerComment,
  UserAnswerHandoff,
  UserQuestion,
  UserQuestionProvider,
} from '@planmode/seams'

describe('user-questions: edit, comments and the plan-review intent (SPEC §10)', () => {
  it('UserAnswer gains optional edit and comments', () => {
    expectTypeOf<UserAnswer['edit']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<UserAnswer['comments']>().toEqualTypeOf<readonly UserAnswerComment[] | undefined>()
    expectTypeOf<UserAnswerComment>().toEqualTypeOf<{ readonly line: number; readonly text: string; readonly by?: QuestionAnswerer }>()
    const full: UserAnswer = { id: 'plan-review', selected: ['Approve'], edit: '# Plan', comments: [{ line: 1, text: 'why?' }] }
    expectTypeOf(full).toMatchTypeOf<UserAnswer>()
  })

  it('an old answer (selected and custom only) still type-checks', () => {
    const old: UserAnswer = { id: 'plan-review', selected: ['Keep planning'], custom: 'more tests' }
    expectTypeOf(old).toMatchTypeOf<UserAnswer>()
  })

  it('an old provider that answers without edit or comments is still a provider', () => {
    const provider = { ask: async () => [{ id: 'plan-review', selected: ['Approve'] }] as const }
    expectTypeOf(provider).toMatchTypeOf<UserQuestionProvider>()
  })

  it('the plan-review intent names keep and stop and declares editable and comments', () => {
    expectTypeOf<PlanReviewIntent['kind']>().toEqualTypeOf<'plan-review'>()
    expectTypeOf<PlanReviewIntent['approve']>().toEqualTypeOf<string>()
    expectTypeOf<PlanReviewIntent['keep']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<PlanReviewIntent['stop']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<PlanReviewIntent['editable']>().toEqualTypeOf<boolean | undefined>()
    expectTypeOf<PlanReviewIntent['comments']>().toEqualTypeOf<boolean | undefined>()
    expectTypeOf<PlanReviewIntent>().toMatchTypeOf<QuestionIntent>()
    const intent: QuestionIntent = {
      kind: 'plan-review',
      approve: 'Approve',
      keep: 'Keep planning',
      stop: 'Stop planning',
      editable: true,
      comments: true,
    }
    expectTypeOf(intent).toMatchTypeOf<QuestionIntent>()
  })

  it('an old plan-review intent ({ kind, approve }) and other intents still type-check', () => {
    const question: UserQuestion = {
      id: 'plan-review',
      header: 'Plan review',
      question: 'Approve?',
      options: [{ label: 'Approve', description: 'yes' }],
      intent: { kind: 'plan-review', approve: 'Approve' },
    }
    expectTypeOf(question.intent).toEqualTypeOf<QuestionIntent | undefined>()
    const other: QuestionIntent = { kind: 'pick-file', root: '/' }
    expectTypeOf(other).toMatchTypeOf<QuestionIntent>()
  })

  it('SPEC §18: the intent may offer a handoff, the answer may choose one, and agent/handoff carries it to the host', () => {
    expectTypeOf<PlanReviewIntent['handoff']>().toEqualTypeOf<PlanReviewHandoffOffer | undefined>()
    expectTypeOf<PlanReviewHandoffOffer>().toEqualTypeOf<{ readonly fresh: boolean; readonly models: readonly string[] }>()
    expectTypeOf<UserAnswer['handoff']>().toEqualTypeOf<UserAnswerHandoff | undefined>()
    expectTypeOf<UserAnswerHandoff>().toEqualTypeOf<{ readonly fresh?: boolean; readonly model?: string }>()
    const answer: UserAnswer = { id: 'plan-review', selected: ['Approve'], handoff: { fresh: true, model: 'deepseek-chat' } }
    expectTypeOf(answer).toMatchTypeOf<UserAnswer>()
    expectTypeOf<AgentHandoffPayload['model']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<NonNullable<AgentHandoffPayload['fresh']>['first']>().toEqualTypeOf<SessionEventInput>()
    const first: SessionEventInput = { type: 'turn/start', data: { turn: 1 } }
    // @ts-expect-error the data must be the type's
    const wrong: SessionEventInput = { type: 'turn/start', data: { step: 1 } }
    expectTypeOf(first).toMatchTypeOf<SessionEventInput>()
    void wrong
  })
})
