// Loading and saving tasks.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

export function load(file) {
  if (!existsSync(file)) return []
  return JSON.parse(readFileSync(file, 'utf8'))
}

export function save(file, tasks) {
  writeFileSync(file, JSON.stringify(tasks, null, 2) + '\n')
}
