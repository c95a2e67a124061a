import { existsSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { UserAnswer } from '@planmode/seams'
import { createStyle, wantsColor } from './render/style.js'
import { TranscriptRenderer } from './render/transcript.js'
import { parseCli, loadSection, START_USAGE } from './terminal/cli-args.js'
import { createDemoHost, type DemoHost, type QuestionAnswerer } from './terminal/demo-host.js'
import { LineSource } from './terminal/line-source.js'
import { loggedWorkspace } from './terminal/workspace-event.js'
import { chooseModel, type ModelChoice } from './terminal/model-choice.js'
import { parseReviewAnswer } from './terminal/review-answer.js'
import { copySampleWorkspace } from './workspace/sample-workspace.js'

/** The streams and environment the interactive host runs with. */
export interface InteractiveIo {
  readonly stdin: Readable & { isTTY?: boolean }
  readonly stdout: Writable & { isTTY?: boolean }
  readonly env: NodeJS.ProcessEnv
  /** Subscribes to Ctrl+C when stdin is not a TTY (readline handles it on a TTY). */
  onInterrupt(listener: () => void): () => void
}

function resolveResume(resume: string, sessionDir: string): { id: string; dir: string } {
  const looksLikePath = resume.includes('/') || resume.includes('\\') || resume.endsWith('.jsonl')
  if (!looksLikePath) return { id: resume, dir: sessionDir }
  const file = resolve(resume)
  if (!existsSync(file)) throw new Error(`--resume: no session file at ${file}`)
  return { id: basename(file, '.jsonl'), dir: dirname(file) }
}

/**
 * The interactive terminal host (`pnpm start`). Returns the exit code.
 * With a TTY it shows a readline prompt with the plan badge; without one it
 * reads lines from stdin (review answers included) and echoes each with
 * the badge, one turn at a time, so scripts and tests can drive it.
 */
export async function runInteractive(argv: readonly string[], io: InteractiveIo): Promise<number> {
  const out = io.stdout
  let options
  try {
    options = parseCli(argv)
  } catch (error) {
    out.write(`${(error as Error).message}\n\n${START_USAGE}`)
    return 2
  }
  if (options.help) {
    out.write(START_USAGE)
    return 0
  }
  const tty = io.stdin.isTTY === true
  const style = createStyle(wantsColor(out, io.env))
  let section: string
  let choice: ModelChoice
  try {
    section = loadSection(options.sectionFile, RECOMMENDED_PLAN_SECTION)
    const delay = Number(io.env.PLANMODE_DEMO_DELAY_MS ?? (tty ? 8 : 0))
    choice = chooseModel(options, section, io.env, Number.isFinite(delay) && delay > 0 ? delay : 0)
  } catch (error) {
    out.write(`${(error as Error).message}\n`)
    return 2
  }
  let sessionDir = resolve(options.sessionDir ?? join(homedir(), '.planmode', 'sessions'))
  let resumeId: string | undefined
  if (options.resume !== undefined) {
    const target = resolveResume(options.resume, sessionDir)
    resumeId = target.id
    sessionDir = target.dir
  }
  let workspace: string
  const resumedWorkspace = resumeId === undefined ? undefined : loggedWorkspace(join(sessionDir, `${resumeId}.jsonl`))
  if (options.workspace === undefined && resumedWorkspace !== undefined) {
    workspace = resumedWorkspace
  } else if (options.workspace !== undefined) {
    workspace = resolve(options.workspace)
    if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) {
      out.write(`--workspace ${options.workspace} is not a directory\n`)
      return 2
    }
  } else {
    workspace = copySampleWorkspace()
  }

  let host: DemoHost | undefined
  // On a TTY the prompt line is redrawn below output that arrives while a turn runs.
  let promptVisible = false
  let reviewOpen = false
  let repromptQueued = false
  let reprompt: () => void = () => {}
  const screen = {
    write(chunk: string): void {
      if (!tty) {
        out.write(chunk)
        return
      }
      if (promptVisible) {
        out.write('\r\u001b[2K')
        promptVisible = false
      }
      out.write(chunk)
      if (chunk.endsWith('\n') && !reviewOpen && host?.agent.status === 'running' && !repromptQueued) {
        repromptQueued = true
        setImmediate(() => {
          repromptQueued = false
          reprompt()
        })
      }
    },
  }
  const renderer = new TranscriptRenderer({
    out: screen,
    style,
    planSection: section,
    present: (name, input) => host?.ctx.get('tools')?.get(name)?.presentCall?.(input as never),
    live: tty,
    width: tty ? (out as { columns?: number }).columns : undefined,
  })
  const lines = new LineSource()
  const rl = createInterface({ input: io.stdin, output: tty ? out : undefined, terminal: tty })
  rl.on('line', (line) => lines.push(line))
  rl.on('close', () => lines.end())

  const answer: QuestionAnswerer = async (questions, signal) => {
    const answers: UserAnswer[] = []
    for (const question of questions) {
      if (tty) {
        rl.setPrompt(`${style.yellow('review ›')} `)
        rl.prompt()
        promptVisible = true
        reviewOpen = true
      }
      const line = await lines.next(signal, true).finally(() => {
        reviewOpen = false
        promptVisible = false
      })
      if (line === undefined) return undefined
      if (!tty) out.write(`${style.yellow('review ›')} ${line}\n`)
      if (line.trim().startsWith('/')) {
        // A command dismisses the review; the prompt then runs it.
        lines.unshift(line)
        return undefined
      }
      const parsed = parseReviewAnswer(question, line)
      if (parsed === undefined) return undefined
      answers.push(parsed)
    }
    return answers
  }

  try {
    host = await createDemoHost({ sessionDir, workspace, model: choice.model, section, renderer, answer, resume: resumeId })
  } catch (error) {
    out.write(`cannot start: ${(error as Error).message}\n`)
    rl.close()
    return 1
  }
  const active = host
  renderer.stage('planmode interactive host')
  renderer.info(`model:     ${choice.description}`)
  renderer.info(`workspace: ${workspace}${resumedWorkspace === workspace ? ' (from the session log)' : ''}`)
  renderer.info(`session:   ${active.session.id} (${active.session.file ?? 'in memory'})`)
  if (resumeId !== undefined) {
    const state = active.planState()
    renderer.info(`resumed ${active.session.events.length} events; plan mode ${state.active ? 'on' : 'off'}${state.pending === undefined ? '' : ` (pending → ${state.pending ? 'on' : 'off'})`}`)
  }
  renderer.info('/help lists commands; /plan <goal> starts planning')

  let quitting = false
  let armed = false
  let finish: () => void = () => {}
  const finished = new Promise<void>((resolveFinished) => {
    finish = resolveFinished
  })
  const interrupt = (): void => {
    if (armed) {
      quitting = true
      lines.end()
      finish()
      return
    }
    armed = true
    if (tty) out.write('\n')
    if (active.agent.status === 'running') {
      renderer.warn('cancelling the turn (Ctrl+C again quits)')
      void active.agent.cancel()
    } else {
      renderer.warn('press Ctrl+C again to quit, or type /quit')
      showPrompt(false)
    }
  }
  rl.on('SIGINT', interrupt)
  const unsubscribe = io.onInterrupt(interrupt)
  const showPrompt = (blank = true): void => {
    if (!tty || quitting) return
    if (promptVisible) out.write('\r\u001b[2K')
    else if (blank) out.write('\n')
    rl.setPrompt(renderer.promptText(active.badge()))
    rl.prompt(true)
    promptVisible = true
  }
  reprompt = () => {
    if (!promptVisible && !reviewOpen && active.agent.status === 'running') showPrompt(false)
  }
  if (tty) {
    active.ctx.on('agent/status', ({ status }) => {
      if (status === 'idle') showPrompt()
    })
    active.ctx.on('agent/stream', ({ part }) => renderer.stream(part))
  }

  const loop = async (): Promise<void> => {
    for (;;) {
      if (active.agent.status !== 'running') showPrompt()
      const line = await lines.next()
      if (line === undefined || quitting) return
      promptVisible = false
      armed = false
      if (!tty) renderer.prompt(active.badge(), line)
      else renderer.typed(line)
      const wasRunning = active.agent.status === 'running'
      let outcome
      try {
        outcome = await active.submit(line)
      } catch (error) {
        renderer.warn((error as Error).message)
        continue
      }
      if (outcome === 'quit') return
      // A line typed during a turn (steered, or a /plan that now waits) gets a fresh prompt with the badge.
      if (tty && wasRunning) showPrompt()
      // Without a TTY lines are a script: one turn at a time. With one, the
      // prompt stays live so /plan and messages can reach a running turn.
      if (!tty) await Promise.race([active.agent.idle(), finished])
    }
  }
  await Promise.race([loop(), finished])
  quitting = true
  unsubscribe()
  await active.close()
  renderer.info(`session saved: ${active.session.file ?? active.session.id}`)
  renderer.info(`resume with: pnpm start --resume ${active.session.file ?? active.session.id}`)
  rl.close()
  return 0
}
