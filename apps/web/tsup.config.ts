import { defineConfig } from 'tsup'

// The server only: the client is built by Vite into dist/client, so this build cleans dist/server alone.
// @planmode/demo is a private workspace package whose exports are TypeScript sources: bundle them.
export default defineConfig({
  entry: { main: 'server/main.ts' },
  outDir: 'dist/server',
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  dts: false,
  noExternal: [/^@planmode\/demo(\/|$)/],
})
