// The task list: plain objects in an array, ids counting from 1.

export class TaskList {
  constructor(tasks = []) {
    this.tasks = tasks
  }

  add(title) {
    if (typeof title !== 'string' || title.trim() === '') {
      throw new Error('a task needs a title')
    }
    const id = this.tasks.reduce((max, task) => Math.max(max, task.id), 0) + 1
    const task = { id, title: title.trim(), done: false }
    this.tasks.push(task)
    return task
  }

  complete(id) {
    const task = this.tasks.find((candidate) => candidate.id === id)
    if (task === undefined) throw new Error(`no task ${id}`)
    task.done = true
    return task
  }

  list({ all = false } = {}) {
    return all ? [...this.tasks] : this.tasks.filter((task) => !task.done)
  }
}
