/**
 * `@planmode/cli`: the `planmode` command line. `planmode questions` lists
 * a session's open questions; `planmode answer` answers one from another
 * terminal (approve, keep or stop a plan review, or pick options), through
 * the session store's answer inbox: the JSONL store's local channel, or
 * PostgreSQL. The library exports what the bin runs.
 *
 * @packageDocumentation
 */
export { answersFor } from './answer-choice.js'
export type { AnswerChoice, ChoiceResult } from './answer-choice.js'
export { EXIT_CODES } from './exit-codes.js'
export { runPlanmode } from './run.js'
export type { PlanmodeIo } from './run.js'
