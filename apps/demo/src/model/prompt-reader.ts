import type { LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from '@ai-sdk/provider'
import { PLAN_GUIDANCE_AGAIN } from '@planmode/plan-policy'
import { handedOffPlan, isProgressMessage } from './plan-progress.js'

/** The two notice texts plan-core sends (SPEC §3.4); never a user's own words. */
export const NOTICE_TEXTS: readonly string[] = [
  'The user switched this session to plan mode.',
  'The user switched this session back to the default mode.',
]

/** A tool call as the model made it. */
export interface ReadCall {
  readonly id: string
  readonly name: string
  readonly input: Record<string, unknown>
}

/** A tool result as the host sent it back. */
export interface ReadResult {
  readonly id: string
  readonly name: string
  readonly text: string
  readonly isError: boolean
}

/** One message of the transcript, simplified for the offline model. */
export type ReadItem =
  | {
      readonly kind: 'user'
      readonly text: string
      /** A plan-mode notice (SPEC §3.4), not the user's own words. */
      readonly notice: boolean
      /** The plan guidance as a transcript message (SPEC §13, `placement: 'transcript'`), not the user's own words. */
      readonly guidance?: boolean
      /** A plan-progress message (SPEC §17): the approved plan's steps, not the user's own words. */
      readonly progress?: boolean
      /** plan-tool's handoff message (SPEC §18), the first of a fresh session: the plan it hands over. */
      readonly handoff?: string
    }
  | { readonly kind: 'assistant'; readonly text: string; readonly calls: readonly ReadCall[] }
  | { readonly kind: 'tool'; readonly results: readonly ReadResult[] }

/** What the offline model reads from one request. */
export interface ReadPrompt {
  readonly system: string
  readonly items: readonly ReadItem[]
}

function outputText(output: LanguageModelV3ToolResultOutput): { text: string; isError: boolean } {
  switch (output.type) {
    case 'text':
      return { text: output.value, isError: output.value.startsWith('Error: ') }
    case 'error-text':
      return { text: output.value, isError: true }
    case 'json':
    case 'error-json':
      return { text: typeof output.value === 'string' ? output.value : JSON.stringify(output.value), isError: output.type === 'error-json' }
    case 'execution-denied':
      return { text: output.reason ?? 'denied', isError: true }
    case 'content':
      return {
        text: output.value.map((part) => (part.type === 'text' ? part.text : '')).join(''),
        isError: false,
      }
  }
}

function parseInput(input: unknown): Record<string, unknown> {
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input)
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {}
    } catch {
      return {}
    }
  }
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {}
}

/**
 * Flattens an AI SDK prompt into the system text and a list of simple
 * items. A user message whose text is `guidance` (the plan section, compared
 * trimmed) is marked as the guidance message of SPEC §13.
 */
export function readPrompt(prompt: LanguageModelV3Prompt, guidance?: string): ReadPrompt {
  const guidanceText = guidance?.trim()
  const system: string[] = []
  const items: ReadItem[] = []
  for (const message of prompt) {
    switch (message.role) {
      case 'system':
        system.push(message.content)
        break
      case 'user': {
        const text = message.content
          .map((part) => (part.type === 'text' ? part.text : ''))
          .join('\n')
          .trim()
        const isGuidance = (guidanceText !== undefined && guidanceText !== '' && text === guidanceText) || text === PLAN_GUIDANCE_AGAIN
        const handoff = handedOffPlan(text)
        items.push({
          kind: 'user',
          text,
          notice: NOTICE_TEXTS.includes(text),
          ...(isGuidance ? { guidance: true } : {}),
          ...(isProgressMessage(text) ? { progress: true } : {}),
          ...(handoff === undefined ? {} : { handoff }),
        })
        break
      }
      case 'assistant': {
        let text = ''
        const calls: ReadCall[] = []
        const results: ReadResult[] = []
        for (const part of message.content) {
          if (part.type === 'text') text += part.text
          else if (part.type === 'tool-call') calls.push({ id: part.toolCallId, name: part.toolName, input: parseInput(part.input) })
          else if (part.type === 'tool-result') results.push({ id: part.toolCallId, name: part.toolName, ...outputText(part.output) })
        }
        items.push({ kind: 'assistant', text, calls })
        if (results.length > 0) items.push({ kind: 'tool', results })
        break
      }
      case 'tool': {
        const results: ReadResult[] = []
        for (const part of message.content) {
          if (part.type === 'tool-result') results.push({ id: part.toolCallId, name: part.toolName, ...outputText(part.output) })
        }
        const previous = items[items.length - 1]
        if (previous?.kind === 'tool') items[items.length - 1] = { kind: 'tool', results: [...previous.results, ...results] }
        else items.push({ kind: 'tool', results })
        break
      }
    }
  }
  return { system: system.join('\n\n'), items }
}
