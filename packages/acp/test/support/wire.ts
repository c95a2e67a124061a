import { createRequire } from 'node:module'
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js'

/**
 * The ACP protocol schema of the SDK itself (`schema/v1/schema.json`), and
 * a checker of every message an agent writes: each notification, request
 * and response is validated against the schema's definition for its method
 * (a response by the method of the client request it answers).
 */
const schema = createRequire(import.meta.url)('@agentclientprotocol/sdk/schema/v1/schema.json') as object
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
ajv.addSchema(schema, 'acp')
const validators = new Map<string, ValidateFunction>()
const validator = (definition: string): ValidateFunction => {
  let found = validators.get(definition)
  if (found === undefined) {
    found = ajv.compile({ $ref: `acp#/$defs/${definition}` })
    validators.set(definition, found)
  }
  return found
}

/** The schema definition of what the agent sends for each method. */
const AGENT_SENDS: Record<string, string> = {
  'session/update': 'SessionNotification',
  'session/request_permission': 'RequestPermissionRequest',
  'elicitation/create': 'CreateElicitationRequest',
  '$/cancel_request': 'CancelRequestNotification',
}
/** The schema definition of the agent's response to each client request. */
const AGENT_ANSWERS: Record<string, string> = {
  initialize: 'InitializeResponse',
  'session/new': 'NewSessionResponse',
  'session/load': 'LoadSessionResponse',
  'session/list': 'ListSessionsResponse',
  'session/resume': 'ResumeSessionResponse',
  'session/set_mode': 'SetSessionModeResponse',
  'session/set_config_option': 'SetSessionConfigOptionResponse',
  'session/prompt': 'PromptResponse',
}

/** One JSON-RPC message as it crossed the wire. */
export interface WireMessage {
  readonly from: 'agent' | 'client'
  readonly message: {
    readonly id?: unknown
    readonly method?: string
    readonly params?: unknown
    readonly result?: unknown
    readonly error?: { code: number; message: string }
  }
}

/**
 * Records both directions of one connection, line by line, and checks each
 * line the agent writes against the protocol schema. `problems` lists what
 * failed (an empty list is the expectation every test ends with).
 */
export class WireRecorder {
  readonly messages: WireMessage[] = []
  readonly problems: string[] = []
  private readonly clientRequests = new Map<string, string>()

  /** A pass-through stream of bytes that records the lines `from` writes. */
  tap(from: 'agent' | 'client'): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder()
    let buffered = ''
    return new TransformStream({
      transform: (chunk, controller) => {
        buffered += decoder.decode(chunk, { stream: true })
        let newline = buffered.indexOf('\n')
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim()
          buffered = buffered.slice(newline + 1)
          if (line !== '') this.record(from, line)
          newline = buffered.indexOf('\n')
        }
        controller.enqueue(chunk)
      },
    })
  }

  /** Every `session/update` the agent sent, in order. */
  updates(sessionId?: string): { sessionId: string; update: { sessionUpdate: string; [key: string]: unknown } }[] {
    return this.messages
      .filter((entry) => entry.from === 'agent' && entry.message.method === 'session/update')
      .map((entry) => entry.message.params as { sessionId: string; update: { sessionUpdate: string } })
      .filter((params) => sessionId === undefined || params.sessionId === sessionId)
  }

  /**
   * Records a transcript of both directions, one JSON-RPC message a line,
   * as a client program prints it (`acpx --format json`): requests and
   * notifications by their method, responses by the side whose request is
   * pending with that id.
   */
  feed(lines: readonly string[]): void {
    const pending = { agent: new Set<string>(), client: new Set<string>() }
    for (const line of lines) {
      let message: WireMessage['message']
      try {
        message = JSON.parse(line) as WireMessage['message']
      } catch {
        continue
      }
      const id = JSON.stringify(message.id)
      if (message.method !== undefined) {
        const from = Object.hasOwn(AGENT_SENDS, message.method) ? 'agent' : 'client'
        if (message.id !== undefined) pending[from].add(id)
        this.record(from, line)
      } else {
        const from = pending.client.has(id) ? 'agent' : 'client'
        pending[from === 'agent' ? 'client' : 'agent'].delete(id)
        this.record(from, line)
      }
    }
  }

  private record(from: 'agent' | 'client', line: string): void {
    let message: WireMessage['message']
    try {
      message = JSON.parse(line) as WireMessage['message']
    } catch {
      this.problems.push(`${from} wrote a line that is not JSON: ${line.slice(0, 200)}`)
      return
    }
    this.messages.push({ from, message })
    if (from === 'client') {
      if (message.method !== undefined && message.id !== undefined) this.clientRequests.set(JSON.stringify(message.id), message.method)
      return
    }
    let definition: string | undefined
    let value: unknown
    if (message.method !== undefined) {
      definition = AGENT_SENDS[message.method]
      value = message.params
      if (definition === undefined) this.problems.push(`the agent sent ${message.method}, which the test does not expect`)
    } else if (message.error !== undefined) {
      definition = 'Error'
      value = message.error
    } else {
      const method = this.clientRequests.get(JSON.stringify(message.id))
      definition = method === undefined ? undefined : AGENT_ANSWERS[method]
      value = message.result
      if (definition === undefined) this.problems.push(`the agent answered ${String(method)}, which the test does not expect`)
    }
    if (definition === undefined) return
    const check = validator(definition)
    if (!check(value)) this.problems.push(`${definition} failed the ACP schema: ${ajv.errorsText(check.errors)} in ${line.slice(0, 400)}`)
  }
}
