import type { AnswerRefusalCode } from '@planmode/seams'

/**
 * The exit codes of `planmode`: `0` done; `1` an unexpected failure; `2` a
 * command line it cannot use; one code per refusal of an answer (the
 * seams' `AnswerRefusalCode`); `11` when the answer was sent and its
 * outcome could not be learnt (it may still be applied).
 *
 * @public
 */
export const EXIT_CODES = {
  ok: 0,
  failed: 1,
  usage: 2,
  UNKNOWN_SESSION: 3,
  UNKNOWN_QUESTION: 4,
  ALREADY_ANSWERED: 5,
  QUESTION_CLOSED: 6,
  INVALID_ANSWER: 7,
  NO_WRITER: 8,
  WRITER_GONE: 9,
  UNAVAILABLE: 10,
  unknown: 11,
} as const satisfies Record<AnswerRefusalCode | 'ok' | 'failed' | 'usage' | 'unknown', number>
