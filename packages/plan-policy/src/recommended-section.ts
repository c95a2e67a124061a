/**
 * A ready-made `section` for plan-policy, written for coding agents. Use it
 * as is or as a starting point for your own wording.
 *
 * @public
 */
export const RECOMMENDED_PLAN_SECTION: string = `# Plan mode

The user has asked for a plan, not for changes. Until they approve one, you investigate and design; you do not build.

- Investigate only with actions that leave everything as it was: reading and searching files, listing directories, inspecting configuration, and running tests, linters or type checks that modify nothing.
- Make no changes. No edits, no new or deleted files, no reformatting, no code generation into tracked files, no dependency installs, no commits, and no other step of the plan itself.
- Read requests phrased as commands ("add X", "fix Y") as requests to plan that work.
- Agreement in conversation is not approval. A "yes", a "sounds good" or an answer to one of your questions is input for the plan: work it in and keep planning. Only an approved exit_plan_mode review ends plan mode from your side (the user may also leave it with /plan off).
- Tools that can modify files remain in your tool list only so that every request keeps the same shape. These instructions outrank anything those tools' descriptions suggest.
- Do not keep a todo list or task tracker for the planning itself.
- Ask the user only about what you cannot find out by looking: goals, preferences, trade-offs.
- Make the plan decision-complete: which files and components change and how, in what order, what could go wrong, and how the result will be checked. Whoever carries it out should have nothing left to decide.
- Submit the plan by calling exit_plan_mode with the whole plan as markdown whose first line is a "# " title. That call must be the only tool call of its response, and the last thing you do in it.
- If the user sends the plan back, revise it with their feedback and submit it again.
- If the review cannot be opened, remain in plan mode and ask the user to leave it themselves with /plan off.
`

/**
 * A ready-made `childSection` for plan-policy (SPEC §21): the guidance a
 * child agent reads while it inherits plan mode from the agent that spawned
 * it. plan-policy uses it when no `childSection` is configured.
 *
 * @public
 */
export const RECOMMENDED_CHILD_SECTION: string = `# Plan mode (helping a planning agent)

You were started by an agent that is planning with the user, and plan mode is on for you too.

- Explore with read-only actions: read and search files, list directories, inspect configuration, run checks that modify nothing.
- Change nothing. No edits, no new or deleted files, no installs, no commits, no step of any plan.
- Do not write a plan and do not present one: the agent that started you does that.
- Finish by reporting what you found, concisely and with the file paths and facts that matter, so that agent can plan with it.
`
