import type { SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk'

/** The mode ids every session offers: the default mode and plan mode. @public */
export const ACP_MODE_IDS = ['default', 'plan'] as const

/** A mode id of {@link ACP_MODE_IDS}. @public */
export type AcpModeId = (typeof ACP_MODE_IDS)[number]

/** The id of the session config option that carries the mode (category `mode`). @public */
export const ACP_MODE_CONFIG_ID = 'mode'

const MODES = [
  { id: 'default', name: 'Default', description: 'The agent works on your request: it may change files.' },
  { id: 'plan', name: 'Plan', description: 'The agent explores and writes a plan, and asks you to review it before it changes anything.' },
] as const

/** Whether `id` is one of the two mode ids. */
export function isModeId(id: unknown): id is AcpModeId {
  return id === 'default' || id === 'plan'
}

/** The mode id of a logged plan state. */
export function modeIdOf(active: boolean): AcpModeId {
  return active ? 'plan' : 'default'
}

/** `modes` of a session whose logged state is `active`. */
export function modeState(active: boolean): SessionModeState {
  return { currentModeId: modeIdOf(active), availableModes: MODES.map((mode) => ({ ...mode })) }
}

/** The config options of a session whose logged state is `active`: the mode, as a select of category `mode` with the same ids. */
export function configOptions(active: boolean): SessionConfigOption[] {
  return [
    {
      id: ACP_MODE_CONFIG_ID,
      name: 'Mode',
      description: 'Plan mode: explore, plan, and have the plan reviewed before changing anything.',
      category: 'mode',
      type: 'select',
      currentValue: modeIdOf(active),
      options: MODES.map((mode) => ({ value: mode.id, name: mode.name, description: mode.description })),
    },
  ]
}
