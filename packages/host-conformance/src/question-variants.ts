import type { Agent, SessionEvent, SessionEventType } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variant.js'
import type { HostFactory } from './host-adapter.js'
import { adapterWith, hidingOpened, patchAppend, reopenedAs, unwritten } from './variant-wrappers.js'

/** A factory whose agents' sessions never log `type` (the appends resolve as if written). */
function neverLogs(type: SessionEventType) {
  return <A extends Agent>(factory: HostFactory<A>): HostFactory<A> =>
    async (environment) => {
      const host = await factory(environment)
      const patch = (agent: A): A => {
        patchAppend(agent.session, (kind, data, session) => (kind === type ? unwritten(session, kind, data) : undefined))
        return agent
      }
      const openAgent = host.openAgent?.bind(host)
      return adapterWith(host, {
        createAgent: async (options) => patch(await host.createAgent(options)),
        ...(openAgent === undefined ? {} : { openAgent: async (id: string) => patch(await openAgent(id)) }),
      })
    }
}

const interruptedSettlement = (event: SessionEvent): boolean => event.type === 'question/settled' && event.data.outcome === 'interrupted'

/** The deliberately broken wrappers of duty `questions-in-log` (part of `BROKEN_HOST_VARIANTS`). */
export const QUESTION_VARIANTS: readonly BrokenHostVariant[] = [
  {
    duty: 'questions-in-log',
    name: 'never logs question/asked',
    failure:
      "userQuestions.ask must log question/asked { questionId, agent, question } on the asking agent's session before the provider is asked",
    wrap: neverLogs('question/asked'),
  },
  {
    duty: 'questions-in-log',
    name: 'never logs question/settled',
    failure: 'the ask must be settled by exactly one question/settled',
    wrap: neverLogs('question/settled'),
  },
  {
    duty: 'questions-in-log',
    // As a host whose store hands the reopened log out as the dead process left it, and whose loop settles the
    // open asks before its next turn: the settlements the store appended at open show only once a turn starts.
    name: 'settles an ask its process left open only when the next turn starts',
    failure: 'an ask left open when its host went away must be settled at open',
    wrap: (factory) => reopenedAs(factory, (agent, known) => hidingOpened(agent, known, interruptedSettlement, { untilTurnStarts: true })),
  },
]
