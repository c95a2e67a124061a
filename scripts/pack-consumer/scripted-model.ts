// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import type { LanguageModelV3 } from '@ai-sdk/provider'
import {
  createConformanceModel,
  createScriptedModel,
  requestSystem,
  type ConformanceModel,
  type ConformanceResponse,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedReply,
  type ScriptedResponse,
} from '@planmode/scripted-model'

const options: ScriptedModelOptions = { provider: 'p', modelId: 'm', chunkSize: 4 }
const failure: ScriptedReply = { error: 'overloaded', retryable: true, statusCode: 503 }
const branch: ScriptedResponse = (request, index) => ({ text: `${requestSystem(request)} ${index}`, finishReason: 'stop' })
export const model: ScriptedModel = createScriptedModel(
  [{ reasoning: 'r', text: 't', toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }, failure, branch],
  options,
)
export const port: LanguageModelV3 = model
const kit: ConformanceResponse = async () => ({ toolCalls: [{ toolName: 'read', input: {}, toolCallId: 'x' }] })
export const conformance: ConformanceModel = createConformanceModel([{ text: 'hi' }, kit])
export const counts: readonly number[] = [...conformance.overruns, conformance.remaining, model.remaining, conformance.scriptErrors.length]
