// The `handoff` of a posted review answer (SPEC §18): its shape, and that it chooses only what the review offered.
import type { UserAnswer, UserQuestion } from '@planmode/seams'

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `answers[i].handoff`'s shape: `{ fresh?: boolean, model?: string }`; a message saying what is wrong, or `undefined`. */
export function handoffShapeProblem(handoff: unknown, index: number): string | undefined {
  if (handoff === undefined) return undefined
  if (!isRecord(handoff)) return `answers[${index}].handoff must be { fresh?: boolean, model?: string }`
  const extra = Object.keys(handoff).find((key) => key !== 'fresh' && key !== 'model')
  if (extra !== undefined) return `answers[${index}].handoff has an unknown member ${JSON.stringify(extra)}`
  if (handoff.fresh !== undefined && typeof handoff.fresh !== 'boolean') return `answers[${index}].handoff.fresh must be a boolean`
  if (handoff.model !== undefined && typeof handoff.model !== 'string') return `answers[${index}].handoff.model must be a string`
  return undefined
}

/** What a plan-review question's intent offers to hand the approved plan on to, or `undefined` when it offers nothing. */
function offerOf(question: UserQuestion): { approve: string; fresh: boolean; models: readonly string[] } | undefined {
  const intent = question.intent as { kind?: unknown; approve?: unknown; handoff?: { fresh?: unknown; models?: unknown } } | undefined
  if (intent?.kind !== 'plan-review' || typeof intent.approve !== 'string' || !isRecord(intent.handoff)) return undefined
  const models = Array.isArray(intent.handoff.models) ? intent.handoff.models.filter((model): model is string => typeof model === 'string') : []
  return { approve: intent.approve, fresh: intent.handoff.fresh === true, models }
}

/**
 * Checks a well-shaped `handoff` against its question: only on a
 * plan-review question whose intent offers one, only with its approve
 * option, `fresh: true` only when a fresh session is offered, a `model`
 * only among the offered ones. Returns the handoff as plan-tool reads it —
 * only what it chooses (`fresh: false` and no `model` choose nothing: no
 * handoff at all) — or a message saying what is wrong.
 */
export function checkHandoff(question: UserQuestion, selected: readonly string[], handoff: { fresh?: boolean; model?: string } | undefined, index: number): { handoff?: NonNullable<UserAnswer['handoff']> } | string {
  if (handoff === undefined) return {}
  const offer = offerOf(question)
  if (offer === undefined) return `answers[${index}].handoff: question ${JSON.stringify(question.id)} offers no handoff`
  if (selected.length !== 1 || selected[0] !== offer.approve) return `answers[${index}].handoff goes with ${JSON.stringify(offer.approve)} only`
  if (handoff.fresh === true && !offer.fresh) return `answers[${index}].handoff.fresh: question ${JSON.stringify(question.id)} does not offer a fresh session`
  if (handoff.model !== undefined && !offer.models.includes(handoff.model)) {
    return `answers[${index}].handoff.model: ${JSON.stringify(handoff.model)} is not offered (${offer.models.length === 0 ? 'no models are' : `offered: ${offer.models.join(', ')}`})`
  }
  const chosen = { ...(handoff.fresh === true ? { fresh: true } : {}), ...(handoff.model === undefined ? {} : { model: handoff.model }) }
  return Object.keys(chosen).length === 0 ? {} : { handoff: chosen }
}
