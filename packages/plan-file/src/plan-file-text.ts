/**
 * What one plan file says: the session, its latest plan revision and, when
 * the progress layer tracks that revision, how far it got.
 *
 * @public
 */
export interface PlanFileContent {
  /** The session id. */
  readonly session: string
  /** The revision's `rev` (1, 2, … per session). */
  readonly rev: number
  /** The revision's status (`open`, `approved`, `keep-planning`, `stopped`, `dismissed`, `refused`). */
  readonly status: string
  /** The revision's title: its plan's first heading (SPEC §6), also when the body is the user's edit. */
  readonly title: string
  /** The body: the revision's approved edit when there is one, else its plan, exactly as written. */
  readonly text: string
  /** Steps done (`done` and `skipped`) of the steps there are; only when the tracked plan is this revision and has at least one step. */
  readonly progress?: { readonly done: number; readonly total: number }
}

/**
 * The text of a plan file (SPEC §19): `---\n`, one line each
 * `session: <id>`, `rev: <n>`, `status: <status>`, `title: <title>` and,
 * with `progress`, `progress: <done>/<total>`, every value but `rev`
 * written as a JSON string (`JSON.stringify`, so quotes, backslashes and
 * line breaks in a title are escaped and each value stays on its line);
 * then `---\n` and the body as it is (no line ending added).
 *
 * @example
 * ```ts
 * planFileText({ session: 's1', rev: 2, status: 'approved', title: 'Add "due" dates', text: '# Add "due" dates\n', progress: { done: 1, total: 3 } })
 * // '---\nsession: "s1"\nrev: 2\nstatus: "approved"\ntitle: "Add \\"due\\" dates"\nprogress: "1/3"\n---\n# Add "due" dates\n'
 * ```
 *
 * @public
 */
export function planFileText(content: PlanFileContent): string {
  const lines = [
    '---',
    `session: ${JSON.stringify(content.session)}`,
    `rev: ${content.rev}`,
    `status: ${JSON.stringify(content.status)}`,
    `title: ${JSON.stringify(content.title)}`,
  ]
  if (content.progress !== undefined) lines.push(`progress: ${JSON.stringify(`${content.progress.done}/${content.progress.total}`)}`)
  lines.push('---', '')
  return lines.join('\n') + content.text
}
