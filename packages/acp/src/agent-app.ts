import { agent, PROTOCOL_VERSION, RequestError, type AgentApp, type SessionInfo, type StopReason } from '@agentclientprotocol/sdk'
import type { Context } from '@planmode/context'
import type {} from '@planmode/plan-core'
import type { SessionEvent } from '@planmode/seams'
import { loggedCwdOf } from './acp-events.js'
import type { ClientLink } from './client-link.js'
import { LogUpdates } from './log-updates.js'
import { ACP_MODE_CONFIG_ID, configOptions, isModeId, modeState } from './modes.js'
import type { AcpSessionStore } from './ports.js'
import { promptImages, promptMessage, promptText } from './prompt-content.js'
import type { ServedSession } from './served-session.js'
import type { SessionHub } from './session-hub.js'
import { sessionTitle } from './session-titles.js'

/** What every connection's handlers share. */
export interface AgentAppDeps {
  readonly ctx: Context
  readonly hub: SessionHub
  readonly store: () => AcpSessionStore
  readonly info: { readonly name: string; readonly title?: string; readonly version: string }
  /** The working directory of a session whose log names none. */
  readonly cwd: string
  /** Sessions per `session/list` page. */
  readonly pageSize: number
}

const STOP_REASONS: Record<string, StopReason> = {
  completed: 'end_turn',
  cancelled: 'cancelled',
  'step-limit': 'max_turn_requests',
  rejected: 'refusal',
  error: 'end_turn',
  interrupted: 'cancelled',
}

/** The stop reason of the last turn logged from `from` on (`end_turn` when none was: a command that started no turn). */
function stopReasonOf(events: readonly SessionEvent[], from: number): StopReason {
  for (let index = events.length - 1; index >= from; index--) {
    const event = events[index]!
    if (event.type === 'turn/end') return STOP_REASONS[event.data.reason] ?? 'end_turn'
  }
  return 'end_turn'
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))
const codeOf = (error: unknown): unknown => (typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined)

/**
 * Runs `then` once the response being returned was handed to the connection
 * (the next turn of the event loop); a later request that names the
 * session does the same at once, should it come first.
 */
const afterResponse = (then: () => void): void => {
  setImmediate(then)
}

/**
 * The ACP agent one client talks to: the SDK's agent app with a handler per
 * method, each reaching the host through the session hub and the seams.
 */
