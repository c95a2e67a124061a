import { firstLine } from './keywords.js'
import type { Episode } from './planning-state.js'
import type { Recipe } from './recipes.js'

function searchLine(query: string, text: string): string {
  const lines = text === '' || text === 'No matches.' ? [] : text.split('\n')
  const files = [...new Set(lines.map((line) => line.split(':')[0]))]
  if (lines.length === 0) return `- \`search "${query}"\`: no matches.`
  return `- \`search "${query}"\`: ${lines.length} match${lines.length === 1 ? '' : 'es'} in ${files.map((file) => `\`${file}\``).join(', ')}.`
}

/** Writes the markdown plan for an episode: a `#` title, findings, steps, checks and the feedback it answers. */
export function writePlan(episode: Episode, recipe: Recipe): string {
  const revision = episode.submissions.length + 1
  const files = [...episode.reads.keys()]
  const lines = [`# ${recipe.title(episode.goal)}`, '', `Goal: ${episode.goal.trim()}`]
  if (revision > 1) lines.push('', `_Revision ${revision}: revised after your review._`)
  lines.push('', '## What I found')
  for (const [path, text] of episode.reads) lines.push(`- \`${path}\`: ${text === '' ? 'could not be read.' : firstLine(text)}`)
  for (const search of episode.searches) lines.push(searchLine(search.query, search.text))
  if (episode.reads.size === 0 && episode.searches.length === 0) lines.push(`- The workspace has ${episode.listed?.length ?? 0} entries.`)
  lines.push('', '## Steps')
  recipe.steps(episode.feedback, files).forEach((step, index) => lines.push(`${index + 1}. ${step}`))
  lines.push('', '## Verification')
  for (const check of recipe.verification(files)) lines.push(`- ${check}`)
  if (episode.feedback.length > 0) {
    lines.push('', '## Feedback addressed')
    for (const text of episode.feedback) lines.push(`- "${text}": ${recipe.addressed(text)}`)
  }
  lines.push('', '## Out of scope')
  for (const item of recipe.outOfScope()) lines.push(`- ${item}`)
  return `${lines.join('\n')}\n`
}
