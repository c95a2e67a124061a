// The folder each session's workspace tools work in: one copy of the sample project per session, kept beside the
// session logs so a restart finds it again (or, with --workspace, the one folder every session shares).
import { cpSync, mkdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { WORKSPACE_EVENT } from '@planmode/demo/workspace-event'
import type { Agent, Session } from '@planmode/seams'

/** Where the sessions' workspaces are: a copy of `template` per session in `folder`, or one `shared` folder. */
export type WorkspaceChoice =
  /** Every session works in this one folder (`--workspace`): their edits meet. */
  | { readonly shared: string }
  /** Each session works in a copy of `template` made for it in `folder` (`<folder>/<session id>`). */
  | { readonly folder: string; readonly template: string }

const isDirectory = (path: string): boolean => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true

/**
 * The workspace of each session, decided the first time it is asked for
 * and kept: with a shared folder, that folder; else the folder the
 * session's log last names (`demo/workspace`) when it is still there (a
 * restart, or another server on the same disk); else, for a handed-on
 * plan's fresh session (its first event is `plan/handoff`), the workspace
 * of the session the plan was approved in (the plan was made against those
 * files); else a new copy of the template as `<folder>/<session id>` (the
 * copy already there when one is). A helper agent's calls (an agent with an
 * `owner`) use the workspace of the session its top agent writes.
 */
export class SessionWorkspaces {
  private readonly roots = new Map<string, string>()

  constructor(
    private readonly choice: WorkspaceChoice,
    /** The open session of an id, when this server holds it (a handed-on plan's origin is found through it). */
    private readonly sessionOf: (id: string) => Session | undefined,
  ) {}

  /** What the base prompt names when no session is known: the shared folder, or the folder of the copies. */
  get where(): string {
    return 'shared' in this.choice ? this.choice.shared : this.choice.folder
  }

  /** The workspace of the session `agent` (or its top agent) works in. */
  rootForAgent(agent: Agent): string {
    let top = agent
    while (top.owner !== undefined) top = top.owner
    return this.rootOf(top.session)
  }

  /** The workspace of `session`, decided once (see the class). */
  rootOf(session: Session): string {
    const known = this.roots.get(session.id)
    if (known !== undefined) return known
    const root = this.decide(session)
    this.roots.set(session.id, root)
    return root
  }

  private decide(session: Session): string {
    if ('shared' in this.choice) return this.choice.shared
    const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
    if (logged?.type === WORKSPACE_EVENT && isDirectory(logged.data.root)) return logged.data.root
    const first = session.events[0]
    if (first?.type === 'plan/handoff') {
      const origin = first.data.from.session
      const known = this.roots.get(origin)
      const opened = known === undefined ? this.sessionOf(origin) : undefined
      if (known !== undefined) return known
      if (opened !== undefined) return this.rootOf(opened)
    }
    const copy = join(this.choice.folder, session.id)
    if (!isDirectory(copy)) {
      mkdirSync(this.choice.folder, { recursive: true })
      cpSync(this.choice.template, copy, { recursive: true })
    }
    return copy
  }
}

/** The sample project shipped with `@planmode/demo` (`apps/demo/workspace`): what each session's workspace is a copy of. */
export function sampleWorkspaceDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@planmode/demo/package.json')), 'workspace')
}
