import type { AgentHandedOffPayload, AgentRegistry, AgentStatusPayload, AgentStreamPayload } from './loop/agent-types.js'
import type { AnswerDesk } from './answers/answer-desk.js'
import type { SessionStore } from './session/session-store.js'

declare module '@planmode/context' {
  interface Services {
    /** The session store of `@planmode/host`. */
    sessions: SessionStore
    /** The agent registry of `@planmode/host`. */
    agents: AgentRegistry
    /**
     * The writer's side of answers from other processes, provided by the
     * session store (the JSONL store with a `dir`, `@planmode/store-postgres`);
     * the user-questions runtime opens every ask to it.
     */
    answerDesk: AnswerDesk
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
