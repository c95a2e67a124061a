// `pnpm web`: parses the flags, picks the model as `pnpm start` does, starts the server and prints its URL.
// SIGINT / SIGTERM / SIGHUP, and Ctrl+C on a terminal (read as a key), close every session cleanly (running turns are
// cancelled, logs synced) and exit 0; a second one exits at once.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chooseModel, chooseModels } from '@planmode/demo/model-choice'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { startWebServer } from './http-server.js'
import { loadSection, parseWebCli, redactUrl, resolveWorkspace, TOKEN_ENV, tokenFromEnv, WEB_USAGE, type WebCliOptions } from './options.js'
import { takeInterruptKeys } from './terminal-keys.js'
import { loadUsers, type WebUser } from './users.js'

/** The built client beside this file's folder (`dist/server/main.js` → `dist/client`). */
function clientDir(): string {
  const built = fileURLToPath(new URL('../client', import.meta.url))
  if (existsSync(built)) return built
  return fileURLToPath(new URL('../dist/client', import.meta.url))
}

/**
 * Closes `server` on SIGINT, SIGTERM or SIGHUP, and on Ctrl+C typed on the
 * terminal (read as a key, see `terminal-keys.ts`), before the start line
 * is printed, so nothing typed after it is missed; resolves with the exit
 * code (0 once every session is closed). A second one exits at once.
 */
function closeOnStop(server: { close(): Promise<void> }): Promise<number> {
  return new Promise<number>((resolveExit) => {
    let stopping = false
    const stop = (signal: NodeJS.Signals | 'Ctrl+C'): void => {
      if (stopping) process.exit(130)
      stopping = true
      process.stdout.write(`planmode web: ${signal}, closing the sessions…\n`)
      server.close().then(
        () => resolveExit(0),
        (error: unknown) => {
          process.stderr.write(`planmode web: closing failed: ${(error as Error).message}\n`)
          resolveExit(1)
        },
      )
    }
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop)
    // On a terminal, Ctrl+C is read as a key (the shell pnpm runs the server under would die of the signal); the
    // terminal's mode comes back when the process exits.
    takeInterruptKeys({ interrupt: () => stop('Ctrl+C'), quit: () => process.exit(131) })
  })
}

async function main(): Promise<number> {
  let options: WebCliOptions
  let token: string | undefined
  try {
    options = parseWebCli(process.argv.slice(2))
    if (!options.help) token = tokenFromEnv(process.env)
    if (options.users !== undefined && token !== undefined) {
      throw new Error(`${TOKEN_ENV} gives the app its one token; with --users every user has their own in the file: give one or the other`)
    }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${WEB_USAGE}`)
    return 2
  }
  if (options.help) {
    process.stdout.write(WEB_USAGE)
    return 0
  }
  let users: WebUser[] | undefined
  try {
    if (options.users !== undefined) users = loadUsers(options.users)
  } catch (error) {
    // The file's problem alone (the usage would bury it); never a token.
    process.stderr.write(`planmode web: ${(error as Error).message}\n`)
    return 2
  }
  let server
  let stopped: Promise<number>
  try {
    const section = loadSection(options.sectionFile, RECOMMENDED_PLAN_SECTION)
    const delay = Number(process.env.PLANMODE_DEMO_DELAY_MS ?? 8)
    const pace = Number.isFinite(delay) && delay > 0 ? delay : 0
    const choice = chooseModel(options, section, process.env, pace)
    // --models: what the review offers to carry the approved plan out with, from the same source as the default.
    const models = options.models.length === 0 ? undefined : chooseModels(options.models, options, section, process.env, pace)
    const workspace = resolveWorkspace(options)
    server = await startWebServer({
      port: options.port,
      host: options.host,
      ...(options.store === undefined
        ? { sessionDir: options.sessionDir }
        : { store: { connection: options.store.url, schema: options.store.schema } }),
      ...workspace,
      model: choice.model,
      ...(models === undefined ? {} : { models }),
      section,
      placement: options.placement,
      guard: options.guard,
      ...(options.planDir === undefined ? {} : { planDir: options.planDir }),
      requiredSections: options.requireSections,
      clientDir: clientDir(),
      ...(token === undefined ? {} : { token }),
      ...(users === undefined ? {} : { users }),
      ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    })
    stopped = closeOnStop(server)
    const where =
      options.store === undefined
        ? options.sessionDir
        : `PostgreSQL ${redactUrl(options.store.url)} (schema ${options.store.schema}; this server is ${server.host.self} there${options.publicUrl === undefined ? ', loopback-only: give --public-url when the servers run on several machines' : ''})`
    process.stdout.write(
      `planmode web: model: ${choice.description}${options.models.length > 0 ? ` (handoff models: ${options.models.join(', ')})` : ''}; sessions in ${where}; ${'workspace' in workspace ? `workspace ${workspace.workspace} (shared by every session)` : `workspaces in ${workspace.workspaces} (a copy of the sample project per session)`}${options.guard ? '; plan-guard on' : ''}` +
        `${options.planDir === undefined ? '' : `; plan files in ${options.planDir}`}${options.requireSections.length > 0 ? `; plans need ${options.requireSections.join(', ')}` : ''}\n`,
    )
    if (users === undefined) process.stdout.write(`planmode web: ${server.url}\n`)
    else {
      const list = (role: string) => users!.filter((user) => user.role === role).map((user) => user.name)
      const owners = list('owner')
      const reviewers = list('reviewer')
      process.stdout.write(
        `planmode web: ${server.url} — ${users.length} user${users.length === 1 ? '' : 's'} from ${options.users}: ` +
          `owner${owners.length === 1 ? '' : 's'} ${owners.join(', ')}${reviewers.length === 0 ? '' : `; reviewer${reviewers.length === 1 ? '' : 's'} ${reviewers.join(', ')}`}; ` +
          `each opens it with ?token=<their token>\n`,
      )
    }
  } catch (error) {
    process.stderr.write(`planmode web: ${(error as Error).message}\n`)
    return 1
  }
  return stopped
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error)
    process.exit(1)
  },
)
