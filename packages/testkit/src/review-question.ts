import type { UserQuestion } from '@planmode/seams'

/**
 * A plan review as plan-tool asks it, for tests that ask one themselves
 * (through a user-questions runtime, a store's answer desk or a child
 * process): Approve, Keep planning and Stop planning, an editable plan of
 * four lines that takes line comments. A child script gets it as JSON (in an
 * environment variable, for instance).
 */
export const REVIEW_QUESTION: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan and leave plan mode?',
  detail: '# Plan\n\n1. read\n2. change',
  options: [
    { label: 'Approve', description: 'leave plan mode' },
    { label: 'Keep planning', description: 'revise' },
    { label: 'Stop planning', description: 'leave without approving' },
  ],
  intent: { kind: 'plan-review', approve: 'Approve', keep: 'Keep planning', stop: 'Stop planning', editable: true, comments: true },
}
