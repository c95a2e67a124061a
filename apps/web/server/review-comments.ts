// The comments people share on an open plan review, in the session's log: two log-only events of the web app and the
// `reviewComments` projection that folds them, so every server that follows the log shows, checks and sends the same
// comments at the same asOfSeq.
import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, QuestionAnswerer, StandardSchemaV1 } from '@planmode/seams'

/** A comment shared on an open plan review: logged, shown in every tab of every server, passed on with the answer. */
export interface SharedComment {
  /** The server's id of the comment (the `:cid` of its removal). */
  readonly id: string
  /** The 1-based line of the plan it is about. */
  readonly line: number
  /** The remark. */
  readonly text: string
  /** Who wrote it (absent without `--users`). */
  readonly by?: QuestionAnswerer
}

/** The data of `web/review-comment`: `comment` was shared on the open question `questionId`. */
export interface ReviewCommentEventData {
  readonly questionId: string
  readonly comment: SharedComment
}

/** The data of `web/review-comment-removed`: comment `commentId` of question `questionId` was removed, by `by`. */
export interface ReviewCommentRemovedEventData {
  readonly questionId: string
  readonly commentId: string
  readonly by?: QuestionAnswerer
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * Log-only, from `@planmode/web`: a comment shared on the open plan
     * review `questionId` before anyone decides it (appended by the server
     * that writes the session; never in the model transcript).
     */
    'web/review-comment': ReviewCommentEventData
    /** Log-only, from `@planmode/web`: a shared comment was removed from the open review `questionId`. */
    'web/review-comment-removed': ReviewCommentRemovedEventData
  }
  interface SessionProjectionMap {
    /** The comments shared on each open question, from `@planmode/web`. */
    reviewComments: ReviewCommentsView
  }
}

/** The event type of {@link ReviewCommentEventData}. */
export const REVIEW_COMMENT_EVENT = 'web/review-comment'

/** The event type of {@link ReviewCommentRemovedEventData}. */
export const REVIEW_COMMENT_REMOVED_EVENT = 'web/review-comment-removed'

/** The wire value of `reviewComments`: the comments shared on each open question, oldest first, by `questionId` (questions without any are absent). */
export type ReviewCommentsView = Readonly<Record<string, readonly SharedComment[]>>

/** Every open question (asked, not settled) with its comments; a comment on a question that is not open is ignored. */
type OpenComments = Readonly<Record<string, readonly SharedComment[]>>

const schema: StandardSchemaV1<unknown, ReviewCommentsView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/web',
    validate(value) {
      const ok =
        typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((list) => Array.isArray(list))
      return ok ? { value: value as ReviewCommentsView } : { issues: [{ message: 'expected { [questionId]: SharedComment[] }' }] }
    },
  },
}

/**
 * The `reviewComments` unit: a pure fold of `question/asked` (the question
 * is open, with no comment), `web/review-comment` (added at the end),
 * `web/review-comment-removed` (dropped) and `question/settled` (the
 * question and its comments are gone: the answer carried them, or they went
 * with a dismissal, a cancel or a restart).
 */
export const reviewComments: ProjectionUnit<OpenComments, ReviewCommentsView> = {
  key: 'reviewComments',
  stateVersion: 1,
  initial: () => ({}),
  apply(state, event) {
    switch (event.type) {
      case 'question/asked':
        return { ...state, [event.data.questionId]: [] }
      case 'question/settled': {
        if (!Object.hasOwn(state, event.data.questionId)) return state
        const { [event.data.questionId]: _closed, ...rest } = state
        return rest
      }
      case REVIEW_COMMENT_EVENT: {
        const { questionId, comment } = event.data
        return Object.hasOwn(state, questionId) ? { ...state, [questionId]: [...state[questionId]!, comment] } : state
      }
      case REVIEW_COMMENT_REMOVED_EVENT: {
        const { questionId, commentId } = event.data
        const held = Object.hasOwn(state, questionId) ? state[questionId]! : undefined
        if (held === undefined || !held.some((comment) => comment.id === commentId)) return state
        return { ...state, [questionId]: held.filter((comment) => comment.id !== commentId) }
      }
      default:
        return state
    }
  },
  view: (state) => Object.fromEntries(Object.entries(state).filter(([, comments]) => comments.length > 0)),
  schema,
}

/** Registers {@link reviewComments} while a `sessionProjections` registry is composed. */
export const reviewCommentsPlugin: Plugin = {
  name: '@planmode/web/review-comments',
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(reviewComments))
    })
  },
}
