// The README's Compose blocks, type-checked here: test/readme.test.ts checks that each of them is a run of lines of this
// file (indentation aside) and runs streamedPlan.
import { createPlanModeAgent, pendingApprovals, type PlanModeAgent, type PlanModeLanguageModel } from '@planmode/ai-sdk'
import type { Context } from '@planmode/context'
import type { Session } from '@planmode/seams'
import { jsonSchema, tool, type Tool } from 'ai'

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

/** Handoffs (SPEC §18): a second model a review may choose, and fresh sessions a UI follows. */
export function handoffPlanner(ctx: Context, session: Session, model: PlanModeLanguageModel, bigModel: PlanModeLanguageModel, ui: { show(result: unknown): void }): PlanModeAgent {
  const planner = createPlanModeAgent({
    ctx, session, model,
    models: { big: bigModel },
    fresh: { session: () => ctx.require('sessions').create(), start: async (next) => ui.show(await next.stream()) },
  })
  return planner
}

/** Sub-agents (SPEC §21): an AI SDK tool that runs a helper agent, a child of the planner, which inherits plan mode. */
export function plannerWithHelper(ctx: Context, session: Session, model: PlanModeLanguageModel): PlanModeAgent {
  let planner: PlanModeAgent
  const explore = tool({
    description: 'Ask a helper agent one question about the code.',
    inputSchema: jsonSchema<{ question: string }>({ type: 'object', properties: { question: { type: 'string' } }, required: ['question'] }),
    execute: async ({ question }) => {
      const helper = createPlanModeAgent({ ctx, session: await ctx.require('sessions').create(), model, owner: planner.agent })
      try {
        return (await helper.generate(question)).text // the helper's report is the tool's result
      } finally {
        helper.dispose()
      }
    },
  })
  planner = createPlanModeAgent({ ctx, session, model, tools: { explore } })
  return planner
}

/** The SDK's tool approval: a call that asks ends the SDK call, and the next call answers it (here, approves it). */
export async function approveWaiting(planner: PlanModeAgent): Promise<void> {
  const asked = await planner.generate('Write the release notes.')     // ends with a tool-approval-request
  const [waiting] = pendingApprovals(planner.agent.session.events)      // the log keeps it, across restarts too
  await planner.generate({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: waiting!.approvalId, approved: true }] })
  void asked
}
