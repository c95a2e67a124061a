import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { demo: 'src/demo.ts', start: 'src/start.ts', acp: 'src/acp/main.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  splitting: true,
  dts: false,
})
