// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { answersFor, EXIT_CODES, runPlanmode, type AnswerChoice, type ChoiceResult, type PlanmodeIo } from '@planmode/cli'

const io: PlanmodeIo = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} }
export const code: Promise<number> = runPlanmode(['help'], io)
const choice: AnswerChoice = { decision: 'keep', feedback: 'split step 2', comments: [{ line: 3, text: 'why?' }] }
export const made: ChoiceResult = answersFor(
  [{ id: 'plan-review', header: 'Plan review', question: 'Approve?', options: [{ label: 'Approve', description: 'go' }] }],
  choice,
)
export const refused: 5 = EXIT_CODES.ALREADY_ANSWERED
