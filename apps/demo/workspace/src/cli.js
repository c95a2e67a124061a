#!/usr/bin/env node
// The command line: tasks add <title> | tasks list [--all] | tasks done <id>
import { formatList } from './format.js'
import { load, save } from './store.js'
import { TaskList } from './tasks.js'

const FILE = 'tasks.json'

export function run(argv, file = FILE) {
  const list = new TaskList(load(file))
  const [command, ...rest] = argv
  switch (command) {
    case 'add': {
      const task = list.add(rest.join(' '))
      save(file, list.tasks)
      return `Added ${task.id}. ${task.title}`
    }
    case 'done': {
      const task = list.complete(Number(rest[0]))
      save(file, list.tasks)
      return `Done: ${task.title}`
    }
    case 'list':
      return formatList(list.list({ all: rest.includes('--all') }))
    default:
      return 'usage: tasks add <title> | tasks list [--all] | tasks done <id>'
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(run(process.argv.slice(2)))
}
