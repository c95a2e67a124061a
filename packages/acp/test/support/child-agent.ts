import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Readable, Writable } from 'node:stream'
import { TestClient } from './test-client.js'
import { WireRecorder } from './wire.js'

/** An ACP agent running as a child process, and a client of the SDK speaking to it over its stdio. */
export interface ChildAgent {
  readonly child: ChildProcess
  readonly client: TestClient
  /** What the agent wrote on stderr so far. */
  stderr(): string
  /** Resolves with the exit code (or signal) once the process ended. */
  readonly exited: Promise<number | string>
  /** Closes the client (the agent reads the end of stdin) and waits for the process to exit. */
  stop(): Promise<number | string>
}

/** Starts `command args` as an ACP agent over stdio; every line it writes on stdout is checked against the protocol schema. */
export function spawnAgent(
  command: string,
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string } = {},
): ChildAgent {
  const child = spawn(command, [...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string)
  const wire = new WireRecorder()
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  void toAgent.readable
    .pipeThrough(wire.tap('client'))
    .pipeTo(Writable.toWeb(child.stdin!))
    .catch(() => undefined)
  const fromAgent = (Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>).pipeThrough(wire.tap('agent'))
  const client = new TestClient(toAgent.writable, fromAgent, wire)
  return {
    child,
    client,
    stderr: () => stderr,
    exited,
    async stop() {
      client.close()
      child.stdin!.end()
      return exited
    },
  }
}
