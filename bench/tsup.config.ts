import { defineConfig } from 'tsup'

// The bench runs from dist against the built packages (plain `node`; only the pre-step job's child of an older tree uses a loader).
export default defineConfig({
  entry: {
    main: 'src/main.ts',
    run: 'src/run.ts',
    generator: 'src/generator.ts',
    baseline: 'src/baseline.ts',
    'model-text': 'src/model-text.ts',
    // The pre-step job's child (it loads only what its rows need) and the resolve hook that points it at an older tree.
    'prestep-child': 'src/prestep-child.ts',
    'tree-loader': 'src/tree-loader.ts',
    'tree-hooks': 'src/tree-hooks.ts',
  },
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'node',
})
