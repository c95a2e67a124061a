import { defineConfig } from 'tsup'

// The `planmode` executable: ESM only, with its shebang; built after the library, which cleans dist/.
export default defineConfig({
  entry: ['src/bin.ts'],
  format: ['esm'],
  dts: false,
  clean: false,
  sourcemap: true,
  target: 'es2022',
  banner: { js: '#!/usr/bin/env node' },
})
