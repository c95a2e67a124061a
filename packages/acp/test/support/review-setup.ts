import type { PromptResponse } from '@agentclientprotocol/sdk'
import type { ScriptedResponse } from '@planmode/host'
import type { PlanToolConfig } from '@planmode/plan-tool'
import { GOAL, PLAN_V1 } from './arc-script.js'
import { createAcpHost, type AcpHost } from './reference-host.js'
import { connectTestClient, type Asked, type TestClient } from './test-client.js'
import type { RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk'

/** A review waiting in the client: the host, the client, the session, the running prompt and the permission request. */
export interface OpenReview {
  readonly host: AcpHost
  readonly client: TestClient
  readonly sessionId: string
  readonly turn: Promise<PromptResponse>
  readonly asked: Asked<RequestPermissionRequest, RequestPermissionResponse>
  /** Resolves when the agent side of the connection closed. */
  readonly closed: Promise<void>
  /** The client process goes away. */
  disconnect(): void
}

/** The model's answer that presents PLAN_V1 for review. */
export const PRESENT_V1: ScriptedResponse = {
  toolCalls: [{ toolCallId: 'call-plan-1', toolName: 'exit_plan_mode', input: { plan: PLAN_V1 } }],
}

/**
 * A new session in plan mode whose first turn presents PLAN_V1: resolves
 * once the permission request reached the client. `after` is what the
 * model answers next.
 */
export async function openReview(
  options: {
    readonly after?: ScriptedResponse[]
    readonly elicitation?: boolean
    readonly planTool?: PlanToolConfig
    readonly dir?: string
  } = {},
): Promise<OpenReview> {
  const host = createAcpHost({
    script: [PRESENT_V1, ...(options.after ?? [])],
    ...(options.planTool === undefined ? {} : { planTool: options.planTool }),
    ...(options.dir === undefined ? {} : { dir: options.dir }),
  })
  const { client, closed, disconnect } = connectTestClient(host.ctx.require('acp'))
  await client.initialize({ elicitation: options.elicitation !== false })
  const { sessionId } = await client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })
  await client.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
  const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: GOAL }] })
  const asked = await client.nextPermission()
  return { host, client, sessionId, turn, asked, closed, disconnect }
}
