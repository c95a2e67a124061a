import { readFileSync } from 'node:fs'
import { generateText } from 'ai'
import { expect, it } from 'vitest'
import { createScriptedModel, requestSystem } from '@planmode/scripted-model'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const self = readFileSync(new URL(import.meta.url), 'utf8')

/** The lines of `text` that are not imports or comments, blank lines dropped, trimmed. */
const body = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('import ') && !line.startsWith('//'))

it('runs the README example, which is the code below', async () => {
  const block = /```ts\n([\s\S]*?)```/.exec(readme)![1]!
  const start = self.indexOf('// readme:start\n')
  const mirrored = self.slice(start + '// readme:start\n'.length, self.lastIndexOf('  // readme:end'))
  expect(body(block)).toEqual(body(mirrored))
  for (const line of block.split('\n').filter((line) => line.startsWith('import '))) expect(self).toContain(line)

  // readme:start
  const model = createScriptedModel([(request) => ({ text: requestSystem(request).includes('plan mode') ? 'Here is my plan.' : 'Done.' })])
  const { text } = await generateText({ model, system: 'You are in plan mode.', prompt: 'Add a cache.' })
  // readme:end
  expect(text).toBe('Here is my plan.')
  expect(model.requests).toHaveLength(1)
  expect(requestSystem(model.requests[0]!)).toBe('You are in plan mode.')
})

it('the README states the exhausted-queue messages both flavours throw', () => {
  expect(readme).toContain(
    '`scripted model: no response left for request #<n> (the script had <n - 1> response(s); push more or shorten the scenario)`',
  )
  expect(readme).toContain('`conformance model: no scripted response left for request #<n>`')
})
