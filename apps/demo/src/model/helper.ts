import { firstLine, keywords } from './keywords.js'
import type { ReadItem, ReadResult } from './prompt-reader.js'
import type { PlannedCall } from './recipes.js'

/**
 * How the demo's base prompt opens for a helper agent (a child started by
 * the `explore` tool): the offline model answers as a helper when the
 * system prompt starts so.
 */
export const HELPER_PROMPT_OPENING = 'You are a helper agent'

/**
 * A request to hand a question to a helper agent ("Ask a helper: how are
 * tasks stored?"): the offline model answers it with one `explore` call.
 */
export const HELPER_REQUEST = /^(?:please[\s,]+)?(?:ask|have|get|send)\s+(?:a|the)\s+helper(?:\s+agent)?\b(?:\s+to\b)?[\s:,;—-]*/i

/** The explore tool's name. */
export const EXPLORE_TOOL = 'explore'

/** The question of a helper request (the message without "Ask a helper:"), capitalised; `undefined` when the message is no such request or asks nothing. */
export function helperQuestion(text: string): string | undefined {
  const match = HELPER_REQUEST.exec(text.trim())
  if (match === null) return undefined
  const question = text.trim().slice(match[0].length).trim()
  return question === '' ? undefined : question.charAt(0).toUpperCase() + question.slice(1)
}

/** The file a question asks the helper to write its notes to ("write your notes to NOTES.md"), if any. */
export function notesFile(question: string): string | undefined {
  return /\bwrite\b[^.?!]*?`?([\w./-]+\.(?:md|txt))`?/i.exec(question)?.[1]
}

/** What the offline model says or does next; the same shape as its other decisions. */
export interface HelperAction {
  readonly text: string
  readonly calls: readonly PlannedCall[]
}

const CODE = /\.(c|m)?(j|t)sx?$|\.(py|go|rs|rb|java|kt|cs|php|swift|c|h|cpp)$/
const TEST = /(^|\/)(test|tests|__tests__|spec)\/|\.(test|spec)(-d)?\.[a-z]+$|_test\.[a-z]+$/

/** A word without the endings that keep it from matching a file name (`stored` → `stor`, `tasks` → `task`). */
function stem(word: string): string {
  return word.replace(/(?:ing|ed|es|s|e)$/, '').replace(/([b-df-hj-np-tv-z])\1$/, '$1')
}

/** The files a helper reads for `question`: the README, then the two source files whose paths share most words with it. */
function filesFor(question: string, listed: readonly string[]): string[] {
  const stems = keywords(question)
    .map(stem)
    .filter((word) => word.length >= 3)
  const files = listed.filter((file) => !file.endsWith('/'))
  const readme = files.find((file) => /^readme(\.md)?$/i.test(file))
  const code = files.filter((file) => CODE.test(file) && !TEST.test(file))
  const score = (file: string): number => stems.filter((word) => file.toLowerCase().includes(word)).length
  const ranked = code.map((file, index) => ({ file, index, score: score(file) })).sort((a, b) => b.score - a.score || a.index - b.index)
  const matching = ranked.filter((entry) => entry.score > 0)
  const picked = (matching.length > 0 ? matching : ranked).slice(0, 2).map((entry) => entry.file)
  return [...(readme === undefined ? [] : [readme]), ...picked]
}

/** The question without the sentence that asks for notes (its words name no file to read). */
function topicOf(question: string): string {
  const kept = question.split(/(?<=[.?!])\s+/).filter((sentence) => notesFile(sentence) === undefined)
  return kept.length === 0 ? question : kept.join(' ')
}

