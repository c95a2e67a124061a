import { keywords } from './keywords.js'
import { asksForUndo, undoRecipe } from './undo-recipe.js'

/** A tool call the offline model will make. */
export interface PlannedCall {
  readonly name: string
  readonly input: Record<string, unknown>
}

/** What the offline model knows how to plan and carry out for one kind of goal. */
export interface Recipe {
  readonly id: string
  /** Files worth reading, given the workspace listing. */
  filesToRead(listed: readonly string[]): string[]
  /** The first search of the exploration. */
  readonly searchQuery: string | undefined
  /** A search that checks a piece of feedback, if any. */
  revisionQuery(feedback: string): string | undefined
  title(goal: string): string
  /** Numbered plan steps (markdown), given all feedback so far. */
  steps(feedback: readonly string[], files: readonly string[]): string[]
  /** How each feedback item is addressed. */
  addressed(feedback: string): string
  verification(files: readonly string[]): string[]
  outOfScope(): string[]
  /** The implementation, one array of calls per model step. */
  implementation(feedback: readonly string[], plan: string, goal: string): PlannedCall[][]
  /** The closing summary once the implementation ran. */
  summary(feedback: readonly string[]): string
  /**
   * Carried out tests first, when the host tracks the plan: `tests` are
   * written and plan step `step` marked done at once, before `code` exists
   * (a host that checks steps, SPEC §25, refuses it); then `code`, and the
   * steps are marked again.
   */
  readonly testFirst?: { readonly step: number; readonly tests: readonly PlannedCall[]; readonly code: readonly PlannedCall[] }
}

const wantsOverdue = (feedback: readonly string[]): boolean => feedback.some((text) => /overdue|past due|late\b/i.test(text))

const TASKS_ADD_OLD = `  add(title) {
    if (typeof title !== 'string' || title.trim() === '') {
      throw new Error('a task needs a title')
    }
    const id = this.tasks.reduce((max, task) => Math.max(max, task.id), 0) + 1
    const task = { id, title: title.trim(), done: false }
`
const TASKS_ADD_NEW = `  add(title, { due } = {}) {
    if (typeof title !== 'string' || title.trim() === '') {
      throw new Error('a task needs a title')
    }
    if (due !== undefined && !/^\\d{4}-\\d{2}-\\d{2}$/.test(due)) {
      throw new Error(\`a due date looks like 2025-01-31, not \${due}\`)
    }
    const id = this.tasks.reduce((max, task) => Math.max(max, task.id), 0) + 1
    const task = { id, title: title.trim(), done: false }
    if (due !== undefined) task.due = due
`
const FORMAT_OLD = `export function formatTask(task) {
  const box = task.done ? '[x]' : '[ ]'
  return \`\${box} \${task.id}. \${task.title}\`
}

export function formatList(tasks) {
  if (tasks.length === 0) return 'Nothing to do.'
  return tasks.map(formatTask).join('\\n')
}
`
const formatNew = (overdue: boolean): string => `const today = () => new Date().toISOString().slice(0, 10)
${
  overdue
    ? `
export function isOverdue(task, on = today()) {
  return !task.done && task.due !== undefined && task.due < on
}
`
    : ''
}
export function formatTask(task, on = today()) {
  const box = task.done ? '[x]' : '[ ]'
  let line = \`\${box} \${task.id}. \${task.title}\`
  if (task.due !== undefined) line += \` (due \${task.due})\`${overdue ? "\n  if (isOverdue(task, on)) line += ' OVERDUE'" : ''}
  return line
}

export function formatList(tasks, on = today()) {
  if (tasks.length === 0) return 'Nothing to do.'
  return tasks.map((task) => formatTask(task, on)).join('\\n')
}
`
const CLI_ADD_OLD = `    case 'add': {
      const task = list.add(rest.join(' '))
`
const CLI_ADD_NEW = `    case 'add': {
      const at = rest.indexOf('--due')
      const due = at >= 0 ? rest[at + 1] : undefined
      const words = at >= 0 ? [...rest.slice(0, at), ...rest.slice(at + 2)] : rest
      const task = list.add(words.join(' '), { due })
`
const dueTest = (overdue: boolean): string => `import assert from 'node:assert/strict'
import { test } from 'node:test'
import { run } from '../src/cli.js'
import { formatTask${overdue ? ', isOverdue' : ''} } from '../src/format.js'
import { TaskList } from '../src/tasks.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

test('add keeps a due date', () => {
  assert.equal(new TaskList().add('pay rent', { due: '2025-02-01' }).due, '2025-02-01')
})

test('add refuses a malformed due date', () => {
  assert.throws(() => new TaskList().add('pay rent', { due: 'tomorrow' }), /due date/)
})

test('formatTask shows the due date', () => {
  assert.equal(formatTask({ id: 1, title: 'x', done: false, due: '2025-02-01' }, '2025-01-01'), '[ ] 1. x (due 2025-02-01)')
})

test('tasks add --due stores the date', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tasks-'))
  try {
    const file = join(dir, 'tasks.json')
    assert.equal(run(['add', 'pay', 'rent', '--due', '2025-02-01'], file), 'Added 1. pay rent')
    assert.match(run(['list'], file), /pay rent \\(due 2025-02-01\\)/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
${
  overdue
    ? `
