import type { SessionEvent } from '@planmode/seams'

export type Raw = { readonly type: string; readonly data: unknown }
export const place = (bodies: readonly Raw[]): SessionEvent[] =>
  bodies.map((body, seq) => ({ ...body, seq, time: 0 }) as unknown as SessionEvent)
export const call = (toolCallId: string, plan: unknown, toolName = 'exit_plan_mode') => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName,
  input: { plan },
})
export const message = (...content: readonly unknown[]): Raw => ({ type: 'assistant/message', data: { content, turn: 1, step: 1 } })
export const result = (toolCallId: string, isError = true): Raw => ({
  type: 'tool/result',
  data: { toolCallId, toolName: 'exit_plan_mode', isError, content: [{ type: 'text', text: 'r' }] },
})
export const review = (toolCallId: string, outcome: string, extra: Record<string, unknown> = {}): Raw => ({
  type: 'plan/review',
  data: { toolCallId, outcome, ...extra },
})
