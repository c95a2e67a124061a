import { defineConfig } from 'tsup'

// The bench runs from dist against the built packages (plain `node`, no loader).
export default defineConfig({
  entry: { main: 'src/main.ts', run: 'src/run.ts', generator: 'src/generator.ts', baseline: 'src/baseline.ts', 'model-text': 'src/model-text.ts' },
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'node',
})
