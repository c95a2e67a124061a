import type { LanguageModelV3 } from '@ai-sdk/provider'
import { WORKSPACE_EVENT } from '@planmode/demo/workspace-event'
import type { AgentRegistry, HostAgent, HostSession } from '@planmode/host'
import { chosenModel } from './session-model.js'

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
    /** The folder the workspace tools work in. */
    private readonly workspace: string,
  ) {}

  /** The agent of a session this server writes: with the model its log's latest handoff chose, when this server has it. */
  createAgent(session: HostSession): HostAgent {
    const id = chosenModel(session.events)
    const model = id !== undefined && Object.hasOwn(this.models, id) ? this.models[id] : undefined
    return this.agents.create({ session, ...(model === undefined ? {} : { model }) })
  }

  /** Logs `demo/workspace` when the session's last one names another folder. */
  async logWorkspace(session: HostSession): Promise<void> {
    const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
    if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== this.workspace) {
      await session.append(WORKSPACE_EVENT, { root: this.workspace })
    }
  }
}
