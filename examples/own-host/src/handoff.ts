import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import type { Session } from '@planmode/seams'
import type { OwnAgent } from './agent.js'

/** What carrying out a handoff needs from the host: its agents, the models a handoff may choose, new sessions and agents. */
export interface HandoffHost {
  readonly agents: ReadonlySet<OwnAgent>
  readonly models: Readonly<Record<string, LanguageModelV3>>
  session(): Promise<Session>
  agent(session: Session, options: { readonly model: LanguageModelV3 }): OwnAgent
}

/**
 * Carries out the seams' `agent/handoff` (SPEC §18) for the host's agents.
 * With a `model` alone, the agent's requests go to that model from its next
 * step (that step's `request/header` names it). With `fresh`, the running
 * turn takes no further step; once it ended, a new session starts with
 * `fresh.first` as its first event and a first turn with no user message,
 * its agent on the model chosen, else on the handing agent's.
 */
export function carryOutHandoffs(ctx: Context, host: HandoffHost): void {
  ctx.on('agent/handoff', ({ agent, model, fresh }) => {
    const from = [...host.agents].find((own) => own === agent)
    if (from === undefined) return // not an agent of this host
    const chosen = model !== undefined && Object.hasOwn(host.models, model) ? host.models[model] : undefined
    if (model !== undefined && chosen === undefined)
      ctx.logger.warn(`agent ${from.id}: a handoff chose model "${model}", which \`models\` does not hold`)
    if (fresh === undefined) {
      if (chosen !== undefined) from.model = chosen
      return
    }
    from.handOff(async () => {
      try {
        const session = await host.session()
        await session.append(fresh.first.type, fresh.first.data as never) // the layer's event, as it gave it
        host.agent(session, { model: chosen ?? from.model }).begin()
      } catch (error) {
        ctx.logger.error(`agent ${from.id}: could not start the fresh session of a handoff`, error)
      }
    })
  })
}
