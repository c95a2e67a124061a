// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import {
  AI_SDK_SYSTEM_SECTION,
  PlanModeAgentError,
  createPlanModeAgent,
  transcriptMessages,
  type PlanModeAgent,
  type PlanModeCallOptions,
  type PlanModeGenerateResult,
  type PlanModeLanguageModel,
} from '@planmode/ai-sdk'
import { aiSdkHostFactory, type AiSdkConformanceSetup } from '@planmode/ai-sdk/conformance'
import type { Context } from '@planmode/context'
import type { HostFactory } from '@planmode/host-conformance'
import type { Session } from '@planmode/seams'
import type { ModelMessage } from 'ai'

export function make(ctx: Context, session: Session, model: PlanModeLanguageModel): PlanModeAgent {
  return createPlanModeAgent({ ctx, session, model, system: 'Be careful.', maxSteps: 10 })
}
export async function run(agent: PlanModeAgent): Promise<string> {
  const options: PlanModeCallOptions = { temperature: 0, maxRetries: 1 }
  try {
    const result: PlanModeGenerateResult = await agent.generate('hello', options)
    return result.text
  } catch (error) {
    if (PlanModeAgentError.isInstance(error) && error.code === 'REJECTED') return error.reason ?? ''
    throw error
  }
}
export const history = (session: Session): ModelMessage[] => transcriptMessages(session.events)
export const section: string = AI_SDK_SYSTEM_SECTION
export const factory = (setup: (environment: { readonly dir: string }) => AiSdkConformanceSetup): HostFactory =>
  aiSdkHostFactory({ setup, mode: 'stream', agent: { maxSteps: 5 } })
