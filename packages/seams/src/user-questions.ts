import type { Disposer } from '@planmode/context'
import type { Agent } from './agent.js'

/** One choice of a question. @public */
export interface QuestionOption {
  /** What the user picks; answers carry it in `selected`. */
  readonly label: string
  /** What picking it means. */
  readonly description: string
}

/**
 * The intent of a plan review (`kind: 'plan-review'`): which option labels
 * mean what, and which extra answer members the question honours.
 *
 * @remarks
 * Only `kind` and `approve` are required, so an intent written before the
 * other members existed still type-checks. A provider that does not know
 * `keep`, `stop`, `editable` or `comments` keeps working: it shows the
 * options as they are and answers with `selected`/`custom` only.
 *
 * @public
 */
export interface PlanReviewIntent {
  /** Always `plan-review`. */
  readonly kind: 'plan-review'
  /** The label that means approval. */
  readonly approve: string
  /** The label that means "keep planning" (stay in plan mode, revise the plan). */
  readonly keep?: string
  /** The label that means "stop planning" (leave plan mode without approving). */
  readonly stop?: string
  /** Whether the answer may carry {@link UserAnswer.edit}: the user's edited version of `detail`. */
  readonly editable?: boolean
  /** Whether the answer may carry {@link UserAnswer.comments}: remarks on lines of `detail`. */
  readonly comments?: boolean
  /**
   * What an approval may hand the plan on to (SPEC §18), present only when
   * the question offers a handoff: the answer may then carry
   * {@link UserAnswer.handoff} choosing among these.
   */
  readonly handoff?: PlanReviewHandoffOffer
}

/**
 * The handoff a plan review offers ({@link PlanReviewIntent.handoff}).
 *
 * @public
 */
export interface PlanReviewHandoffOffer {
  /** Whether the approved plan may be carried out in a fresh session. */
  readonly fresh: boolean
  /** The model ids the approved plan may be carried out with (the host resolves them), in display order; `[]` for none. */
  readonly models: readonly string[]
}

/**
 * What a question is for, so a capable UI can render it specially.
 * `plan-review` ({@link PlanReviewIntent}) names the labels of its options
 * and whether edits and line comments are honoured.
 *
 * @public
 */
export type QuestionIntent = PlanReviewIntent | { readonly kind: string; readonly [key: string]: unknown }

/** One question put to the user. @public */
export interface UserQuestion {
  /** Unique within the request; answers refer to it. */
  readonly id: string
  /** A short label, e.g. `Plan review`. */
  readonly header: string
  /** The question itself. */
  readonly question: string
  /** Long-form material the user should read first (markdown). */
  readonly detail?: string
  /** The choices, in display order. */
  readonly options: readonly QuestionOption[]
  /** Whether several options may be selected. */
  readonly multiSelect?: boolean
  /** What the question is for, when a UI should render it specially. */
  readonly intent?: QuestionIntent
}

/** The user's answer to one question. @public */
export interface UserAnswer {
  /** The question answered. */
  readonly id: string
  /** Labels of the selected options. */
  readonly selected: readonly string[]
  /** Free text the user typed instead of (or besides) choosing. */
  readonly custom?: string
  /**
   * The user's edited version of the question's `detail`. Honoured only for
   * a question whose intent allows it (`plan-review` with `editable: true`);
   * ignored otherwise. Providers that do not know it leave it out and keep
   * working.
   */
  readonly edit?: string
  /**
   * Remarks anchored to 1-based lines of the question's `detail`, in the
   * order given. Honoured only for a question whose intent allows them
   * (`plan-review` with `comments: true`); ignored otherwise. Providers
   * that do not know them leave them out and keep working.
   */
  readonly comments?: readonly UserAnswerComment[]
  /**
   * The person who answered, when the provider knows them (a signed-in
   * reviewer of a web UI). The host's user-questions runtime copies it to
   * the `by` of the ask's `question/settled`. Providers that do not know
   * who answered leave it out.
   */
  readonly by?: QuestionAnswerer
  /**
   * How the user wants an approved plan carried out (SPEC §18):
   * `fresh: true` in a new session, `model` with that model. Read only on an
   * approval of a question whose intent offers a handoff
   * ({@link PlanReviewIntent.handoff}), and only what it offers; ignored
   * with any other outcome. `fresh: false` and an absent `model` choose
   * nothing. Providers that do not know it leave it out and keep working.
   */
  readonly handoff?: UserAnswerHandoff
}

