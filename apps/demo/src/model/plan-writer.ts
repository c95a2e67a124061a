import { firstLine } from './keywords.js'
import type { Episode } from './planning-state.js'
import type { Recipe } from './recipes.js'

function searchLine(query: string, text: string): string {
  const lines = text === '' || text === 'No matches.' ? [] : text.split('\n')
  const files = [...new Set(lines.map((line) => line.split(':')[0]))]
  if (lines.length === 0) return `- \`search "${query}"\`: no matches.`
  return `- \`search "${query}"\`: ${lines.length} match${lines.length === 1 ? '' : 'es'} in ${files.map((file) => `\`${file}\``).join(', ')}.`
}

/** The headings every plan of the offline model has (compared as plan-tool compares them: trimmed, case-insensitive). */
const OWN_SECTIONS = ['what i found', 'steps', 'verification', 'out of scope']
const FEEDBACK_SECTION = 'feedback addressed'

/** What the offline model writes under a heading a plan check asked for (SPEC §20), by what the name says. */
function sectionBody(name: string, episode: Episode, recipe: Recipe, files: readonly string[]): string[] {
  const key = name.trim().toLowerCase()
  if (/risk/.test(key))
    return [
      '- Old data: tasks saved before the change must still load; the steps keep every new field optional.',
      '- Scope creep: anything beyond the goal stays out (see "Out of scope").',
    ]
  if (/roll ?back|revert|undo/.test(key))
    return [
      '- Every change is in the files the steps name; reverting them (one commit) restores the old behaviour, and no data format changes in a way the old code cannot read.',
    ]
  if (/test/.test(key)) return recipe.verification(files).map((check) => `- ${check}`)
  if (/file|touch/.test(key))
    return files.length === 0 ? ['- None read yet: the steps name the files.'] : files.map((file) => `- \`${file}\``)
  if (/question/.test(key)) return ['- None: inspecting the workspace answered what the plan needs.']
  if (/summary|overview|context|background|goal/.test(key)) return [`- ${episode.goal.trim()}`]
  return [`- (The offline demo model has nothing specific to say under “${name.trim()}”; a real model would fill this in.)`]
}

/** Writes the markdown plan for an episode: a `#` title, findings, steps, checks, the sections a plan check asked for, and the feedback it answers. */
export function writePlan(episode: Episode, recipe: Recipe): string {
  const revision = episode.submissions.length + 1
  const files = [...episode.reads.keys()]
  const lines = [`# ${recipe.title(episode.goal)}`, '', `Goal: ${episode.goal.trim()}`]
  if (revision > 1)
    lines.push(
      '',
      `_Revision ${revision}: ${episode.review === 'not-ready' ? 'revised to pass the plan check' : 'revised after your review'}._`,
    )
  lines.push('', '## What I found')
  for (const [path, text] of episode.reads) lines.push(`- \`${path}\`: ${text === '' ? 'could not be read.' : firstLine(text)}`)
  for (const search of episode.searches) lines.push(searchLine(search.query, search.text))
  if (episode.reads.size === 0 && episode.searches.length === 0) lines.push(`- The workspace has ${episode.listed?.length ?? 0} entries.`)
  lines.push('', '## Steps')
  const steps = recipe.steps(episode.feedback, files)
  for (const check of episode.checks) steps.push(`From the plan check: ${check}`)
  steps.forEach((step, index) => lines.push(`${index + 1}. ${step}`))
  lines.push('', '## Verification')
  for (const check of recipe.verification(files)) lines.push(`- ${check}`)
  for (const name of episode.sections) {
    if (OWN_SECTIONS.includes(name.trim().toLowerCase()) || name.trim().toLowerCase() === FEEDBACK_SECTION) continue
    lines.push('', `## ${name.trim()}`, ...sectionBody(name, episode, recipe, files))
  }
  const answered = [...episode.feedback, ...episode.checks]
  if (answered.length > 0) {
    lines.push('', '## Feedback addressed')
    for (const text of answered) lines.push(`- "${text}": ${recipe.addressed(text)}`)
  } else if (episode.sections.some((name) => name.trim().toLowerCase() === FEEDBACK_SECTION)) {
    lines.push('', '## Feedback addressed', '- None yet: nobody has reviewed this plan.')
  }
  lines.push('', '## Out of scope')
  for (const item of recipe.outOfScope()) lines.push(`- ${item}`)
  return `${lines.join('\n')}\n`
}