export function agentApp(link: ClientLink, deps: AgentAppDeps): AgentApp {
  const { ctx, hub } = deps
  const planMode = () => ctx.require('planMode')

  /** The served session `sessionId` this client attached; `-32002` otherwise. */
  const attached = (sessionId: string): ServedSession => {
    const served = hub.get(sessionId)
    if (served === undefined || !served.has(link)) {
      throw new RequestError(
        -32002,
        `Unknown session ${JSON.stringify(sessionId)}: create it with session/new, or open it with session/load or session/resume first`,
        { sessionId },
      )
    }
    // A request naming the session proves the client read the answer that gave it (whatever the event loop did meanwhile).
    link.announce(served.id)
    served.ready(link)
    return served
  }

  const sendCommands = (served: ServedSession): void => {
    const commands = ctx.get('commands')?.list() ?? []
    link.send(served.id, {
      sessionUpdate: 'available_commands_update',
      availableCommands: commands.map((command) => ({
        name: command.name,
        description: command.description,
        ...(command.input?.hint === undefined ? {} : { input: { hint: command.input.hint } }),
      })),
    })
  }

  /** `modes` and `configOptions` as the log has them (a queued selection is not current). */
  const modesOf = async (served: ServedSession) => {
    const { active } = planMode().get((await served.agent).agent)
    return { modes: modeState(active), configOptions: configOptions(active) }
  }

  const setMode = async (sessionId: string, modeId: unknown): Promise<ServedSession> => {
    const served = attached(sessionId)
    if (!isModeId(modeId)) {
      throw RequestError.invalidParams({ modeId }, `unknown mode id ${JSON.stringify(modeId)}: this agent's modes are "default" and "plan"`)
    }
    await planMode().set((await served.agent).agent, modeId === 'plan')
    await link.flush()
    return served
  }

  const readSession = async (id: string): Promise<SessionInfo | undefined> => {
    const store = deps.store()
    let session = store.get(id)
    let opened = false
    let events: readonly SessionEvent[]
    if (session !== undefined) events = session.events
    else {
      try {
        // Read without the writer's hold where the store can: another process may be writing the session.
        if (store.read !== undefined) events = await store.read(id)
        else {
          session = await store.open(id)
          opened = true
          events = session.events
        }
      } catch {
        // Unreadable: listed by its id alone.
        return { sessionId: id, cwd: deps.cwd }
      }
    }
    const info: SessionInfo = {
      sessionId: id,
      cwd: loggedCwdOf(events) ?? deps.cwd,
      title: sessionTitle(events),
      ...(events.length === 0 ? {} : { updatedAt: new Date(events[events.length - 1]!.time).toISOString() }),
    }
    if (opened && session !== undefined && hub.get(id) === undefined) await store.close(session).catch(() => undefined)
    return info
  }

  const app = agent({ name: deps.info.name })
  app.onRequest('initialize', ({ params }) => {
    link.initialized(params.clientCapabilities)
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, embeddedContext: true },
        sessionCapabilities: { list: {}, resume: {} },
      },
      authMethods: [],
      agentInfo: { name: deps.info.name, version: deps.info.version, ...(deps.info.title === undefined ? {} : { title: deps.info.title }) },
    }
  })

  app.onRequest('session/new', async ({ params }) => {
    const served = await hub.create(params.cwd)
    // The client learns the id from this response: what happens meanwhile waits for it.
    link.hold(served.id)
    served.attach(link)
    sendCommands(served)
    const state = await modesOf(served)
    afterResponse(() => {
      link.announce(served.id)
      served.ready(link)
    })
    return { sessionId: served.id, ...state }
  })

  app.onRequest('session/load', async ({ params }) => {
    const served = await hub.open(params.sessionId, params.cwd)
    await served.agent
    // The replay and the live feed meet here, in one synchronous stretch: no event is missed or sent twice.
    for (const update of new LogUpdates(hub.look).all(served.session.events)) link.send(served.id, update)
    served.attach(link)
    sendCommands(served)
    const state = await modesOf(served)
    await link.flush()
    afterResponse(() => served.ready(link))
    return state
  })

  app.onRequest('session/resume', async ({ params }) => {
    const served = await hub.open(params.sessionId, params.cwd)
    await served.agent
    served.attach(link)
    sendCommands(served)
    const state = await modesOf(served)
    afterResponse(() => served.ready(link))
    return state
  })

  app.onRequest('session/list', async ({ params }) => {
    const ids = [...(await deps.store().list())].sort()
    const start = params.cursor == null ? 0 : Number.parseInt(params.cursor, 10)
    if (!Number.isSafeInteger(start) || start < 0 || (params.cursor != null && String(start) !== params.cursor)) {
      throw RequestError.invalidParams({ cursor: params.cursor }, `cursor ${JSON.stringify(params.cursor)} is not one this agent gave`)
    }
    const sessions: SessionInfo[] = []
    let index = start
    for (; index < ids.length && sessions.length < deps.pageSize; index++) {
      const info = await readSession(ids[index]!)
      if (info !== undefined && (params.cwd == null || info.cwd === params.cwd)) sessions.push(info)
    }
    return { sessions, ...(index < ids.length ? { nextCursor: String(index) } : {}) }
  })

  app.onRequest('session/set_mode', async ({ params }) => {
    await setMode(params.sessionId, params.modeId)
    return {}
  })

  app.onRequest('session/set_config_option', async ({ params }) => {
    if (params.configId !== ACP_MODE_CONFIG_ID) {
      throw RequestError.invalidParams(
        { configId: params.configId },
        `unknown config option ${JSON.stringify(params.configId)}: this agent has one, "${ACP_MODE_CONFIG_ID}"`,
      )
    }
    if ('type' in params && params.type === 'boolean')
      throw RequestError.invalidParams(
        { value: params.value },
        `config option "${ACP_MODE_CONFIG_ID}" is a select of "default" and "plan", not a boolean`,
      )
    const served = await setMode(params.sessionId, params.value)
    return { configOptions: (await modesOf(served)).configOptions }
  })

  app.onRequest('session/prompt', async ({ params, signal }) => {
    const served = attached(params.sessionId)
    if (served.running !== undefined) {
      throw RequestError.invalidRequest(
        { sessionId: served.id },
        `session ${served.id} is running a turn: wait for its stop reason, or send session/cancel`,
      )
    }
    const message = promptMessage(params.prompt)
    const sessionAgent = await served.agent
    const from = served.session.events.length
    const line = promptText(message)
    const name = /^\/([^\s/]\S*)/.exec(line)?.[1]
    const commands = ctx.get('commands')
    const run =
      name !== undefined && commands?.list().some((command) => command.name === name) === true
        ? commands
            .execute({ agent: sessionAgent.agent, line, attachments: promptImages(message), source: { kind: 'user' } })
            .then(() => sessionAgent.idle())
        : sessionAgent.prompt(message)
    served.running = run
    // `$/cancel_request` for the prompt cancels the turn; a connection that closes does not (a review stays open for the next client).
    const cancel = (): void => {
      if (signal.reason instanceof RequestError && signal.reason.code === -32800) void sessionAgent.cancel()
    }
    signal.addEventListener('abort', cancel, { once: true })
    try {
      await run
    } catch (error) {
      const turned = served.session.events.slice(from).some((event) => event.type === 'turn/end')
      if (!turned) {
        if (codeOf(error) === 'BUSY')
          throw RequestError.invalidRequest({ sessionId: served.id }, `session ${served.id} is running a turn: ${messageOf(error)}`)
        throw RequestError.internalError({ sessionId: served.id }, messageOf(error))
      }
    } finally {
      served.running = undefined
      signal.removeEventListener('abort', cancel)
    }
    await served.settled()
    await link.flush()
    return { stopReason: stopReasonOf(served.session.events, from) }
  })

  app.onNotification('session/cancel', async ({ params }) => {
    const served = hub.get(params.sessionId)
    if (served === undefined || !served.has(link)) return
    await (await served.agent).cancel()
  })

  return app
}