test('an open task past its due date is overdue', () => {
  const task = { id: 1, title: 'x', done: false, due: '2025-01-01' }
  assert.equal(isOverdue(task, '2025-01-02'), true)
  assert.equal(isOverdue({ ...task, done: true }, '2025-01-02'), false)
  assert.equal(formatTask(task, '2025-01-02'), '[ ] 1. x (due 2025-01-01) OVERDUE')
})
`
    : ''
}`

/** The scripted recipe for the sample workspace: due dates for tiny-tasks. */
export const dueDatesRecipe: Recipe = {
  id: 'due-dates',
  filesToRead: () => ['src/tasks.js', 'src/format.js', 'src/cli.js'],
  searchQuery: 'title',
  revisionQuery: (feedback) => (/overdue|past due|late\b/i.test(feedback) ? 'formatList' : keywords(feedback)[0]),
  title: () => 'Plan: due dates for tasks',
  steps: (feedback) => {
    const overdue = wantsOverdue(feedback)
    const steps = [
      '`src/tasks.js`: `add(title, { due })` accepts an optional `due` date as `YYYY-MM-DD`, refuses anything else with a clear error, and stores it on the task only when given (old `tasks.json` files stay valid).',
      overdue
        ? "`src/format.js`: `formatTask(task, on)` appends `(due YYYY-MM-DD)`, and a new `isOverdue(task, on)` flags an open task whose date is before `on` with `OVERDUE`; `formatList` passes today's date down so `tasks list` shows both."
        : '`src/format.js`: `formatTask(task, on)` appends `(due YYYY-MM-DD)` when a task has one; `formatList` passes the date down.',
      '`src/cli.js`: `tasks add <title> --due YYYY-MM-DD` takes the flag out of the title and passes it to `add`; the usage line mentions it.',
      `\`test/due-dates.test.js\`: storing, refusing a malformed date, formatting, the \`--due\` flag end to end${overdue ? ', and the overdue flag (open vs done, before vs on the day)' : ''}.`,
      '`README.md`: one usage line for `--due`.',
    ]
    for (const text of feedback) {
      if (!/overdue|past due|late\b/i.test(text)) steps.push(`From your review: ${text}`)
    }
    return steps
  },
  addressed: (feedback) =>
    /overdue|past due|late\b/i.test(feedback)
      ? 'step 2 now adds `isOverdue` and flags overdue tasks in `tasks list`; step 4 tests it.'
      : 'added as a step of its own.',
  verification: () => [
    '`npm test` (node --test) passes, old and new tests.',
    '`tasks add "pay rent" --due 2025-02-01` then `tasks list` shows the date.',
  ],
  outOfScope: () => ['Reminders, time zones and times of day: dates are plain `YYYY-MM-DD` strings compared as text.'],
  implementation: (feedback) => {
    const overdue = wantsOverdue(feedback)
    return [
      [
        { name: 'edit_file', input: { path: 'src/tasks.js', old_string: TASKS_ADD_OLD, new_string: TASKS_ADD_NEW } },
        { name: 'edit_file', input: { path: 'src/format.js', old_string: FORMAT_OLD, new_string: formatNew(overdue) } },
        { name: 'edit_file', input: { path: 'src/cli.js', old_string: CLI_ADD_OLD, new_string: CLI_ADD_NEW } },
      ],
      [
        {
          name: 'edit_file',
          input: {
            path: 'src/cli.js',
            old_string: "'usage: tasks add <title> | tasks list",
            new_string: "'usage: tasks add <title> [--due YYYY-MM-DD] | tasks list",
          },
        },
        { name: 'write_file', input: { path: 'test/due-dates.test.js', content: dueTest(overdue) } },
        {
          name: 'edit_file',
          input: {
            path: 'README.md',
            old_string: 'tasks add "Write the release notes"\n',
            new_string: `tasks add "Write the release notes"\ntasks add "Pay rent" --due 2025-02-01${overdue ? '   # shown as OVERDUE once the date has passed' : ''}\n`,
          },
        },
      ],
    ]
  },
  summary: (feedback) =>
    `Tasks now take an optional due date (\`tasks add <title> --due YYYY-MM-DD\`), shown by \`tasks list\`${
      wantsOverdue(feedback) ? ', with overdue open tasks flagged `OVERDUE`' : ''
    }. Tests are in \`test/due-dates.test.js\`; run \`npm test\` to check.`,
}

