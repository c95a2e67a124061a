import { generateText, jsonSchema, streamText, tool } from 'ai'
import { describe, expect, it } from 'vitest'
import { createOfflineModel } from '../src/model/offline-model.js'
import { chooseModel } from '../src/terminal/model-choice.js'

const SECTION = 'PLAN MODE: explore read-only, then call exit_plan_mode.'
const tools = {
  list_files: tool({
    description: 'List files',
    inputSchema: jsonSchema<{ path?: string }>({ type: 'object', properties: { path: { type: 'string' } } }),
  }),
  exit_plan_mode: tool({
    description: 'Submit the plan',
    inputSchema: jsonSchema<{ plan: string }>({ type: 'object', properties: { plan: { type: 'string' } } }),
  }),
}

describe('the offline model through the AI SDK (ai@6)', () => {
  it('works with generateText and streamText', async () => {
    const model = createOfflineModel({ planSection: SECTION })
    const generated = await generateText({ model, system: SECTION, prompt: 'Add due dates to tasks', tools })
    expect(generated.toolCalls).toEqual([expect.objectContaining({ toolName: 'list_files', input: {} })])
    expect(generated.finishReason).toBe('tool-calls')

    const streamed = streamText({ model, system: 'You are a coding agent.', prompt: 'hello' })
    expect(await streamed.text).toMatch(/^Hello! I'm planmode's offline demo model\./)
    expect(await streamed.finishReason).toBe('stop')
  })
})

describe('model choice', () => {
  it('prefers --base-url, then DEEPSEEK_API_KEY, then the offline model', () => {
    expect(chooseModel({}, SECTION, {}).model.provider).toBe('planmode-offline')
    const deepseek = chooseModel({}, SECTION, { DEEPSEEK_API_KEY: 'k' })
    expect(deepseek.model.provider).toMatch(/^deepseek/)
    expect(deepseek.model.modelId).toBe('deepseek-chat')
    const compatible = chooseModel({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }, SECTION, { DEEPSEEK_API_KEY: 'k' })
    expect(compatible.model.provider).toMatch(/^openai-compatible/)
    expect(compatible.model.modelId).toBe('m')
    expect(chooseModel({}, SECTION, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_MODEL: 'x' }).model.modelId).toBe('x')
    expect(chooseModel({ offline: true }, SECTION, { DEEPSEEK_API_KEY: 'k' }).offline).toBe(true)
    expect(() => chooseModel({ baseUrl: 'http://127.0.0.1:1/v1' }, SECTION, {})).toThrow(/needs --model/)
  })
})
