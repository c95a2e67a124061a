import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
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
import { LiveScreen, wantsLiveScreen } from './terminal/live-screen.js'
import { resumeCommand } from './terminal/resume-hint.js'
import { lastLoggedWorkspace, loggedWorkspace } from './terminal/workspace-event.js'
import { chooseModel, chooseModels, type ModelChoice } from './terminal/model-choice.js'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { revisionLine } from './terminal/plans-command.js'
import { enterApproveLabel, ReviewDraft } from './terminal/review-answer.js'
import { isSampleProject, keepSampleWorkspace } from './workspace/sample-workspace.js'
import { printableLine } from './render/printable.js'

/** The streams and environment the interactive host runs with. */
export interface InteractiveIo {
  readonly stdin: Readable & { isTTY?: boolean }
  readonly stdout: Writable & { isTTY?: boolean }
  readonly env: NodeJS.ProcessEnv
  /** Subscribes to SIGINT (on a TTY readline reports the Ctrl+C key itself; this catches a signal sent to the process). */
  onInterrupt(listener: () => void): () => void
  /** Subscribes to the signals that should end the host at once, closing the session (SIGTERM, SIGHUP). */
  onTerminate?(listener: () => void): () => void
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
  if (options.plan && options.resume !== undefined) {
    out.write(`--plan starts a new session; a resumed one keeps its own plan state (type /plan there)\n\n${START_USAGE}`)
    return 2
  }
  const tty = io.stdin.isTTY === true
  const style = createStyle(wantsColor(out, io.env))
  let section: string
  let choice: ModelChoice
  let models: Record<string, LanguageModelV3>
  try {
    section = loadSection(options.sectionFile, RECOMMENDED_PLAN_SECTION)
    const delay = Number(io.env.PLANMODE_DEMO_DELAY_MS ?? (tty ? 8 : 0))
    choice = chooseModel(options, section, io.env, Number.isFinite(delay) && delay > 0 ? delay : 0)
    // --models: what a review may hand the approved plan to (SPEC §18), each from the same source as the default.
    models = chooseModels(options.models, options, section, io.env, Number.isFinite(delay) && delay > 0 ? delay : 0)
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
  // The copy of the sample project this run made (kept beside the session logs), removed only if the host cannot start.
  let copied: string | undefined
  const resumedWorkspace = resumeId === undefined ? undefined : loggedWorkspace(join(sessionDir, `${resumeId}.jsonl`))
  // Read before the host logs this run's workspace.
  const goneWorkspace =
    resumeId !== undefined && resumedWorkspace === undefined ? lastLoggedWorkspace(join(sessionDir, `${resumeId}.jsonl`)) : undefined
  if (options.workspace === undefined && resumedWorkspace !== undefined) {
    workspace = resumedWorkspace
  } else if (options.workspace !== undefined) {
    workspace = resolve(options.workspace)
    if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) {
      out.write(`--workspace ${options.workspace} is not a directory\n`)
      return 2
    }
  } else {
    workspace = keepSampleWorkspace(join(sessionDir, 'workspaces'))
    copied = workspace
  }

  let host: DemoHost | undefined
  // On a terminal the prompt stays below the output and typed keys stay on it (see LiveScreen).
  const screen =
    tty && wantsLiveScreen(io.stdin, out, io.env)
      ? new LiveScreen(out, (frame, label) => `${style.cyan(frame)} ${style.dim(label)} `)
      : undefined
  let reviewOpen = false
  let repromptQueued = false
  let reprompt: () => void = () => {}
  const transcript = {
    write(chunk: string): void {
      if (screen === undefined) {
        out.write(chunk)
        return
      }
      screen.write(chunk)
      // The prompt (or the open review's) comes back below the output.
      if ((reviewOpen || host?.agent.status === 'running') && !repromptQueued) {
        repromptQueued = true
        setImmediate(() => {
          repromptQueued = false
          reprompt()
        })
      }
    },
  }
  const renderer = new TranscriptRenderer({
    out: transcript,
    style,
    planSection: section,
    present: (name, input) =>
      host?.ctx
        .get('tools')
        ?.get(name)
        ?.presentCall?.(input as never),
    live: screen !== undefined,
    width: screen?.width,
    placement: options.placement,
  })
  const lines = new LineSource()
  const rl = createInterface({ input: io.stdin, output: screen?.readlineOutput ?? (tty ? out : undefined), terminal: tty })
  let promptShown = ''
  if (screen !== undefined) {
    screen.attach(rl)
    // Before readline takes the Enter: erase the prompt, so the line is echoed into the transcript, not by readline.
    io.stdin.prependListener('keypress', (_text: unknown, key: { name?: string } | undefined) => {
      if ((key?.name === 'return' || key?.name === 'enter') && screen.promptVisible) {
        screen.hidePrompt()
      }
    })
  }
  rl.on('line', (line) => {
    if (screen !== undefined) screen.insertLine(`${promptShown}${line}`)
    lines.push(line)
  })
  rl.on('close', () => lines.end())
  const showReadline = (text: string, blank: boolean): void => {
    promptShown = text
    if (screen !== undefined) screen.showPrompt(text, blank)
    else if (tty) {
      if (blank) out.write('\n')
      rl.setPrompt(text)
      rl.prompt(true)
    }
  }

