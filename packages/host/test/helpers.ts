import { mkdir } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from '@planmode/context'
import type { Logger } from '@planmode/context'
import { sessionStorePlugin } from '@planmode/host'
import type { SessionStore, SessionStoreConfig } from '@planmode/host'
import type { Agent, Session, StandardSchemaV1, UserMessage } from '@planmode/seams'

/** A logger that records every call. */
export function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = []
  const log = (level: string) => (message: string) => {
    lines.push({ level, message })
  }
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

export function newContext(): { ctx: Context; logger: ReturnType<typeof recordingLogger> } {
  const logger = recordingLogger()
  return { ctx: new Context({ logger }), logger }
}

/** A `Context` with a recording logger and `sessionStorePlugin` loaded with `config` (as given: none means in memory). */
export function storeContext(config?: SessionStoreConfig): {
  ctx: Context
  logger: ReturnType<typeof recordingLogger>
  sessions: SessionStore
} {
  const { ctx, logger } = newContext()
  ctx.plugin(sessionStorePlugin, config)
  return { ctx, logger, sessions: ctx.require('sessions') }
}

/** A bare agent over `session`, for runtimes that only need `agent.session`. */
export function fakeAgent(session: Session, extra: Partial<Agent> = {}): Agent & { steered: UserMessage[] } {
  const steered: UserMessage[] = []
  return {
    id: extra.id ?? 'a1',
    session,
    ...(extra.owner === undefined ? {} : { owner: extra.owner }),
    steered,
    steer(message) {
      steered.push(message)
    },
    async inject(message) {
      await session.append('user/message', message)
    },
  }
}

/** A tiny synchronous Standard Schema. */
export function schemaOf<T>(check: (value: unknown) => string | undefined): StandardSchemaV1<unknown, T> {
  return {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate(value) {
        const problem = check(value)
        return problem === undefined ? { value: value as T } : { issues: [{ message: problem }] }
      },
    },
  }
}

export function text(value: string): UserMessage {
  return { content: [{ type: 'text', text: value }], source: { kind: 'user' } }
}

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Bundles a child-process script (TypeScript source importing `../src`) into
 * `node_modules/.cache/<name>/child.mjs` and returns its path, so tests can
 * run a real host in a separate process with plain `node`.
 */
export async function bundleChild(name: string, source: string): Promise<string> {
  // esbuild comes with vite (a root dev dependency); resolve it from there.
  const fromVite = createRequire(createRequire(import.meta.url).resolve('vite'))
  const esbuild = fromVite('esbuild') as { build(options: Record<string, unknown>): Promise<unknown> }
  const cacheDir = join(packageDir, 'node_modules', '.cache', name)
  const outfile = join(cacheDir, 'child.mjs')
  await mkdir(cacheDir, { recursive: true })
  await esbuild.build({
    stdin: { contents: source, resolveDir: join(packageDir, 'src'), sourcefile: `${name}.ts`, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@planmode/source'],
    external: ['@ai-sdk/*', 'zod'],
    outfile,
    logLevel: 'silent',
  })
  return outfile
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /** A neutral event for store tests: a type the host does not interpret (a `turn/start` would open a turn the next open closes). */
    'test/event': { readonly turn: number }
  }
}
