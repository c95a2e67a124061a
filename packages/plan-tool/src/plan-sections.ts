import { fromMarkdown } from 'mdast-util-from-markdown'
import { toString } from 'mdast-util-to-string'

/** A heading name as compared (SPEC §20): trimmed and case-insensitive. */
export function sectionKey(name: string): string {
  return name.trim().toLowerCase()
}

/**
 * The names of `plan`'s top-level headings (any level; not inside a list
 * item or a block quote), as compared: their plain text, trimmed and
 * lower-cased. Read with a CommonMark parser, so a `#` line inside a code
 * block is no heading.
 */
export function topLevelSections(plan: string): ReadonlySet<string> {
  const names = new Set<string>()
  for (const node of fromMarkdown(plan).children) {
    if (node.type === 'heading') names.add(sectionKey(toString(node)))
  }
  return names
}

/** The required sections `plan` lacks, in the order given, as `missing section "<name>"` (SPEC §20). */
export function missingSections(plan: string, required: readonly string[]): string[] {
  if (required.length === 0) return []
  const present = topLevelSections(plan)
  return required.filter((name) => !present.has(sectionKey(name))).map((name) => `missing section "${name}"`)
}
