import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatTask } from '../src/format.js'
import { TaskList } from '../src/tasks.js'

test('add numbers tasks from 1', () => {
  const list = new TaskList()
  assert.equal(list.add('one').id, 1)
  assert.equal(list.add('two').id, 2)
})

test('complete hides a task from the default list', () => {
  const list = new TaskList()
  list.add('one')
  list.complete(1)
  assert.deepEqual(list.list(), [])
  assert.equal(list.list({ all: true }).length, 1)
})

test('formatTask shows a box and the id', () => {
  assert.equal(formatTask({ id: 3, title: 'x', done: true }), '[x] 3. x')
})
