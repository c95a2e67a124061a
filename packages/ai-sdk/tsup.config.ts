import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', conformance: 'src/conformance.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // ./conformance imports the package's own `.` entry: keep it an import, so both entries share one copy of the adapter.
  external: ['@planmode/ai-sdk'],
})
