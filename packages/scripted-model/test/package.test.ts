import { readFileSync, readdirSync } from 'node:fs'
import { expect, it } from 'vitest'
import * as scripted from '@planmode/scripted-model'

it('depends on the AI SDK provider types only, and imports nothing else', () => {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >
  expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['@ai-sdk/provider', '@types/json-schema'])
  expect(manifest.peerDependencies).toBeUndefined()
  const files = readdirSync(new URL('../src/', import.meta.url)).filter((file) => file.endsWith('.ts'))
  for (const file of files) {
    const source = readFileSync(new URL(`../src/${file}`, import.meta.url), 'utf8')
    const imported = [...source.matchAll(/\bfrom\s+'([^']+)'/g)].map((match) => match[1]!)
    for (const specifier of imported)
      expect(specifier.startsWith('./') || specifier === '@ai-sdk/provider', `${file} imports ${specifier}`).toBe(true)
  }
})

it('exports the two factories and requestSystem, nothing else at runtime', () => {
  expect(Object.keys(scripted).sort()).toEqual(['createConformanceModel', 'createScriptedModel', 'requestSystem'])
})
