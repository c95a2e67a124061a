// The package's tests against `ai` 7, the AI SDK's newest major, which needs Node 22 or later:
//
//   npx -y node@24 node_modules/vitest/vitest.mjs run --config packages/ai-sdk/vitest.ai7.config.ts
//
// The workspace's `ai` stays 6 (it runs on Node 20); 7 is the dev dependency `ai-v7` (`npm:ai@7…`),
// and this config sends the package's `ai` imports (sources, tests and the README's examples) to it.
// test/ai-major.test.ts fails when the run does not get the major it asks for.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import workspace from '../../vitest.config.js'

const here = dirname(fileURLToPath(import.meta.url))
const ai7 = dirname(createRequire(join(here, 'package.json')).resolve('ai-v7/package.json'))

export default defineConfig({
  ...workspace,
  root: join(here, '../..'),
  resolve: {
    ...workspace.resolve,
    alias: [
      { find: /^ai$/, replacement: join(ai7, 'dist/index.js') },
      { find: /^ai\/test$/, replacement: join(ai7, 'dist/test/index.js') },
      { find: /^ai\/package\.json$/, replacement: join(ai7, 'package.json') },
    ],
  },
  test: {
    ...workspace.test,
    include: ['packages/ai-sdk/test/**/*.test.ts'],
    // The type tests check the declarations against the workspace's `ai`; the packing test checks them against 7.
    typecheck: { enabled: false },
    env: { PLANMODE_AI_MAJOR: '7' },
  },
})
