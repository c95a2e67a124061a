// The scripted recipe for `tasks undo <id>` on the sample workspace, carried out tests first: the model
// writes the tests, marks their step done at once (before the code they test exists), reads the refusal
// of the host's check (SPEC §25), writes the code and marks the step again.
import type { PlannedCall, Recipe } from './recipes.js'

const TEST_FILE = 'test/undo.test.js'

const TESTS = `import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { run } from '../src/cli.js'
import { TaskList } from '../src/tasks.js'

test('reopen makes a finished task open again', () => {
  const list = new TaskList()
  list.add('one')
  list.complete(1)
  assert.equal(list.reopen(1).done, false)
  assert.equal(list.list().length, 1)
})

test('reopen refuses an unknown id', () => {
  assert.throws(() => new TaskList().reopen(7), /no task 7/)
})

test('tasks undo <id> reopens a task', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tasks-'))
  try {
    const file = join(dir, 'tasks.json')
    run(['add', 'pay', 'rent'], file)
    run(['done', '1'], file)
    assert.equal(run(['undo', '1'], file), 'Reopened: pay rent')
    assert.match(run(['list'], file), /\\[ \\] 1\\. pay rent/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
`

const COMPLETE_END = `    task.done = true
    return task
  }
`
const WITH_REOPEN = `    task.done = true
    return task
  }

  reopen(id) {
    const task = this.tasks.find((candidate) => candidate.id === id)
    if (task === undefined) throw new Error(\`no task \${id}\`)
    task.done = false
    return task
  }
`
const CLI_DONE_END = `      return \`Done: \${task.title}\`
    }
`
const CLI_WITH_UNDO = `      return \`Done: \${task.title}\`
    }
    case 'undo': {
      const task = list.reopen(Number(rest[0]))
      save(file, list.tasks)
      return \`Reopened: \${task.title}\`
    }
`

/** The tests, written first (step 1). */
const testCalls: PlannedCall[] = [{ name: 'write_file', input: { path: TEST_FILE, content: TESTS } }]

/** The code the tests exercise (steps 2 and 3). */
const codeCalls: PlannedCall[] = [
  { name: 'edit_file', input: { path: 'src/tasks.js', old_string: COMPLETE_END, new_string: WITH_REOPEN } },
  { name: 'edit_file', input: { path: 'src/cli.js', old_string: CLI_DONE_END, new_string: CLI_WITH_UNDO } },
  {
    name: 'edit_file',
    input: { path: 'src/cli.js', old_string: "| tasks done <id>'", new_string: "| tasks done <id> | tasks undo <id>'" },
  },
]

/** Whether a goal asks for the undo command. */
export const asksForUndo = (goal: string): boolean => /\bundo\b|\breopen/i.test(goal)

/** The scripted recipe for the sample workspace: `tasks undo <id>`, tests first. */
export const undoRecipe: Recipe = {
  id: 'undo',
  filesToRead: () => ['src/tasks.js', 'src/cli.js', 'test/tasks.test.js'],
  searchQuery: 'complete',
  revisionQuery: () => undefined,
  title: () => 'Plan: tasks undo <id>',
  steps: (feedback) => [
    `\`${TEST_FILE}\`: tests first — \`reopen(id)\` opens a finished task again and refuses an unknown id; \`tasks undo <id>\` end to end.`,
    '`src/tasks.js`: `reopen(id)` sets `done` back to false, with the same error as `complete` for an unknown id.',
    '`src/cli.js`: `tasks undo <id>` calls it and says `Reopened: <title>`; the usage line names it.',
    ...feedback.map((text) => `From your review: ${text}`),
  ],
  addressed: () => 'added as a step of its own.',
  verification: () => ['`npm test` (node --test) passes, old and new tests.'],
  outOfScope: () => ['An undo history: `undo` only reopens a finished task.'],
  implementation: () => [testCalls, codeCalls],
  testFirst: { step: 1, tests: testCalls, code: codeCalls },
  summary: () => '`tasks undo <id>` reopens a finished task; `reopen(id)` in `src/tasks.js` does it, and `test/undo.test.js` covers both.',
}
