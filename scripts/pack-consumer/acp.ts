// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import {
  ACP_MODE_CONFIG_ID,
  ACP_MODE_IDS,
  acpPlugin,
  resolveAcpConfig,
  serveAcpStdio,
  type AcpAgentSource,
  type AcpConfig,
  type AcpServer,
  type AcpSessionAgent,
} from '@planmode/acp'
import type { Plugin } from '@planmode/context'

const agents: AcpAgentSource = {
  open: (): AcpSessionAgent => {
    throw new Error('not in this check')
  },
}
export const config: AcpConfig = resolveAcpConfig({ agents, pageSize: 10 })
export const plugin: Plugin<AcpConfig> = acpPlugin
export const modes: readonly string[] = [...ACP_MODE_IDS, ACP_MODE_CONFIG_ID]
export const serve: (server: AcpServer) => unknown = (server) => serveAcpStdio(server)