function searchLine(query: string, text: string): string {
  const lines = text === '' || text === 'No matches.' ? [] : text.split('\n')
  if (lines.length === 0) return `- \`search "${query}"\`: no matches.`
  const files = [...new Set(lines.map((line) => line.split(':')[0]))]
  return `- \`search "${query}"\`: ${lines.length} match${lines.length === 1 ? '' : 'es'} in ${files.map((file) => `\`${file}\``).join(', ')}.`
}

/** What the helper was told, the calls it made (by id) and their results, read from its transcript. */
function readHelper(items: readonly ReadItem[]) {
  let question: string | undefined
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>()
  const results: (ReadResult & { input: Record<string, unknown> })[] = []
  for (const item of items) {
    if (item.kind === 'user') {
      if (question === undefined && !item.notice && item.guidance !== true && item.text !== '') question = item.text
    } else if (item.kind === 'assistant') {
      for (const call of item.calls) calls.set(call.id, { name: call.name, input: call.input })
    } else {
      for (const result of item.results) results.push({ ...result, input: calls.get(result.id)?.input ?? {} })
    }
  }
  return { question: question ?? 'the workspace', calls, results }
}

/**
 * The offline model as a helper agent (a child of the agent that called
 * `explore`): it lists the workspace, reads the README and the files the
 * question names, searches once, writes its notes when the question asks
 * for a file (a write plan-guard refuses while plan mode is on), and
 * reports what it found as its last message. It never plans and never asks
 * the user. Pure: the request alone decides.
 */
export function decideAsHelper(items: readonly ReadItem[], inPlanMode: boolean): HelperAction {
  const { question, calls, results } = readHelper(items)
  const topic = topicOf(question)
  const listing = results.find((result) => result.name === 'list_files')
  if (calls.size === 0) {
    return {
      text: `Looking into “${topic}”${inPlanMode ? ' (read-only: plan mode is on for me too)' : ''}. First, the workspace.`,
      calls: [{ name: 'list_files', input: {} }],
    }
  }
  const listed =
    listing === undefined || listing.isError ? [] : listing.text.split('\n').filter((line) => line !== '' && !line.startsWith('('))
  const reads = results.filter((result) => result.name === 'read_file')
  const searches = results.filter((result) => result.name === 'search')
  const explored = [...calls.values()].some((call) => call.name === 'read_file' || call.name === 'search')
  if (!explored) {
    const query = keywords(topic)
      .map(stem)
      .find((word) => word.length >= 4)
    const reading: PlannedCall[] = filesFor(topic, listed).map((path) => ({ name: 'read_file', input: { path } }))
    if (query !== undefined) reading.push({ name: 'search', input: { query } })
    if (reading.length > 0) return { text: 'Reading what the question touches.', calls: reading }
  }
  const findings = [
    ...reads.map((result) => `- \`${String(result.input.path ?? '')}\`: ${result.isError ? 'could not be read.' : firstLine(result.text)}`),
    ...searches.map((result) => searchLine(String(result.input.query ?? ''), result.isError ? '' : result.text)),
  ]
  if (findings.length === 0) findings.push(`- The workspace has ${listed.length} entries; nothing in it matched the question.`)
  const notes = notesFile(question)
  const wrote = [...calls.entries()].find(([, call]) => call.name === 'write_file')
  if (notes !== undefined && wrote === undefined) {
    return {
      text: `Writing my notes to ${notes}, as asked.`,
      calls: [{ name: 'write_file', input: { path: notes, content: `# Notes: ${topic}\n\n${findings.join('\n')}\n` } }],
    }
  }
  const lines = [`Findings on “${topic}”:`, ...findings]
  const write = wrote === undefined ? undefined : results.find((result) => result.id === wrote[0])
  if (write !== undefined && notes !== undefined) {
    // A paragraph of its own after the list (markdown would run it into the last item).
    lines.push('')
    if (write.isError && /is not available in plan mode/.test(write.text)) {
      lines.push(`I did not write ${notes}: plan-guard refused write_file, since plan mode is on for me too.`)
    } else if (write.isError) {
      lines.push(`Writing ${notes} failed: ${write.text.replace(/^Error: /, '')}`)
    } else if (inPlanMode) {
      lines.push(`I wrote ${notes} although plan mode is on: plan mode is guidance, and nothing blocked the write.`)
    } else {
      lines.push(`My notes are in ${notes}.`)
    }
  }
  return { text: lines.join('\n'), calls: [] }
}
