import type { ToolApprovalResponse, ToolModelMessage } from 'ai'
import type { SessionEvent, ToolResult } from '@planmode/seams'
import { PlanModeAgentError } from './plan-mode-agent-error.js'

/**
 * The log of the AI SDK's tool approvals (`needsApproval`).
 *
 * The SDK asks for an approval by ending the call with a
 * `tool-approval-request` part, and takes the answer with the next call. The
 * adapter keeps both halves in the session log, so the question outlives
 * the process that asked it and the answer is checked against what was
 * asked, never against messages a client sends back:
 *
 * - `ai-sdk/approval-request` is logged when a step ends with a call waiting
 *   for approval (the call itself is in the step's `assistant/message`);
 * - the next call of an agent on the session answers every approval still
 *   waiting, each with an `ai-sdk/approval-response` logged after its
 *   `turn/start`, then the call's `tool/result`: the tool's own result when
 *   approved (run through the `tool/execute` waterfall then, so plan-guard
 *   decides with the mode of that moment), a failed one when denied or not
 *   answered.
 */
declare module '@planmode/seams' {
  interface SessionEventMap {
    'ai-sdk/approval-request': PlanModeApprovalRequest
    'ai-sdk/approval-response': PlanModeApprovalResponse
  }
}

/** A call that waits for the person's approval (the SDK's `tool-approval-request`), as logged. @public */
export interface PlanModeApprovalRequest {
  /** The SDK's id of the approval: the one a `tool-approval-response` names. */
  readonly approvalId: string
  /** The call that waits, logged in its step's `assistant/message`. */
  readonly toolCallId: string
  /** The tool the call is for. */
  readonly toolName: string
}

/** How an approval was settled, as logged at the start of the call that settled it. @public */
export interface PlanModeApprovalResponse {
  /** The approval settled. */
  readonly approvalId: string
  /** Its call, which gets its `tool/result` right after this event. */
  readonly toolCallId: string
  /** Whether the call runs: `true` only for a response that approved it. */
  readonly approved: boolean
  /** The response's reason, when it gave one. */
  readonly reason?: string
  /** `false` when the call did not answer this approval (it was denied for it, {@link APPROVAL_NOT_ANSWERED}). */
  readonly answered: boolean
}

/** A call waiting for approval, with its input as the model sent it. @public */
export interface PlanModePendingApproval extends PlanModeApprovalRequest {
  /** The call's input, as logged (what the person approves). */
  readonly input: unknown
}

/** The failed result text of a call whose approval was denied (`: <reason>` follows when the response gave one). @public */
export const APPROVAL_DENIED = 'Error: the user denied this call'

/** The failed result text of a call whose approval the next call did not answer. @public */
export const APPROVAL_NOT_ANSWERED = 'Error: the call was not approved (the next request did not answer its approval request)'

/**
 * The calls of a session log that wait for an approval: each
 * `ai-sdk/approval-request` with no `ai-sdk/approval-response` and no
 * `tool/result` for its call after it, in the order they were asked. A UI
 * reopening a session shows these again; the agent's next call settles
 * them all.
 *
 * @public
 */
export function pendingApprovals(events: readonly SessionEvent[]): PlanModePendingApproval[] {
  const inputs = new Map<string, unknown>()
  const pending = new Map<string, PlanModePendingApproval>()
  for (const event of events) {
    if (event.type === 'assistant/message') {
      for (const block of event.data.content) if (block.type === 'tool-call') inputs.set(block.toolCallId, block.input)
    } else if (event.type === 'ai-sdk/approval-request') {
      pending.set(event.data.approvalId, { ...event.data, input: inputs.get(event.data.toolCallId) })
    } else if (event.type === 'ai-sdk/approval-response') {
      pending.delete(event.data.approvalId)
    } else if (event.type === 'tool/result') {
      for (const [id, request] of pending) if (request.toolCallId === event.data.toolCallId) pending.delete(id)
    }
  }
  return [...pending.values()]
}

/** Whether a prompt is the SDK's tool message (the approval responses of a call). */
export function isToolMessage(prompt: unknown): prompt is ToolModelMessage {
  return typeof prompt === 'object' && prompt !== null && (prompt as { role?: unknown }).role === 'tool'
}

/**
 * The approval responses of a tool message, by approval id. Throws a
 * `TypeError` for a part that is not a `tool-approval-response`, and
 * `UNKNOWN_APPROVAL` for one that names no approval the log waits for.
 */
export function approvalAnswersOf(
  message: ToolModelMessage,
  pending: readonly PlanModePendingApproval[],
): Map<string, ToolApprovalResponse> {
  const answers = new Map<string, ToolApprovalResponse>()
  const content: readonly unknown[] = Array.isArray(message.content) ? message.content : []
  for (const part of content) {
    const response = part as Partial<ToolApprovalResponse> | null
    if (response?.type !== 'tool-approval-response' || typeof response.approvalId !== 'string' || typeof response.approved !== 'boolean') {
      throw new TypeError(`@planmode/ai-sdk: a tool message prompt holds only tool-approval-response parts, got ${JSON.stringify(part)}`)
    }
    if (!pending.some((request) => request.approvalId === response.approvalId)) {
      throw new PlanModeAgentError('UNKNOWN_APPROVAL', `no call of this session waits for approval "${response.approvalId}"`)
    }
    answers.set(response.approvalId, response as ToolApprovalResponse)
  }
  if (answers.size === 0) throw new TypeError('@planmode/ai-sdk: a tool message prompt needs at least one tool-approval-response part')
  return answers
}

/** The failed result of a call whose approval was denied, or not answered. */
export function deniedResult(response: PlanModeApprovalResponse): ToolResult {
  const text = !response.answered
    ? APPROVAL_NOT_ANSWERED
    : response.reason === undefined || response.reason === ''
      ? APPROVAL_DENIED
      : `${APPROVAL_DENIED}: ${response.reason}`
  return { isError: true, content: [{ type: 'text', text }] }
}
