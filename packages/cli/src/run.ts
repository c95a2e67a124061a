import { readFile } from 'node:fs/promises'
import { localAnswers } from '@planmode/host'
import { AnswerInboxError, type AnswerInbox, type AnswerResult, type OpenAsk, type OpenAsks, type UserAnswer } from '@planmode/seams'
import { postgresAnswers } from '@planmode/store-postgres'
import { answersFor, type AnswerChoice } from './answer-choice.js'
import { parseCommand, picksFor, UsageError, type Command, type StoreChoice } from './arguments.js'
import { EXIT_CODES } from './exit-codes.js'

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

  planmode questions <session> [--json]
      Lists the questions the session's log leaves open, and whether a
      process is waiting for their answers.

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

function describeAsk(ask: OpenAsk, session: string): string {
  const lines = [`${ask.questionId}  asked by agent ${ask.agent} (seq ${ask.seq})`]
  for (const question of ask.question) {
    lines.push(`  ${question.header}: ${question.question}`)
    if (question.intent?.kind === 'plan-review' && typeof question.detail === 'string') {
      const title = /^\s*#{1,6}\s+(.+)$/m.exec(question.detail)?.[1]?.trim() ?? 'Plan'
      lines.push(`  plan: ${JSON.stringify(title)} (${question.detail.split('\n').length} lines)`)
    } else if (question.detail !== undefined) lines.push(`  ${question.detail.split('\n')[0]}`)
    lines.push(`  options: ${question.options.map((option) => option.label).join(' | ')}${question.multiSelect === true ? ' (several may be chosen)' : ''}`)
  }
  const review = ask.question.length === 1 && ask.question[0]!.intent?.kind === 'plan-review'
  lines.push(
    review
      ? `  answer: planmode answer ${session} ${ask.questionId} approve|keep|stop [--feedback …] [--comment N:text]`
      : `  answer: planmode answer ${session} ${ask.questionId} --option ${ask.question.length > 1 ? '<question id>=' : ''}<label>`,
  )
  return lines.join('\n')
}

async function listQuestions(command: Extract<Command, { kind: 'questions' }>, io: PlanmodeIo): Promise<number> {
  const { inbox, end } = inboxOf(command.store)
  let asks: OpenAsks
  try {
    asks = await inbox.questions(command.session)
  } catch (error) {
    if (AnswerInboxError.isInstance(error)) {
      io.stderr.write(`planmode: ${error.message}\n`)
      return EXIT_CODES[error.code]
    }
    throw error
  } finally {
    await end()
  }
  if (command.json) {
    io.stdout.write(JSON.stringify(asks, null, 2) + '\n')
    return EXIT_CODES.ok
  }
  const count = asks.open.length
  const writer = asks.writer ? 'a process is waiting for answers' : 'no process is waiting for answers: they would be refused'
  io.stdout.write(`session ${command.session} (${where(command.store)}): ${count === 0 ? 'no open questions' : `${count} open question${count === 1 ? '' : 's'}; ${writer}`}\n`)
  for (const ask of asks.open) io.stdout.write(`\n${describeAsk(ask, command.session)}\n`)
  return EXIT_CODES.ok
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
    const handoff = command.fresh || command.model !== undefined ? { ...(command.fresh ? { fresh: true } : {}), ...(command.model === undefined ? {} : { model: command.model }) } : undefined
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

function report(result: AnswerResult, command: Extract<Command, { kind: 'answer' }>, io: PlanmodeIo): number {
  if (command.json) (result.status === 'accepted' ? io.stdout : io.stderr).write(JSON.stringify(result) + '\n')
  switch (result.status) {
    case 'accepted':
      if (!command.json) io.stdout.write(`answered question ${result.questionId} of session ${command.session} (logged at seq ${result.seq}, submission ${result.submission})\n`)
      return EXIT_CODES.ok
    case 'refused':
      if (!command.json) io.stderr.write(`planmode: refused (${result.code}): ${result.message}\n`)
      return EXIT_CODES[result.code] ?? EXIT_CODES.failed
    case 'unknown':
      if (!command.json) io.stderr.write(`planmode: outcome unknown: ${result.message}\n`)
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
      io.stderr.write(`planmode: refused (${error.code}): ${error.message}\n`)
      return EXIT_CODES[error.code]
    }
    const answers = await answersOf(command, ask)
    const signal = AbortSignal.timeout(command.timeoutMs)
    const result = await inbox.submit({ sessionId: command.session, questionId: command.questionId, answers, ...(command.by === undefined ? {} : { by: command.by }), signal })
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
      io.stderr.write(`planmode: ${error.message}\n(planmode help shows every command)\n`)
      return EXIT_CODES.usage
    }
    io.stderr.write(`planmode: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    return EXIT_CODES.failed
  }
}
