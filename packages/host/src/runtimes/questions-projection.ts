import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent, StandardSchemaV1, UserQuestion } from '@planmode/seams'

/**
 * One ask still waiting for its `question/settled`.
 *
 * @public
 */
export interface OpenQuestion {
  /** The ask's id, as in its `question/asked`. */
  readonly questionId: string
  /** The id of the asking agent. */
  readonly agent: string
  /** The questions as asked, in display order. */
  readonly question: readonly UserQuestion[]
  /** `seq` of its `question/asked`. */
  readonly seq: number
}

/**
 * The wire value of the `questions` projection (and its state): a
 * session's open asks, in ask order.
 *
 * @public
 */
export interface QuestionsView {
  /** Every ask with a `question/asked` and no `question/settled` yet, oldest first. */
  readonly open: readonly OpenQuestion[]
}

declare module '@planmode/seams' {
  interface SessionProjectionMap {
    /** The open questions of a session, from `@planmode/host`'s `questionsProjectionPlugin`. */
    questions: QuestionsView
  }
}

type Issue = StandardSchemaV1.Issue
type Path = readonly PropertyKey[]

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function optionIssues(value: unknown, path: Path, issues: Issue[]): void {
  if (!isObject(value)) return void issues.push({ message: 'expected an object', path })
  for (const key of ['label', 'description']) {
    if (typeof value[key] !== 'string') issues.push({ message: 'expected a string', path: [...path, key] })
  }
}

/** The problems of one asked question: a `UserQuestion` as the seams declare it (other keys are kept, unchecked). */
function questionIssues(value: unknown, path: Path, issues: Issue[]): void {
  if (!isObject(value)) return void issues.push({ message: 'expected an object', path })
  for (const key of ['id', 'header', 'question']) {
    if (typeof value[key] !== 'string') issues.push({ message: 'expected a string', path: [...path, key] })
  }
  if (value['detail'] !== undefined && typeof value['detail'] !== 'string')
    issues.push({ message: 'expected a string', path: [...path, 'detail'] })
  const options = value['options']
  if (!Array.isArray(options)) issues.push({ message: 'expected an array', path: [...path, 'options'] })
  else options.forEach((option, at) => optionIssues(option, [...path, 'options', at], issues))
  if (value['multiSelect'] !== undefined && typeof value['multiSelect'] !== 'boolean')
    issues.push({ message: 'expected a boolean', path: [...path, 'multiSelect'] })
  const intent = value['intent']
  if (intent !== undefined && !(isObject(intent) && typeof intent['kind'] === 'string')) {
    issues.push({ message: 'expected an intent with a string kind', path: [...path, 'intent'] })
  }
}

function questionListIssues(value: unknown, path: Path, issues: Issue[]): void {
  if (!Array.isArray(value)) return void issues.push({ message: 'expected an array', path })
  value.forEach((question, at) => questionIssues(question, [...path, at], issues))
}

const OPEN_KEYS: ReadonlySet<string> = new Set(['questionId', 'agent', 'question', 'seq'])

function openIssues(value: unknown, at: number, issues: Issue[]): void {
  const path = ['open', at]
  if (!isObject(value)) return void issues.push({ message: 'expected an object', path })
  for (const key of ['questionId', 'agent']) {
    if (typeof value[key] !== 'string') issues.push({ message: 'expected a string', path: [...path, key] })
  }
  if (!Number.isInteger(value['seq']) || (value['seq'] as number) < 0)
    issues.push({ message: 'expected an integer ≥ 0', path: [...path, 'seq'] })
  questionListIssues(value['question'], [...path, 'question'], issues)
  for (const key of Object.keys(value)) if (!OPEN_KEYS.has(key)) issues.push({ message: 'unexpected key', path: [...path, key] })
}

/** Validates a `questions` wire value: exactly `{ open: OpenQuestion[] }`, ids unique. */
const questionsSchema: StandardSchemaV1<unknown, QuestionsView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/host',
    validate(value) {
      if (!isObject(value)) return { issues: [{ message: 'expected an object' }] }
      const issues: Issue[] = []
      const open = value['open']
      if (!Array.isArray(open)) issues.push({ message: 'expected an array', path: ['open'] })
      else {
        open.forEach((entry, at) => openIssues(entry, at, issues))
        const ids = open.map((entry: unknown) => (isObject(entry) ? entry['questionId'] : undefined))
        ids.forEach((id, at) => {
          if (typeof id === 'string' && ids.indexOf(id) !== at)
            issues.push({ message: 'a questionId open twice', path: ['open', at, 'questionId'] })
        })
      }
      for (const key of Object.keys(value)) if (key !== 'open') issues.push({ message: 'unexpected key', path: [key] })
      return issues.length > 0 ? { issues } : { value: value as unknown as QuestionsView }
    },
  },
}

/** The open question a `question/asked` event opens, or `undefined` when its data is not well formed. */
function opened(event: SessionEvent): OpenQuestion | undefined {
  const data: unknown = event.data
  if (!isObject(data)) return undefined
  const { questionId, agent, question } = data
  if (typeof questionId !== 'string' || typeof agent !== 'string') return undefined
  const issues: Issue[] = []
  questionListIssues(question, [], issues)
  if (issues.length > 0) return undefined
  return { questionId, agent, question: question as readonly UserQuestion[], seq: event.seq }
}

/**
 * Folds one event. Pure: `state` is never changed, and every event that
 * changes nothing (any other type, an id already open, a settlement of an
 * id that is not open, a malformed `question/asked`) returns `state` itself.
 */
function applyQuestions(state: QuestionsView, event: SessionEvent): QuestionsView {
  if (event.type === 'question/asked') {
    const question = opened(event)
    if (question === undefined || state.open.some((open) => open.questionId === question.questionId)) return state
    return { open: [...state.open, question] }
  }
  if (event.type === 'question/settled') {
    if (state.open.length === 0) return state
    const id: unknown = (event.data as { readonly questionId?: unknown } | null)?.questionId
    const at = state.open.findIndex((open) => open.questionId === id)
    if (at < 0) return state
    return { open: state.open.length === 1 ? [] : [...state.open.slice(0, at), ...state.open.slice(at + 1)] }
  }
  return state
}

/**
 * The `questions` projection unit: a session's open asks in ask order,
 * folded from `question/asked` and `question/settled` alone (host duty
 * `questions-in-log`), so every process that reads the log (a follower, a
 * restarted host, another tab) shows the same questions waiting. A
 * malformed `question/asked` (one whose questions are not `UserQuestion`s)
 * is ignored. Every other event returns the same state reference.
 *
 * @public
 */
export const questionsProjection: ProjectionUnit<QuestionsView, QuestionsView> = {
  key: 'questions',
  stateVersion: 1,
  initial: () => ({ open: [] }),
  apply: applyQuestions,
  view: (state) => state,
  schema: questionsSchema,
}

/**
 * Registers {@link questionsProjection} while a `sessionProjections`
 * registry is composed; the `questions` key leaves snapshots when the
 * plugin is disposed. Opt-in: `hostPlugin` does not load it. Takes no
 * config.
 *
 * @example
 * ```ts
 * root.plugin(questionsProjectionPlugin)
 * const { open } = root.require('sessionProjections').snapshot(session).values.questions!
 * ```
 *
 * @public
 */
export const questionsProjectionPlugin: Plugin = {
  name: '@planmode/host/questions-projection',
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(questionsProjection))
    })
  },
}
