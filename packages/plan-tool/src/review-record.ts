import type { Agent, QuestionAnswerer, UserAnswerComment } from '@planmode/seams'

/**
 * What a review came to, as recorded in `plan/review`.
 *
 * @public
 */
export type PlanReviewOutcome = 'approved' | 'keep-planning' | 'stopped' | 'dismissed'

/**
 * What an approval handed the plan on to (SPEC §18): only what the user
 * chose, and at least one of the two.
 *
 * @public
 */
export interface PlanHandoffChoice {
  /** The plan is carried out in a fresh session. */
  readonly fresh?: true
  /** The model id the plan is carried out with (one of plan-tool's `handoff.models`). */
  readonly model?: string
}

/**
 * The data of a `plan/review` event (SPEC §11): one review the provider
 * answered or the user dismissed.
 *
 * @public
 */
export interface PlanReviewEventData {
  /** The `exit_plan_mode` call that asked for the review. */
  readonly toolCallId: string
  /** What the review came to. */
  readonly outcome: PlanReviewOutcome
  /**
   * Who decided, when the answer named them (its `by`: `{ id, name? }`,
   * copied). Absent when the provider did not say, on a dismissal and on an
   * unattended approval.
   */
  readonly by?: QuestionAnswerer
  /** Only when the user edited the plan and approved it: the approved text. */
  readonly plan?: string
  /** The user's free text, when there is some (not blank). */
  readonly feedback?: string
  /**
   * The user's line comments, in the order given, when there are any. Each
   * carries `by` (who wrote it) when its entry named someone, else the
   * answer's `by` when there is one; with nobody named anywhere, `{ line, text }`.
   */
  readonly comments?: readonly UserAnswerComment[]
  /** Only on an approval made without asking anyone (`unattended: 'approve'`). */
  readonly unattended?: true
  /** Only on an approval whose review chose a handoff (SPEC §18): what it chose. */
  readonly handoff?: PlanHandoffChoice
}

/**
 * The payload of the `plan/reviewed` context event, emitted after every
 * `plan/review` record.
 *
 * @public
 */
export interface PlanReviewedPayload {
  /** The agent whose `exit_plan_mode` call was reviewed. */
  readonly agent: Agent
  /** The call that asked for the review. */
  readonly toolCallId: string
  /** What the review came to. */
  readonly outcome: PlanReviewOutcome
  /** On every approval: the approved text (the user's edit when there is one, else the plan presented). */
  readonly plan?: string
  /** On an approval whose review chose a handoff (SPEC §18): what it chose. */
  readonly handoff?: PlanHandoffChoice
  /** Who decided, when the answer named them (the record's `by`). */
  readonly by?: QuestionAnswerer
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * A plan review was answered or dismissed. Log-only (never part of the
     * model transcript). Appended by `@planmode/plan-tool` before
     * `exit_plan_mode` returns.
     */
    'plan/review': PlanReviewEventData
  }
}

declare module '@planmode/context' {
  interface Events {
    /**
     * After every `plan/review` record (SPEC §11, §18): notify a person,
     * switch an approval policy after an approval, or follow a handoff.
     * Emitted by `@planmode/plan-tool`; on an approval that chose a handoff
     * it then emits the seams' `agent/handoff`, which hosts carry out.
     */
    'plan/reviewed': (payload: PlanReviewedPayload) => void
  }
}
