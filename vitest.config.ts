import { defineConfig } from 'vitest/config'
import { scaledMs } from './packages/testkit/src/load.js'

/**
 * The timeout of a test or hook that names none: 60 s on an idle machine,
 * times the load factor when the run starts (the load averages per core,
 * see packages/testkit/src/load.ts), so a loaded machine is slower but
 * green. It catches a hang; it measures nothing. Tests whose work is long
 * (the crash tests) are bounded by their work instead (`boundedWork`).
 */
const DEFAULT_TIMEOUT_MS = scaledMs(60_000)

export default defineConfig({
  resolve: {
    conditions: ['@planmode/source'],
  },
  ssr: {
    resolve: {
      conditions: ['@planmode/source'],
    },
  },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'bench/test/**/*.test.ts',
      'scripts/test/**/*.test.ts',
    ],
    typecheck: {
      enabled: true,
      include: ['packages/*/test/**/*.test-d.ts'],
      tsconfig: './tsconfig.typetests.json',
    },
    globalSetup: ['./vitest.global-setup.ts'],
    testTimeout: DEFAULT_TIMEOUT_MS,
    hookTimeout: DEFAULT_TIMEOUT_MS,
  },
})
