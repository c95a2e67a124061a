import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Fiber } from '@planmode/context'
import type { HostSession } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planFilePlugin, type PlanFileService } from '@planmode/plan-file'
import { planHistoryPlugin } from '@planmode/plan-projection'
import type { SessionEvent, SessionEventType } from '@planmode/seams'
import { createHost } from '@planmode/testkit'
import { testProgressUnit, type TestStep } from './progress-unit.js'

const made: string[] = []

/** A fresh temporary folder, removed by {@link removeTemp}. */
export function tempDir(prefix = 'planmode-plan-file-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Removes every folder {@link tempDir} made. */
export function removeTemp(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export interface FileHostOptions {
  /** The plan folder; a fresh temporary one by default. */
  readonly dir?: string
  /** Register the test's `planProgress` unit (before plan-file). Default false. */
  readonly progress?: boolean
  /** Load plan-file. Default true. */
  readonly planFile?: boolean
}

/** Appends an event of any type (plan-tool's and plan-progress's are not declared here). */
export const appendRaw = (session: HostSession, type: string, data: unknown): Promise<SessionEvent> =>
  session.append(type as SessionEventType, data as never) as Promise<SessionEvent>

/** The reference host (sessions in memory) with plan-core, planHistory, optionally the test planProgress unit, and plan-file. */
export function fileHost(options: FileHostOptions = {}) {
  const host = createHost()
  const { root } = host
  const core = root.plugin(planCorePlugin)
  const history = root.plugin(planHistoryPlugin)
  const unregisterProgress = options.progress === true ? root.require('sessionProjections').register(testProgressUnit) : undefined
  const dir = options.dir ?? join(tempDir(), 'plans')
  const fiber: Fiber | undefined = options.planFile === false ? undefined : root.plugin(planFilePlugin, { dir })
  const service = (): PlanFileService => root.require('planFile')
  const warnings = () => host.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)
  let calls = 0
  return {
    ...host,
    core,
    history,
    fiber,
    dir,
    unregisterProgress,
    warnings,
    service,
    /** Waits for every write due. */
    settled: () => service().settled(),
    session: () => root.require('sessions').create(),
    /** The model presents `plan` with `exit_plan_mode`; returns the call's id. */
    async present(session: HostSession, plan: string, toolCallId = `call-${++calls}`): Promise<string> {
      await appendRaw(session, 'assistant/message', {
        content: [{ type: 'tool-call', toolCallId, toolName: 'exit_plan_mode', input: { plan } }],
        turn: 1,
        step: 1,
      })
      return toolCallId
    },
    /** The review record of call `toolCallId`. */
    review: (session: HostSession, toolCallId: string, outcome: string, extra: Record<string, unknown> = {}) =>
      appendRaw(session, 'plan/review', { toolCallId, outcome, ...extra }),
    /** A `plan/progress` event for the approved plan `plan`. */
    progress: (session: HostSession, plan: string, steps: readonly TestStep[]) =>
      appendRaw(session, 'plan/progress', { toolCallId: `progress-${++calls}`, plan, steps }),
    /** The file of `session`, or `undefined` when there is none. */
    read(session: HostSession): string | undefined {
      const file = join(dir, `${session.id}.md`)
      return existsSync(file) ? readFileSync(file, 'utf8') : undefined
    },
    /** Names in the plan folder that are not plan files (temporary files left behind). */
    strays: () => (existsSync(dir) ? readdirSync(dir).filter((name) => !name.endsWith('.md')) : []),
  }
}

/** Steps with statuses, numbered from 1. */
export const steps = (...statuses: TestStep['status'][]): TestStep[] =>
  statuses.map((status, at) => ({ step: at + 1, text: `step ${at + 1}`, status }))
