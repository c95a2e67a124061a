import { defineConfig } from 'tsup'

// The library (runPlanmode and the answer mapping); the `planmode` bin is built after it by tsup.bin.config.ts.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
