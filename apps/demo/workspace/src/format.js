// How a task is printed by `tasks list`.

export function formatTask(task) {
  const box = task.done ? '[x]' : '[ ]'
  return `${box} ${task.id}. ${task.title}`
}

export function formatList(tasks) {
  if (tasks.length === 0) return 'Nothing to do.'
  return tasks.map(formatTask).join('\n')
}