const CODE = /\.(c|m)?(j|t)sx?$|\.(py|go|rs|rb|java|kt|cs|php|swift|c|h|cpp)$/
const TEST = /(^|\/)(test|tests|__tests__|spec)\/|\.(test|spec)(-d)?\.[a-z]+$|_test\.[a-z]+$/

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'plan'
  )
}

function capitalise(text: string): string {
  const trimmed = text.trim().replace(/[.!]+$/, '')
  const short = trimmed.length > 60 ? `${trimmed.slice(0, 57)}...` : trimmed
  return short.charAt(0).toUpperCase() + short.slice(1)
}

/** The fallback recipe for any other goal or workspace. */
export function genericRecipe(goal: string, listed: readonly string[] = []): Recipe {
  const words = keywords(goal)
  const listedTests = listed.filter((file) => !file.endsWith('/') && TEST.test(file))
  const score = (file: string): number => words.filter((word) => file.toLowerCase().includes(word.replace(/s$/, ''))).length
  return {
    id: 'generic',
    filesToRead: (listed) => {
      const files = listed.filter((file) => !file.endsWith('/'))
      const readme = files.find((file) => /^readme(\.md)?$/i.test(file))
      const code = files
        .filter((file) => CODE.test(file) && !TEST.test(file))
        .map((file, index) => ({ file, index, score: score(file) }))
        .sort((a, b) => b.score - a.score || a.index - b.index)
        .slice(0, 2)
        .map((entry) => entry.file)
      const picked = [...(readme === undefined ? [] : [readme]), ...code]
      return picked.length > 0 ? picked : files.slice(0, 2)
    },
    searchQuery: words[0],
    revisionQuery: (feedback) => keywords(feedback)[0],
    title: () => `Plan: ${capitalise(goal)}`,
    steps: (feedback, files) => {
      const code = files.filter((file) => CODE.test(file) && !TEST.test(file))
      const target = code[0] === undefined ? 'the code that handles it' : `\`${code[0]}\``
      const tests = listedTests
      const steps = [
        `Change ${target} so that it does what was asked: ${goal.trim().replace(/[.!]+$/, '')}.`,
        `Cover the change with a test${tests[0] === undefined ? '' : ` next to \`${tests[0]}\``}.`,
        'Document the change in the README.',
      ]
      for (const text of feedback) steps.push(`From your review: ${text}`)
      return steps
    },
    addressed: () => 'added as a step of its own.',
    verification: () => ["Run the project's tests and try the change by hand."],
    outOfScope: () => ['Anything not named in the goal above.'],
    implementation: (_feedback, plan) => [
      [
        {
          name: 'write_file',
          input: { path: `PLAN-${slug(goal)}.md`, content: `${plan.trim()}\n\nStatus: approved; recorded by the offline demo model.\n` },
        },
      ],
    ],
    summary: () =>
      `I recorded the approved plan in \`PLAN-${slug(goal)}.md\`. The offline demo model only carries out its scripted change on the sample workspace; connect a real model (\`--base-url\`/\`--model\` or \`DEEPSEEK_API_KEY\`) to have the plan implemented.`,
  }
}

/** Picks the recipe for a goal: the scripted one on the sample workspace, else the generic one. */
export function pickRecipe(goal: string, listed: readonly string[] | undefined): Recipe {
  const sample = ['src/tasks.js', 'src/format.js', 'src/cli.js'].every((file) => listed?.includes(file) === true)
  if (sample && /\bdue\b|deadline/i.test(goal)) return dueDatesRecipe
  return sample && asksForUndo(goal) ? undoRecipe : genericRecipe(goal, listed)
}
