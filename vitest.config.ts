import { defineConfig } from 'vitest/config'

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
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    typecheck: {
      enabled: true,
      include: ['packages/*/test/**/*.test-d.ts'],
      tsconfig: './tsconfig.typetests.json',
    },
    globalSetup: ['./vitest.global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
