import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packagesDir = fileURLToPath(new URL('../../', import.meta.url))

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  )
}

/**
 * For tests whose child processes run plain `node` over the built packages:
 * throws unless each of `packages` (folder names under `packages/`) has a
 * `dist/index.js` newer than every file of its `src/`. `what` names the test
 * in the message.
 */
export function assertBuilt(what: string, packages: readonly string[]): void {
  for (const name of packages) {
    const pkg = join(packagesDir, name)
    const built = join(pkg, 'dist', 'index.js')
    if (!existsSync(built))
      throw new Error(`${what}: ${built} is missing; run \`pnpm build\` first (the child processes run the built packages)`)
    const newest = Math.max(...listFiles(join(pkg, 'src')).map((file) => statSync(file).mtimeMs))
    if (newest > statSync(built).mtimeMs) {
      throw new Error(
        `${what}: ${built} is older than packages/${name}/src; run \`pnpm build\` first, or \`pnpm build --force\` when turbo restored that build from its cache (the child processes run the built packages)`,
      )
    }
  }
}
