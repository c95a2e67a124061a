import { client, ndJsonStream, type SessionNotification } from '@agentclientprotocol/sdk'
import { acpPlugin } from '@planmode/acp'
import { Context } from '@planmode/context'
import { hostPlugin } from '@planmode/host'
import {
  BROKEN_CLIENT_ADAPTER_VARIANTS,
  clientAdapterCases,
  type ClientAdapterFactory,
  type ClientAnswer,
  type ClientQuestion,
  type ServedClient,
} from '@planmode/host-conformance'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planToolPlugin } from '@planmode/plan-tool'
import { describe, expect, it } from 'vitest'
import { clientView } from './support/client-view.js'
import { hostSessionAgent } from './support/reference-host.js'

/** The option id an ACP client picks for the kit's answer. */
function optionFor(question: ClientQuestion, answer: ClientAnswer): string {
  if (answer === 'unknown') return 'an-option-nobody-offered'
  if (question.kind === 'plan-enter') return answer === 'approve' ? 'enter' : 'option-2'
  return answer
}

/**
 * `@planmode/acp` as the kit drives a client adapter: the reference host
 * with the plan layers and the ACP agent, each client the SDK's own,
 * connected in process over newline-delimited JSON.
 */
const overAcp: ClientAdapterFactory = ({ model, dir }) => {
  const context = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  context.plugin(hostPlugin, { dir, model, retryDelayMs: 0 })
  for (const layer of [planCorePlugin, planToolPlugin, planCommandsPlugin]) context.plugin(layer)
  context.plugin(acpPlugin, { agents: { open: (session) => hostSessionAgent(context.require('agents').create({ session })) } })
  const connect = (answer: (question: ClientQuestion) => ClientAnswer) => {
    const updates: SessionNotification['update'][] = []
    const toAgent = new TransformStream<Uint8Array, Uint8Array>()
    const toClient = new TransformStream<Uint8Array, Uint8Array>()
    context.require('acp').serve(toClient.writable, toAgent.readable)
    const connection = client({ name: 'kit' })
      .onNotification('session/update', ({ params }) => void updates.push(params.update))
      .onRequest('session/request_permission', ({ params }) => {
        const question: ClientQuestion = {
          kind: params.options.some((option) => option.optionId === 'enter') ? 'plan-enter' : 'plan-review',
        }
        return { outcome: { outcome: 'selected', optionId: optionFor(question, answer(question)) } }
      })
      .connect(ndJsonStream(toAgent.writable, toClient.readable))
    const served: ServedClient = {
      modes: () => updates.flatMap((update) => (update.sessionUpdate === 'current_mode_update' ? [update.currentModeId === 'plan'] : [])),
      view: () => clientView(updates),
      // A request the agent answers after everything it sent before: an unknown method costs nothing.
      settle: () =>
        connection.agent.request('_planmode/settle', {}).then(
          () => undefined,
          () => undefined,
        ),
    }
    return { connection, served }
  }
  return {
    context,
    async open(answer) {
      const { connection, served } = connect(answer)
      await connection.agent.request('initialize', { protocolVersion: 1 })
      const { sessionId } = await connection.agent.request('session/new', { cwd: dir, mcpServers: [] })
      return {
        sessionId,
        client: served,
        prompt: async (text) => void (await connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })),
        setMode: async (active) =>
          void (await connection.agent.request('session/set_mode', { sessionId, modeId: active ? 'plan' : 'default' })),
      }
    },
    async attach(sessionId) {
      const { connection, served } = connect(() => 'unknown')
      await connection.agent.request('initialize', { protocolVersion: 1 })
      await connection.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] })
      return served
    },
    close: async () => context.dispose(),
  }
}

describe('@planmode/host-conformance: the client-adapter cases against the ACP agent', () => {
  for (const spec of clientAdapterCases(overAcp)) it(`passes ${spec.title}`, () => spec.run())

  for (const variant of BROKEN_CLIENT_ADAPTER_VARIANTS) {
    it(`fails, naming duty "${variant.duty}", when the adapter ${variant.name}`, async () => {
      const broken = clientAdapterCases(variant.wrap(overAcp)).find((spec) => spec.duty === variant.duty)!
      await expect(broken.run()).rejects.toThrow(`duty "${variant.duty}": ${variant.failure}`)
    })
  }
})
