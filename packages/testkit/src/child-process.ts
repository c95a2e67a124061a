import { spawn, type ChildProcess } from 'node:child_process'

// A test's child processes: node running a script of the test (a writer, a
// submitter, a command line) whose stdout the test reads line by line. Every
// child started here is remembered until it exits, so a test file's
// `afterAll(stopChildren)` kills what a failed test left running.

/** How a child ended: its exit code, or the signal that killed it. */
export interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** A child process the test talks to. */
export interface StartedChild {
  /** The process (its `pid`, `stdin`, `kill`). */
  readonly child: ChildProcess
  /**
   * The first line of stdout matching `pattern` that no earlier call took
   * (so asking twice for `asked …` gives the next such line), as its first
   * group, or the whole line without one. Rejects, with what the child
   * printed, when it exits before printing such a line.
   */
  line(pattern: RegExp): Promise<string>
  /** Resolves once the process exited. */
  readonly exited: Promise<ChildExit>
  /** The end of what it printed on stdout and stderr, for a failure message. */
  output(): string
  /** All it printed on stdout so far. */
  stdout(): string
  /** All it printed on stderr so far. */
  stderr(): string
}

/** Options of {@link startChild} and {@link runChild}. */
export interface ChildOptions {
  /** Variables set for the child, over this process's environment (`undefined` unsets one). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Its working directory (default: this process's). */
  readonly cwd?: string
  /** The user and group it runs as (a test that runs as root, playing other local users). */
  readonly uid?: number
  readonly gid?: number
}

const running = new Set<ChildProcess>()

/** Starts `node <file> <args>`. Its stdin is a pipe; a line written after it ended is dropped, not an error. */
export function startChild(file: string, args: readonly string[], options: ChildOptions = {}): StartedChild {
  const { env, ...spawnOptions } = options
  const child = spawn(process.execPath, [file, ...args], {
    ...spawnOptions,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  child.stdin!.on('error', () => {})
  running.add(child)
  const lines: string[] = []
  let partial = ''
  let stdout = ''
  let stderr = ''
  const waiting: { readonly pattern: RegExp; readonly resolve: (value: string) => void }[] = []
  const serve = (): void => {
    for (const wait of [...waiting]) {
      const at = lines.findIndex((line) => wait.pattern.test(line))
      if (at < 0) continue
      const [line] = lines.splice(at, 1)
      waiting.splice(waiting.indexOf(wait), 1)
      const match = wait.pattern.exec(line!)!
      wait.resolve(match[1] ?? line!)
    }
  }
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = chunk.toString()
    stdout += text
    const parts = (partial + text).split('\n')
    partial = parts.pop()!
    lines.push(...parts)
    serve()
  })
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const output = (): string => `stdout ${JSON.stringify(stdout.slice(-300))} stderr ${JSON.stringify(stderr.slice(-600))}`
  const exited = new Promise<ChildExit>((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    }),
  )
  return {
    child,
    exited,
    output,
    stdout: () => stdout,
    stderr: () => stderr,
    line: (pattern) =>
      new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve })
        serve()
        void exited.then(({ code, signal }) =>
          reject(new Error(`${file} exited (${code ?? signal}) before printing ${pattern}: ${output()}`)),
        )
      }),
  }
}

/** Runs `node <file> <args>` to its end; resolves with how it ended and all it printed. */
export async function runChild(
  file: string,
  args: readonly string[],
  options: ChildOptions = {},
): Promise<ChildExit & { readonly stdout: string; readonly stderr: string }> {
  const started = startChild(file, args, options)
  started.child.stdin!.end()
  let stdout = ''
  let stderr = ''
  started.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  started.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exit = await started.exited
  // 'exit' can come before the last output: wait for both streams to end.
  await Promise.all(
    [started.child.stdout!, started.child.stderr!].map((stream) =>
      stream.readableEnded ? undefined : new Promise((resolve) => stream.once('end', resolve)),
    ),
  )
  return { ...exit, stdout, stderr }
}

/** Kills (SIGKILL) every child started here that is still running: call it after a test file's tests. */
export function stopChildren(): void {
  for (const child of running) child.kill('SIGKILL')
}
