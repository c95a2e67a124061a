import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const src = fileURLToPath(new URL('../src/', import.meta.url))

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) files.push(...(await sourceFiles(path)))
    else if (entry.name.endsWith('.ts')) files.push(path)
  }
  return files
}

describe('the host knows nothing of plan mode', () => {
  it('no source file names a plan event type, the plan-core package or its service', async () => {
    const files = await sourceFiles(src)
    expect(files.length).toBeGreaterThan(20)
    const found: string[] = []
    for (const file of files) {
      const lines = (await readFile(file, 'utf8')).split('\n')
      lines.forEach((line, index) => {
        if (/plan\/[a-z]|plan-core|[^@]planMode/.test(line)) found.push(`${file.slice(src.length)}:${index + 1}: ${line.trim()}`)
      })
    }
    expect(found).toEqual([])
  })
})