  /**
   * The plan, edited: in `$VISUAL` or `$EDITOR` on a terminal (a temporary
   * file, read back and deleted), otherwise typed line by line up to a line
   * `.`. `undefined` when input ends first.
   */
  const editPlan = async (plan: string, signal: AbortSignal | undefined): Promise<string | undefined> => {
    const editor = (io.env.VISUAL ?? io.env.EDITOR ?? '').trim()
    if (editor !== '' && tty) {
      const dir = mkdtempSync(join(tmpdir(), 'planmode-plan-'))
      const file = join(dir, 'plan.md')
      try {
        writeFileSync(file, plan.endsWith('\n') ? plan : `${plan}\n`)
        screen?.hidePrompt()
        rl.pause()
        const raw = io.stdin as Readable & { setRawMode?: (on: boolean) => void; isRaw?: boolean }
        const wasRaw = raw.isRaw === true
        raw.setRawMode?.(false)
        const run = spawnSync(`${editor} '${file.replace(/'/g, `'\\''`)}'`, { shell: true, stdio: 'inherit' })
        if (wasRaw) raw.setRawMode?.(true)
        rl.resume()
        if (run.status !== 0) {
          renderer.warn(`${editor} exited with ${run.status ?? run.signal ?? run.error?.message}; the plan is unchanged`)
          return plan
        }
        return readFileSync(file, 'utf8')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    renderer.info('type the edited plan line by line; a line with only "." ends it')
    const typed: string[] = []
    for (;;) {
      if (tty) {
        // Still the review: no working indicator while the plan is typed.
        reviewOpen = true
        screen?.setWorking(false)
        showReadline(`${style.yellow('edit ›')} `, false)
      }
      const line = await lines.next(signal, true).finally(() => {
        reviewOpen = false
        screen?.hidePrompt()
      })
      if (line === undefined) {
        screen?.setWorking(host?.agent.status === 'running')
        return undefined
      }
      if (!tty) out.write(`${style.yellow('edit ›')} ${printableLine(line)}\n`)
      if (line.trim() === '.') return typed.join('\n')
      typed.push(line)
    }
  }

  const answer: QuestionAnswerer = async (questions, signal) => {
    const answers: UserAnswer[] = []
    for (const question of questions) {
      const draft = new ReviewDraft(question)
      // The entry question (SPEC §12) is not a review of a plan.
      const label = enterApproveLabel(question) === undefined ? 'review ›' : 'plan mode? ›'
      for (;;) {
        if (tty) {
          reviewOpen = true
          screen?.setWorking(false)
          showReadline(`${style.yellow(label)} `, false)
        }
        const line = await lines.next(signal, true).finally(() => {
          reviewOpen = false
          screen?.hidePrompt()
          screen?.setWorking(host?.agent.status === 'running')
          // The model works on the answer: show the prompt with the indicator until output comes.
          setImmediate(() => reprompt())
        })
        if (line === undefined) return undefined
        if (!tty) out.write(`${style.yellow(label)} ${printableLine(line)}\n`)
        const typed = line.trim()
        if (/^\/(plans|help)(\s|$)/.test(typed)) {
          // The history and the help are read-only: look at them without leaving the review.
          await host?.submit(line)
          continue
        }
        if (typed.startsWith('/')) {
          if (host?.isCommand(typed) !== true) {
            // A mistyped command must not throw the review away.
            renderer.warn(
              `unknown command ${printableLine(typed.split(/\s/)[0]!)}: the ${enterApproveLabel(question) === undefined ? 'review' : 'question'} is still open (/help lists the commands)`,
            )
            continue
          }
          // A command dismisses the review; the prompt then runs it.
          lines.unshift(line)
          return undefined
        }
        const step = draft.read(line)
        if (step.kind === 'note') {
          if (step.refused === true) renderer.warn(step.text)
          else renderer.hint(step.text)
          continue
        }
        if (step.kind === 'edit') {
          const edited = await editPlan(draft.edit ?? question.detail ?? '', signal)
          if (edited === undefined) return undefined
          renderer.info(draft.setEdit(edited))
          continue
        }
        answers.push(step.answer)
        break
      }
    }
    return answers
  }

  try {
    host = await createDemoHost({
      sessionDir,
      workspace,
      model: choice.model,
      section,
      placement: options.placement,
      guard: options.guard,
      ...(options.planDir === undefined ? {} : { planDir: resolve(options.planDir) }),
      requiredSections: options.requireSections,
      models,
      // Every review offers a fresh session too: the host carries it out and the terminal follows the new session.
      freshSessions: true,
      // The sample project's tests decide whether a step that names tests is done (SPEC §25); never over a workspace of your own.
      verifyTests: isSampleProject(workspace),
      renderer,
      style,
      answer,
      resume: resumeId,
    })
  } catch (error) {
    out.write(`cannot start: ${(error as Error).message}\n`)
    rl.close()
    if (copied !== undefined) rmSync(copied, { recursive: true, force: true })
    return 1
  }
  const active = host
  renderer.stage('planmode interactive host')
  renderer.info(`model:     ${choice.description}`)
  renderer.info(`workspace: ${workspace}${resumedWorkspace === workspace ? ' (from the session log)' : ''}`)
  if (goneWorkspace !== undefined && options.workspace === undefined) {
    renderer.info(`(the session's workspace ${printableLine(goneWorkspace)} is gone; this is a fresh copy of the sample project)`)
  }
  renderer.info(`session:   ${active.session.id} (${active.session.file ?? 'in memory'})`)
  renderer.info(
    `guidance:  ${options.placement === 'transcript' ? 'a transcript message (the system prompt and tools never change)' : 'in the system prompt (--placement transcript sends it as a message)'}`,
  )
  renderer.info(
    `guard:     ${options.guard ? 'on: tools that are not read-only are refused in plan mode' : 'off: plan mode guides, nothing is blocked (--guard refuses edits)'}`,
  )
  if (isSampleProject(workspace))
    renderer.info("checks:    a step that names tests is done only when the sample project's tests pass (node --test)")
  const planFile = active.ctx.get('planFile')
  if (planFile !== undefined) renderer.info(`plan file: ${planFile.pathOf(active.session.id)}`)
  renderer.info(
    options.models.length > 0
      ? `handoff:   an approval can hand the plan to ${options.models.join(', ')} (from the next step), or to a fresh session`
      : 'handoff:   an approval can hand the plan to a fresh session (--models a,b offers models too)',
  )
  if (options.requireSections.length > 0) {
    renderer.info(
      `sections:  a plan needs ${options.requireSections.map((name) => `“${name}”`).join(', ')} before it is reviewed; without one it goes back to the model`,
    )
  }
  if (resumeId !== undefined) {
    const state = active.planState()
    renderer.info(
      `resumed ${active.session.events.length} events; plan mode ${state.active ? 'on' : 'off'}${state.pending === undefined ? '' : ` (pending → ${state.pending ? 'on' : 'off'})`}`,
    )
    const revisions = active.history()?.revisions ?? []
    // A crashed turn is over (the store closed it when it opened the log): say so, and what it left unanswered.
    const cut = active.lastInterrupted()
    if (cut !== undefined) {
      renderer.ended(`turn ${cut.turn} was interrupted: the process running it ended before the turn did`)
      for (const call of cut.unanswered) {
        if (call.toolName === 'exit_plan_mode') {
          // A review answered before the process ended (its record logged, its result not) is not interrupted.
          const revision = revisions.find((item) => item.toolCallId === call.toolCallId)
          if (revision?.status === 'open') {
            renderer.ended(
              `the review of plan #${revision.rev} “${printableLine(revision.title)}” was open then and is interrupted: nothing was answered; type a message to go on`,
            )
          }
        } else if (call.toolName === 'enter_plan_mode') {
          renderer.ended(
            'the question whether to enter plan mode was open then and is interrupted: nothing was answered; type a message to go on',
          )
        } else renderer.ended(`its call of ${printableLine(call.toolName)} had not finished; the model reads it as failed`)
      }
    }
    const latest = revisions.at(-1)
    if (latest !== undefined)
      renderer.info(`latest plan: ${revisionLine(latest, active.interruptedCalls())} (${revisions.length} in all; /plans lists them)`)
    const origin = active.origin()
    if (origin !== undefined)
      renderer.info(
        `handed on: this session carries out “${printableLine(origin.title)}”, approved in session ${printableLine(origin.session)}`,
      )
    const tracked = active.progress()
    if (tracked?.plan != null && tracked.total > 0)
      renderer.info(
        `progress:  plan ${tracked.done}/${tracked.total} “${printableLine(tracked.plan.title)}” (/plans progress lists the steps)`,
      )
    const resumed = active.resumedModel
    if (resumed?.kind === 'model') renderer.info(`model:     goes on with ${resumed.id}, as the review chose (--models)`)
    else if (resumed?.kind === 'unknown')
      renderer.warn(
        `the review handed this session's plan to model "${printableLine(resumed.name)}", which --models does not name now; the default model goes on (add --models ${printableLine(resumed.name)})`,
      )
  }
  if (options.plan) {
    const result = await active.ctx.require('planMode').set(active.agent, true)
    renderer.info(result === 'committed' ? 'plan mode on (--plan)' : `--plan: ${result}`)
  }
  renderer.info('/help lists commands; /plan <goal> starts planning')

  let quitting = false
  let armed = false
  let finish: () => void = () => {}
  const finished = new Promise<void>((resolveFinished) => {
    finish = resolveFinished
  })
  const quit = (): void => {
    quitting = true
    lines.end()
    finish()
  }
  const showPrompt = (blank = true): void => {
    if (!tty || quitting) return
    showReadline(renderer.promptText(active.badge(), active.status()), blank)
  }
  const interrupt = (): void => {
    if (armed) {
      quit()
      return
    }
    armed = true
    if (screen !== undefined) screen.hidePrompt()
    else if (tty) out.write('\n')
    if (active.agent.status === 'running') {
      renderer.warn('cancelling the turn (Ctrl+C again quits)')
      void active.agent.cancel()
    } else {
      renderer.warn('press Ctrl+C again to quit, or type /quit')
      showPrompt(false)
    }
  }
  rl.on('SIGINT', interrupt)
  const unsubscribe = [io.onInterrupt(interrupt), io.onTerminate?.(quit) ?? (() => {})]
  reprompt = () => {
    if (screen === undefined || screen.promptVisible || quitting) return
    if (reviewOpen) showReadline(promptShown, false)
    else if (active.agent.status === 'running') showPrompt(false)
  }
  // A fresh session of a handoff: its agent is already running its first turn when the host follows it.
  const stopFollowing = active.onHandedOff(({ agent }) => {
    screen?.setWorking(agent.status === 'running' && !reviewOpen)
    reprompt()
  })
  unsubscribe.push(stopFollowing)
  if (tty) {
    // Only this session's agent: a helper agent (explore) streams and idles inside the agent's turn.
    active.ctx.on('agent/status', ({ agent, status }) => {
      if (agent !== active.agent) return
      screen?.setWorking(status === 'running' && !reviewOpen)
      if (status === 'idle') showPrompt()
      else reprompt()
    })
    active.ctx.on('agent/stream', ({ agent, part }) => {
      if (agent === active.agent) renderer.stream(part)
    })
  }

  const loop = async (): Promise<void> => {
    for (;;) {
      if (active.agent.status !== 'running') showPrompt()
      const line = await lines.next()
      if (line === undefined || quitting) return
      armed = false
      if (!tty) renderer.prompt(active.badge(), line, active.status())
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
      if (tty && wasRunning) showPrompt(false)
      // Without a TTY lines are a script: one turn at a time. With one, the
      // prompt stays live so /plan and messages can reach a running turn.
      if (!tty) await Promise.race([active.idle(), finished])
    }
  }
  try {
    await Promise.race([loop(), finished])
    quitting = true
    await active.close()
  } finally {
    for (const stop of unsubscribe) stop()
    screen?.close()
  }
  renderer.info(`session saved: ${active.session.file ?? active.session.id}`)
  // The sessions it handed plans on from (SPEC §18) are kept too; --resume reopens each.
  for (const earlier of active.sessions.slice(0, -1))
    renderer.info(`handed off from: ${earlier.file ?? earlier.id} (--resume ${earlier.id} reopens it)`)
  if (copied !== undefined) renderer.info(`workspace kept: ${copied} (--resume works in it again)`)
  renderer.info(
    `resume with: ${resumeCommand(active.session.file ?? active.session.id, { placement: options.placement, guard: options.guard, requireSections: options.requireSections, models: options.models })}`,
  )
  rl.close()
  return 0
}
