import type { LanguageModelV3 } from '@ai-sdk/provider'
import { WORKSPACE_EVENT } from '@planmode/demo/workspace-event'
import type { AgentRegistry, HostAgent } from '@planmode/host'
import type { HostSession } from '@planmode/store'
import { handoffModelToResume } from '@planmode/plan-tool'
import type { SessionWorkspaces } from './session-workspaces.js'

/**
 * What this server does when it starts writing a session (a new one, one
 * it opens, one it takes over): the session's agent, on the model its log
 * chose, and the workspace folder in its log.
 */
export class SessionWriting {
  constructor(
    private readonly agents: AgentRegistry,
    /** The handoff models (`--models`), by id. */
    private readonly models: Readonly<Record<string, LanguageModelV3>>,
    /** The workspace of each session. */
    private readonly workspaces: SessionWorkspaces,
  ) {}

  /**
   * The agent of a session this server writes, on the model its log chose
   * (plan-tool's one rule, `handoffModelToResume`): a handoff's model no
   * request has gone to yet, when this server has it; else the host's own
   * choice from the session's last `request/header`.
   */
  createAgent(session: HostSession): HostAgent {
    const id = handoffModelToResume(session.events)
    const model = id !== undefined && Object.hasOwn(this.models, id) ? this.models[id] : undefined
    return this.agents.create({ session, ...(model === undefined ? {} : { model }) })
  }

  /** Logs `demo/workspace` with the session's workspace when its last one names another folder (so a restart finds it). */
  async logWorkspace(session: HostSession): Promise<void> {
    const root = this.workspaces.rootOf(session)
    const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
    if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== root) await session.append(WORKSPACE_EVENT, { root })
  }
}
