import { readFile } from 'node:fs/promises'
import { localAnswers } from '@planmode/host'
import {
  AnswerInboxError,
  personTextProblem,
  type AnswerInbox,
  type AnswerResult,
  type OpenAsk,
  type OpenAsks,
  type QuestionAnswerer,
  type UserAnswer,
} from '@planmode/seams'
import { postgresAnswers } from '@planmode/store-postgres'
import { answersFor, type AnswerChoice } from './answer-choice.js'
import { parseCommand, picksFor, UsageError, type Command, type StoreChoice } from './arguments.js'
import { EXIT_CODES } from './exit-codes.js'
import { sessionIdsOf } from './session-ids.js'
import { shellWord, shown, shownLines, terminalJson } from './terminal-text.js'

/** Where `planmode` writes and what it reads from its environment. @public */
export interface PlanmodeIo {
  /** Where listings and the confirmation of an answer go. */
  readonly stdout: { write(text: string): unknown }
  /** Where refusals, usage problems and failures go. */
  readonly stderr: { write(text: string): unknown }
  /** `PLANMODE_STORE` (a postgres:// URL, used when neither `--store` nor `--dir` is given). Default: `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

const HELP = `planmode — answer an agent's open questions from another terminal

  planmode questions [<session>] [--json]
      Lists the questions the session's log leaves open, and whether a
      process is waiting for their answers; without a session, every
      session of the folder or schema that has one.

  planmode answer <session> <questionId> approve|keep|stop [--feedback <text>]
                  [--comment <line>:<text>]... [--edit-file <plan.md>]
                  [--fresh] [--model <id>] [--by <id>[:<name>]] [--json]
      Answers a plan review: approve (with --edit-file: your version of the
      plan; --fresh / --model: a handoff the review offers), keep planning
      (--feedback says what to change, --comment remarks on plan lines), or
      stop planning.

  planmode answer <session> <questionId> --option <label>... [--text <text>] [--by …]
      Answers any other question (an ask of several questions:
      --option <question id>=<label>).

  Where the sessions are (one of):
      --dir <folder>         JSONL sessions (default ~/.planmode/sessions, as pnpm start)
      --store postgres://…   PostgreSQL (or env PLANMODE_STORE), --schema <name> (default planmode)

  --timeout <seconds>  how long to wait for the writer's reply (default 60)

  Exit codes: 0 answered; 2 bad command line; 3 no such session; 4 no such
  question; 5 already answered; 6 question closed; 7 the answer does not fit;
  8 nobody waits for it; 9 the writer ended before it logged the answer;
  10 the store cannot be reached; 11 sent, outcome unknown; 1 anything else.
`

/** A submitter for `store`, and how to let it go. */
function inboxOf(store: StoreChoice): { inbox: AnswerInbox; end(): Promise<void> } {
  if (store.kind === 'dir') return { inbox: localAnswers({ dir: store.dir }), end: () => Promise.resolve() }
  const answers = postgresAnswers({ connection: store.url, ...(store.schema === undefined ? {} : { schema: store.schema }) })
  return { inbox: answers, end: () => answers.end() }
}

const where = (store: StoreChoice): string => (store.kind === 'dir' ? store.dir : `schema ${store.schema ?? 'planmode'}`)

/** `planmode answer …` for the ask, as a line a reader can paste: the store's flags repeated. */
function answerHint(ask: OpenAsk, session: string, store: StoreChoice): string {
  const review = ask.question.length === 1 && ask.question[0]!.intent?.kind === 'plan-review'
  const what = review
    ? 'approve|keep|stop [--feedback …] [--comment N:text]'
    : `--option ${ask.question.length > 1 ? '<question id>=' : ''}<label>`
  const flags = store.flags.map(shellWord).join(' ')
  return `planmode answer ${shellWord(session)} ${shellWord(ask.questionId)} ${what}${flags === '' ? '' : ` ${flags}`}`
}

function describeAsk(ask: OpenAsk, session: string, store: StoreChoice): string {
  const lines = [`${shown(ask.questionId)}  asked by agent ${shown(ask.agent)} (seq ${ask.seq})`]
  for (const question of ask.question) {
    lines.push(`  ${shown(question.header)}: ${shown(question.question)}`)
    if (question.intent?.kind === 'plan-review' && typeof question.detail === 'string') {
      const title = /^\s*#{1,6}\s+(.+)$/m.exec(question.detail)?.[1]?.trim() ?? 'Plan'
      lines.push(`  plan: "${shown(title)}" (${question.detail.split('\n').length} lines)`)
    } else if (question.detail !== undefined) lines.push(`  ${shown(question.detail.split('\n')[0]!)}`)
    lines.push(
      `  options: ${question.options.map((option) => shown(option.label)).join(' | ')}${question.multiSelect === true ? ' (several may be chosen)' : ''}`,
    )
  }
  lines.push(`  answer: ${answerHint(ask, session, store)}`)
  return lines.join('\n')
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`

/** One session's open asks, as `planmode questions` prints them. */
function describeSession(session: string, asks: OpenAsks, store: StoreChoice, heading: string): string {
  const count = asks.open.length
  const writer = asks.writer ? 'a process is waiting for answers' : 'no process is waiting for answers: they would be refused'
  const lines = [`${heading}: ${count === 0 ? 'no open questions' : `${plural(count, 'open question')}; ${writer}`}`]
  for (const ask of asks.open) lines.push('', describeAsk(ask, session, store))
  return lines.join('\n') + '\n'
}

async function listQuestions(command: Extract<Command, { kind: 'questions' }>, io: PlanmodeIo): Promise<number> {
  if (command.session === undefined) return listEverySession(command, io)
  const { inbox, end } = inboxOf(command.store)
  let asks: OpenAsks
  try {
    asks = await inbox.questions(command.session)
  } catch (error) {
    if (AnswerInboxError.isInstance(error)) {
      io.stderr.write(`planmode: ${shown(error.message)}\n`)
      return EXIT_CODES[error.code]
    }
    throw error
  } finally {
    await end()
  }
  if (command.json) io.stdout.write(terminalJson(asks, 2) + '\n')
  else
    io.stdout.write(
      describeSession(command.session, asks, command.store, `session ${shown(command.session)} (${shown(where(command.store))})`),
    )
  return EXIT_CODES.ok
}

/**
 * `planmode questions` without a session: every session of the store with
 * an open question, in id order. A session that cannot be read is named on
 * stderr and the rest are listed (exit `UNAVAILABLE` then); one that went
 * away meanwhile is left out.
 */
async function listEverySession(command: Extract<Command, { kind: 'questions' }>, io: PlanmodeIo): Promise<number> {
  let ids: string[]
  try {
    ids = await sessionIdsOf(command.store)
  } catch (error) {
    io.stderr.write(
      `planmode: cannot list the sessions in ${shown(where(command.store))}: ${shown(error instanceof Error ? error.message : String(error))}\n`,
    )
    return EXIT_CODES.UNAVAILABLE
  }
  const { inbox, end } = inboxOf(command.store)
  const found: { session: string; asks: OpenAsks }[] = []
  let unreadable = 0
  try {
    for (const session of ids) {
      try {
        const asks = await inbox.questions(session)
        if (asks.open.length > 0) found.push({ session, asks })
      } catch (error) {
        if (!AnswerInboxError.isInstance(error)) throw error
        if (error.code === 'UNKNOWN_SESSION') continue
        unreadable++
        io.stderr.write(`planmode: session ${shown(session)}: ${shown(error.message)}\n`)
      }
    }
  } finally {
    await end()
  }
  if (command.json)
    io.stdout.write(
      terminalJson(
        found.map(({ session, asks }) => ({ session, ...asks })),
        2,
      ) + '\n',
    )
  else {
    const place = `${shown(where(command.store))} (${ids.length === 0 ? 'no sessions' : plural(ids.length, 'session')})`
    io.stdout.write(
      found.length === 0 ? `no open questions in ${place}\n` : `${plural(found.length, 'session')} with open questions in ${place}\n`,
    )
    for (const { session, asks } of found)
      io.stdout.write(`\n${describeSession(session, asks, command.store, `session ${shown(session)}`)}`)
  }
  return unreadable > 0 ? EXIT_CODES.UNAVAILABLE : EXIT_CODES.ok
}

/** The answers the command line makes for the ask, or a usage problem. */
async function answersOf(command: Extract<Command, { kind: 'answer' }>, ask: OpenAsk | undefined): Promise<UserAnswer[]> {
  const questions = ask?.question
  // Not open (settled, unknown, or gone): the refusal says which. No answers at all stands in: it can never be applied.
  if (questions === undefined) return []
  let choice: AnswerChoice
  if (command.decision !== undefined) {
    let edit: string | undefined
    if (command.editFile !== undefined) {
      try {
        edit = await readFile(command.editFile, 'utf8')
      } catch (error) {
        throw new UsageError(`--edit-file: cannot read ${command.editFile} (${(error as Error).message})`)
      }
    }
    const handoff =
      command.fresh || command.model !== undefined
        ? { ...(command.fresh ? { fresh: true } : {}), ...(command.model === undefined ? {} : { model: command.model }) }
        : undefined
    choice = {
      decision: command.decision,
      ...(command.feedback === undefined ? {} : { feedback: command.feedback }),
      ...(command.comments.length === 0 ? {} : { comments: command.comments }),
      ...(edit === undefined ? {} : { edit }),
      ...(handoff === undefined ? {} : { handoff }),
    }
  } else choice = picksFor(command.options, command.text, questions.length > 1)
  const made = answersFor(questions, choice)
  if (!made.ok) throw new UsageError(made.problem)
  return made.answers
}

/** The command-line flag each member named by `personTextProblem` came from. */
const FLAG_OF: readonly [RegExp, string][] = [
  [/^by\./, '--by'],
  [/^answers\[\d+\]\.custom/, '--feedback or --text'],
  [/^answers\[\d+\]\.edit/, '--edit-file'],
  [/^answers\[\d+\]\.comments/, '--comment'],
  [/^answers\[\d+\]\.selected/, '--option'],
  [/^answers\[\d+\]\.handoff/, '--model'],
]

/**
 * Refuses, before anything is sent, an answer the writer may not log
 * (SPEC §22.4: text that is not well-formed or holds U+0000; a `--by` with a
 * control character, a bidirectional control or nothing visible). The
 * seams' rules decide; this only names the flag.
 */
function refuseUnloggableText(answers: readonly UserAnswer[], by: QuestionAnswerer | undefined): void {
  const problem = personTextProblem(answers, by)
  if (problem === undefined) return
  const flag = FLAG_OF.find(([member]) => member.test(problem))?.[1]
  throw new UsageError(`cannot send this answer: ${problem}${flag === undefined ? '' : ` (from ${flag})`}; nothing was sent`)
}

function report(result: AnswerResult, command: Extract<Command, { kind: 'answer' }>, io: PlanmodeIo): number {
  if (command.json) (result.status === 'accepted' ? io.stdout : io.stderr).write(terminalJson(result) + '\n')
  switch (result.status) {
    case 'accepted':
      if (!command.json)
        io.stdout.write(
          `answered question ${shown(result.questionId)} of session ${shown(command.session)} (logged at seq ${result.seq}, submission ${shown(result.submission)})\n`,
        )
      return EXIT_CODES.ok
    case 'refused':
      if (!command.json) io.stderr.write(`planmode: refused (${shown(result.code)}): ${shown(result.message)}\n`)
      return EXIT_CODES[result.code] ?? EXIT_CODES.failed
    case 'unknown':
      if (!command.json) io.stderr.write(`planmode: outcome unknown: ${shown(result.message)}\n`)
      return EXIT_CODES.unknown
  }
}

async function answer(command: Extract<Command, { kind: 'answer' }>, io: PlanmodeIo): Promise<number> {
  const { inbox, end } = inboxOf(command.store)
  try {
    let ask: OpenAsk | undefined
    try {
      ask = (await inbox.questions(command.session)).open.find((open) => open.questionId === command.questionId)
    } catch (error) {
      if (!AnswerInboxError.isInstance(error)) throw error
      io.stderr.write(`planmode: refused (${error.code}): ${shown(error.message)}\n`)
      return EXIT_CODES[error.code]
    }
    const answers = await answersOf(command, ask)
    refuseUnloggableText(answers, command.by)
    const signal = AbortSignal.timeout(command.timeoutMs)
    const result = await inbox.submit({
      sessionId: command.session,
      questionId: command.questionId,
      answers,
      ...(command.by === undefined ? {} : { by: command.by }),
      signal,
    })
    return report(result, command, io)
  } finally {
    await end()
  }
}

/**
 * Runs the `planmode` command line (`argv` without `node` and the script)
 * and resolves with its exit code ({@link EXIT_CODES}); never rejects. What
 * the `planmode` bin runs.
 *
 * @example
 * ```ts
 * process.exitCode = await runPlanmode(['questions', 's_123', '--dir', '.sessions'], process)
 * ```
 *
 * @public
 */
export async function runPlanmode(argv: readonly string[], io: PlanmodeIo): Promise<number> {
  try {
    const command = parseCommand(argv, io.env ?? process.env)
    if (command.kind === 'help') {
      io.stdout.write(HELP)
      return EXIT_CODES.ok
    }
    return command.kind === 'questions' ? await listQuestions(command, io) : await answer(command, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`planmode: ${shown(error.message)}\n(planmode help shows every command)\n`)
      return EXIT_CODES.usage
    }
    io.stderr.write(`planmode: failed: ${shownLines(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`)
    return EXIT_CODES.failed
  }
}
