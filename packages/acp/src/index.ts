/**
 * Plan mode over the Agent Client Protocol (SPEC §23): a planmode host's
 * sessions served to any ACP client (an editor, a headless client) as an
 * ACP agent, through `@agentclientprotocol/sdk` — modes, commands, the turn,
 * the review as a permission request, the plan as the session's plan, and a
 * `session/load` that replays the log.
 *
 * @packageDocumentation
 */
export type { AcpFreshSessionEventData, AcpSessionEventData } from './acp-events.js'
export { acpPlugin } from './acp-plugin.js'
export { resolveAcpConfig } from './acp-config.js'
export type { AcpConfig } from './acp-config.js'
export type { AcpConnection, AcpServer } from './acp-server.js'
export { ACP_MODE_CONFIG_ID, ACP_MODE_IDS } from './modes.js'
export type { AcpModeId } from './modes.js'
export type { AcpAgentSource, AcpOpenOptions, AcpSessionAgent, AcpSessionStore } from './ports.js'
export { serveAcpStdio } from './serve-stdio.js'
