import { fileURLToPath } from 'node:url'
import { defaultClientConditions, defineConfig } from 'vite'

const here = fileURLToPath(new URL('.', import.meta.url))

/**
 * The browser client of `apps/web`, built into `apps/web/dist/client` and
 * served by the server. React's JSX goes through esbuild (no React plugin);
 * workspace packages are bundled from their sources (`@planmode/source`), so
 * the client needs no prior package build.
 */
export default defineConfig({
  root: here,
  base: './',
  esbuild: { jsx: 'automatic' },
  resolve: { conditions: ['@planmode/source', ...defaultClientConditions] },
  build: {
    outDir: fileURLToPath(new URL('../dist/client', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
  },
})
