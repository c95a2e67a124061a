import type { AgentHandedOffPayload, AgentRegistry, AgentStatusPayload, AgentStreamPayload } from './loop/agent-types.js'
// Services `sessions` and `answerDesk` are typed by `@planmode/store`.
import type {} from '@planmode/store'

declare module '@planmode/context' {
  interface Services {
    /** The agent registry of `@planmode/host`. */
    agents: AgentRegistry
  }

  interface Events {
    /** An agent started (`running`) or finished (`idle`) a turn. */
    'agent/status': (payload: AgentStatusPayload) => void
    /** A part of a model's streamed answer, as it arrives (for live UIs; the log gets the whole message). */
    'agent/stream': (payload: AgentStreamPayload) => void
    /**
     * The host carried out a handoff to a fresh session (SPEC §18): the new
     * session exists, its first event is logged, and its agent runs its
     * first turn. UIs follow the new session from here.
     */
    'agent/handed-off': (payload: AgentHandedOffPayload) => void
  }
}
