import { spawn, type ChildProcess } from 'node:child_process'

/** A child process a test drives through its stdin and reads line by line. */
export interface Child {
  readonly child: ChildProcess
  line(pattern: RegExp): Promise<string>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  output(): string
}

/** Every child started and not yet exited (`killAll`). */
const running = new Set<ChildProcess>()

/** Starts `node <file> ...args` with `PLANMODE_PG_URL` set to `url`. */
export function start(file: string, args: readonly string[], url: string): Child {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PLANMODE_PG_URL: url } })
  // A line sent to a process that already ended (the writer whose own answer came after a submitter's won) is lost, not an error.
  child.stdin!.on('error', () => {})
  running.add(child)
  let stdout = ''
  let stderr = ''
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = []
  const check = (): void => {
    for (const wait of [...waiting]) {
      const match = wait.pattern.exec(stdout)
      if (match !== null) {
        waiting.splice(waiting.indexOf(wait), 1)
        wait.resolve(match[1]!)
      }
    }
  }
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    check()
  })
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    }),
  )
  return {
    child,
    exited,
    output: () => `stdout ${JSON.stringify(stdout.slice(-300))} stderr ${JSON.stringify(stderr.slice(-600))}`,
    line: (pattern) =>
      new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve })
        check()
        void exited.then(({ code, signal }) => reject(new Error(`${file} exited (${code ?? signal}) before printing ${pattern}: stdout ${JSON.stringify(stdout.slice(-300))} stderr ${JSON.stringify(stderr.slice(-600))}`)))
      }),
  }
}

/** SIGKILLs every child still running (an `afterAll` of a test file). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL')
}