/** Who answered a question ({@link UserAnswer.by}): an identity the provider vouches for. @public */
export interface QuestionAnswerer {
  /** A stable id of the person (an account id, a login). */
  readonly id: string
  /** A name to show. */
  readonly name?: string
}

/** What an approval hands the plan on to ({@link UserAnswer.handoff}). @public */
export interface UserAnswerHandoff {
  /** `true`: carry the approved plan out in a fresh session. */
  readonly fresh?: boolean
  /** The id of the model (one the intent offers) to carry the approved plan out with. */
  readonly model?: string
}

/** One remark on a line of a question's `detail` ({@link UserAnswer.comments}). @public */
export interface UserAnswerComment {
  /** The 1-based line of `detail` the remark is about. */
  readonly line: number
  /** The remark. */
  readonly text: string
  /**
   * Who wrote the remark, when the provider knows and it may differ from
   * who answered (several reviewers commented on one review). Absent: the
   * answer's {@link UserAnswer.by}, if any, wrote it. Providers that do not
   * know it leave it out.
   */
  readonly by?: QuestionAnswerer
}

/** One ask: who is asking, what, and when to give up. @public */
export interface AskRequest {
  /** The agent asking; a child owned by a live agent is refused. */
  readonly agent: Agent
  /** The questions, in display order. */
  readonly questions: readonly UserQuestion[]
  /** Aborting it rejects the ask with `ASK_ABORTED`. */
  readonly signal?: AbortSignal
}

/**
 * Something that can put questions to a person: a terminal, a web UI.
 * Reject with a {@link UserQuestionError} of code `ASK_CANCELLED` when the
 * user dismisses the questions to type instead.
 *
 * @public
 */
export interface UserQuestionProvider {
  /** Shows the questions and resolves with one answer per question. Honour `signal`. */
  ask(request: AskRequest): Promise<readonly UserAnswer[]>
}

/**
 * The user-questions seam (service `userQuestions`).
 *
 * @public
 */
export interface UserQuestions {
  /**
   * Asks through the registered provider. Rejects with a
   * {@link UserQuestionError}: `NO_PROVIDER` when none is registered,
   * `NOT_ROOT_AGENT` when the agent is owned by a live agent, `ASK_ABORTED`
   * when the signal aborts, `INVALID_ANSWER` when the provider's answers
   * hold text that may not be logged (SPEC §22.4, `personTextProblem`:
   * the ask is settled `failed` and nothing of the answers is logged); a
   * provider's own rejection passes through.
   *
   * @remarks
   * A child owned by a live agent is refused before any provider is asked
   * (host duty `child-questions` of `@planmode/host-conformance`). A root
   * agent's ask reaches the latest registered provider with the request as
   * given, and the provider's answers come back unchanged (`selected`,
   * `custom`, `edit`, `comments`, `by`, `handoff`): plan-tool's review reads
   * them (duties `review`, `handoff-model` and `handoff-fresh`).
   *
   * Every ask that reaches a provider is in the asking agent's log (duty
   * `questions-in-log`): `question/asked { questionId, agent, question }`
   * before the provider is asked (a failing append rejects the ask, and no
   * provider is asked), then `question/settled { questionId, outcome }` once
   * it ends — `answered` with `answer` (and `by`, when an answer names who
   * answered), `cancelled` (`ASK_CANCELLED`, or the signal aborted),
   * `failed` (any other rejection, with `error`; answers whose text may not
   * be logged, with `INVALID_ANSWER`) — before `ask` settles. A
   * refusal before any provider is asked (`NOT_ROOT_AGENT`, `NO_PROVIDER`,
   * an already-aborted signal) logs nothing.
   */
  ask(request: AskRequest): Promise<readonly UserAnswer[]>
  /** Registers the provider (the latest wins). The disposer removes it. */
  registerProvider(provider: UserQuestionProvider): Disposer
}
