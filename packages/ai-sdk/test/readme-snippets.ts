// The README's Compose blocks, type-checked here: test/readme.test.ts checks that each of them is a run of lines of this
// file (indentation aside) and runs streamedPlan.
import { createPlanModeAgent, type PlanModeAgent, type PlanModeLanguageModel } from '@planmode/ai-sdk'
import type { Context } from '@planmode/context'
import type { Session } from '@planmode/seams'
import type { Tool } from 'ai'

/** The agent the HTTP handler streams from (set where your server starts). */
declare const planner: PlanModeAgent

/** An agent with a base prompt and tools of its own; a `/plan` with a message queues it, and one streamed turn sends it. */
export async function streamedPlan(ctx: Context, session: Session, model: PlanModeLanguageModel, { read_file, write_file }: { readonly read_file: Tool; readonly write_file: Tool }): Promise<PlanModeAgent> {
  const planner = createPlanModeAgent({ ctx, session, model, system: 'You are a careful coding agent.', tools: { read_file, write_file } })
  await planner.command('/plan fix the flaky test')   // queues the message (planner.queued === 1)
  const result = await planner.stream()               // sends it; the turn ends with the stream
  for await (const delta of result.textStream) process.stdout.write(delta)
  await planner.idle()                                // turn/end is logged
  return planner
}

export async function POST(req: Request): Promise<Response> {
  const { prompt } = (await req.json()) as { prompt: string }
  const result = await planner.stream(prompt, { abortSignal: req.signal })
  return result.toUIMessageStreamResponse()
}
