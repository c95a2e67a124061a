/**
 * What the model reads from plan-policy and plan-progress, measured: each
 * text's size in UTF-8 bytes, on the wire (the message or tool entry as an
 * OpenAI-compatible request body carries it: its JSON), and in tokens of
 * three real tokenizers that run offline from their npm packages —
 * `o200k_base` (GPT-4o, and the open-weight gpt-oss models, whose
 * `o200k_harmony` adds only special tokens) and `cl100k_base` (GPT-4) from
 * `js-tiktoken`, and Llama 3's from `llama3-tokenizer-js`.
 *
 *   node bench/dist/model-text.js        (after `pnpm build`; prints markdown tables)
 *
 * Not a test and not timed: the figures are the same on every run.
 */
import { getEncoding } from 'js-tiktoken'
import llama3Tokenizer from 'llama3-tokenizer-js'
import { planModeNotice } from '@planmode/plan-core'
import { PLAN_GUIDANCE_AGAIN, RECOMMENDED_CHILD_SECTION, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import {
  createUpdatePlanTool,
  planProgressMessage,
  renderPlanProgress,
  UPDATE_PLAN_MESSAGES,
  type PlanProgressStep,
} from '@planmode/plan-progress'

const o200k = getEncoding('o200k_base')
const cl100k = getEncoding('cl100k_base')

/** One thing the model reads: its name, the text counted for tokens, and its JSON on the wire. */
interface Reading {
  readonly what: string
  readonly text: string
  readonly wire: string
}

/** A user message of `text` as a chat-completions body carries it. */
const userMessage = (what: string, text: string): Reading => ({ what, text, wire: JSON.stringify({ role: 'user', content: text }) })
/** A tool result of `text` (for the call `call_1`) as a chat-completions body carries it. */
const toolResult = (what: string, text: string): Reading => ({
  what,
  text,
  wire: JSON.stringify({ role: 'tool', tool_call_id: 'call_1', content: text }),
})

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8')
const tokens = (text: string): [number, number, number] => [
  o200k.encode(text).length,
  cl100k.encode(text).length,
  llama3Tokenizer.encode(text, { bos: false, eos: false }).length,
]

function table(title: string, readings: readonly Reading[]): string[] {
  const lines = [
    `### ${title}`,
    '',
    '| what the model reads | bytes | bytes on the wire | tokens: o200k_base (GPT-4o, gpt-oss) | cl100k_base (GPT-4) | Llama 3 |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const reading of readings) {
    const [a, b, c] = tokens(reading.text)
    lines.push(
      `| ${reading.what} | ${bytes(reading.text).toLocaleString('en-US')} | ${bytes(reading.wire).toLocaleString('en-US')} | ${a} | ${b} | ${c} |`,
    )
  }
  return lines
}

const noticeText = (active: boolean): string => (planModeNotice(active).content[0] as { text: string }).text

const policy: Reading[] = [
  userMessage(
    '`RECOMMENDED_PLAN_SECTION` as the guidance message (`transcript`: the first entry; `system`: in every plan-mode request)',
    RECOMMENDED_PLAN_SECTION,
  ),
  userMessage('the re-entry line, `guidance-again` (`transcript`: every later entry with the same section)', PLAN_GUIDANCE_AGAIN),
  userMessage("the entering notice (plan-core's; before the guidance or the line of a `/plan` entry)", noticeText(true)),
  userMessage("the leaving notice (plan-core's)", noticeText(false)),
  userMessage('`RECOMMENDED_CHILD_SECTION` (an inheriting child, once)', RECOMMENDED_CHILD_SECTION),
]

const STEPS: readonly PlanProgressStep[] = [
  { step: 1, text: 'Add a cache.', status: 'pending' },
  { step: 2, text: 'Wire it in.', status: 'pending' },
  { step: 3, text: 'Test it.', status: 'pending' },
]
const tool = createUpdatePlanTool()
const toolText = JSON.stringify({
  type: 'function',
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
})
const messageText = (message: ReturnType<typeof planProgressMessage>): string => (message.content[0] as { text: string }).text
const refusal = `Error: ${UPDATE_PLAN_MESSAGES.notDone(2)}\n- the tests fail: not ok 1 - cache returns the stored value`

const progress: Reading[] = [
  { what: 'the `update_plan` catalog entry (every request, both modes)', text: toolText, wire: toolText },
  userMessage(
    'the tracking message, three short steps (once per approved plan)',
    messageText(planProgressMessage(UPDATE_PLAN_MESSAGES.track, STEPS)),
  ),
  userMessage(
    'the reminder, three short steps (at most once a turn)',
    messageText(planProgressMessage(UPDATE_PLAN_MESSAGES.remind, STEPS)),
  ),
  toolResult(
    'an `update_plan` result, three short steps',
    renderPlanProgress([{ ...STEPS[0]!, status: 'done' }, { ...STEPS[1]!, status: 'in_progress' }, STEPS[2]!]),
  ),
  toolResult('a refused step (`plan/verify`), the lead line alone', `Error: ${UPDATE_PLAN_MESSAGES.notDone(2)}`),
  toolResult("a refused step with one problem (the README's verifier)", refusal),
]

console.log(
  [...table('plan-policy: what the model reads', policy), '', ...table('plan-progress: what the model reads', progress)].join('\n'),
)
