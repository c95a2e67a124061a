import type { List, ListItem, Root, RootContent } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmTaskListItemFromMarkdown } from 'mdast-util-gfm-task-list-item'
import { toString } from 'mdast-util-to-string'
import { gfmTaskListItem } from 'micromark-extension-gfm-task-list-item'
import type { PlanProgressStep } from './types.js'

/** The heading whose section holds the steps (SPEC §17 rule 2), compared trimmed and case-insensitive. */
const STEPS_HEADING = 'steps'

function parse(plan: string): Root {
  return fromMarkdown(plan, { extensions: [gfmTaskListItem()], mdastExtensions: [gfmTaskListItemFromMarkdown()] })
}

const isList = (node: RootContent): node is List => node.type === 'list'
const isTask = (item: ListItem): boolean => typeof item.checked === 'boolean'

/** Each line break and the blanks around it become one space; then the ends are trimmed. */
function collapse(text: string): string {
  return text.replace(/[ \t]*(?:\r\n|\r|\n)[ \t]*/g, ' ').trim()
}

/**
 * The text of a step: the item's first block when it is a paragraph, as
 * written in the source (from its first inline, which starts after a task
 * marker), collapsed; `''` when it is no paragraph.
 */
function itemText(plan: string, item: ListItem): string {
  const first = item.children[0]
  if (first?.type !== 'paragraph') return ''
  const start = first.children[0]?.position?.start.offset
  const end = first.position?.end.offset
  if (start === undefined || end === undefined) return ''
  return collapse(plan.slice(start, end))
}

/** The items SPEC §17 rules 1–3 choose, in document order, with whether each starts `done`. */
function chosenItems(tree: Root): readonly ListItem[] {
  const top = tree.children
  // Rule 1: the top-level task-list items of every top-level list (plain items of those lists are not steps).
  const tasks = top.filter(isList).flatMap((list) => list.children.filter(isTask))
  if (tasks.length > 0) return tasks
  // Rule 2: the first top-level list of the section of the first top-level heading named Steps.
  const at = top.findIndex((node) => node.type === 'heading' && toString(node).trim().toLowerCase() === STEPS_HEADING)
  if (at >= 0) {
    const depth = (top[at] as { depth: number }).depth
    for (let index = at + 1; index < top.length; index++) {
      const node = top[index]!
      if (node.type === 'heading' && node.depth <= depth) break
      if (isList(node)) return node.children
    }
  }
  // Rule 3: the items of the first top-level ordered list.
  const ordered = top.find((node): node is List => isList(node) && node.ordered === true)
  return ordered?.children ?? []
}

/**
 * The steps of a plan (SPEC §17), in document order, each `pending` unless
 * it is a checked task item (`[x]` or `[X]`), which starts `done`:
 *
 * 1. the plan's top-level task-list items, if it has any;
 * 2. else the top-level items of the first top-level list in the section of
 *    the first heading whose text is `Steps` (any level, trimmed,
 *    case-insensitive; the section ends at the next heading of the same or
 *    a higher level);
 * 3. else (also when that section has no top-level list) the items of the
 *    first top-level ordered list;
 * 4. else none: the plan is not tracked.
 *
 * Read with a CommonMark parser and GFM task-list items, so code blocks
 * never count and only top-level lists and headings do (not inside a list
 * item or a block quote). A step's `text` is its item's first paragraph as
 * written, each line break and the blanks around it replaced by one space,
 * trimmed, without the task marker; an item whose first block is not a
 * paragraph, or whose text is empty, is not a step.
 *
 * @example
 * ```ts
 * planSteps('# Cache\n\n## Steps\n1. Add a cache.\n2. Wire it\n   in.')
 * // [{ step: 1, text: 'Add a cache.', status: 'pending' }, { step: 2, text: 'Wire it in.', status: 'pending' }]
 * ```
 *
 * @public
 */
export function planSteps(plan: string): PlanProgressStep[] {
  if (typeof plan !== 'string' || plan === '') return []
  const steps: PlanProgressStep[] = []
  for (const item of chosenItems(parse(plan))) {
    const text = itemText(plan, item)
    if (text === '') continue
    steps.push({ step: steps.length + 1, text, status: item.checked === true ? 'done' : 'pending' })
  }
  return steps
}
