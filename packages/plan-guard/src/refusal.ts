/**
 * The plan tools the guard always lets through, whatever their annotations:
 * `exit_plan_mode` (how the model leaves plan mode) and `enter_plan_mode`.
 *
 * @public
 */
export const PLAN_GUARD_EXEMPT_TOOLS: readonly string[] = Object.freeze(['enter_plan_mode', 'exit_plan_mode'])

/**
 * The message of a refused call (SPEC §14); the model reads it as the
 * failed result `Error: <message>`.
 *
 * @example
 * ```ts
 * planGuardRefusal('write_file')
 * // 'write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.'
 * ```
 *
 * @public
 */
export function planGuardRefusal(name: string): string {
  return `${name} is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.`
}
