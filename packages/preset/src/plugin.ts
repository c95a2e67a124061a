import type { Plugin } from '@planmode/context'
import { hostPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { planFilePlugin } from '@planmode/plan-file'
import { planGuardPlugin } from '@planmode/plan-guard'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import { planToolConfigOf, splitConfig, type PresetConfig } from './config.js'

/**
 * Everything composed: the reference host (`hostPlugin`: the session store
 * the config chooses, the runtimes and the agent loop), then plan-core with
 * its invariant, plan-policy, plan-commands, plan-tool, the `plan` and
 * `planHistory` projections, plan-progress with its `planProgress`
 * projection, and, when asked for, plan-file and plan-guard. Each is a child
 * of this plugin, so disposing its fiber undoes all of them in reverse.
 *
 * What it leaves to the caller: the base system prompt, the tools of the
 * workspace, and who answers a review (a provider on `userQuestions`);
 * without a provider a review fails as SPEC §6.4 says (or approves, with
 * `unattended: 'approve'`).
 *
 * Each layer checks its own part of the config when it loads and throws
 * its own error (plan-policy's for a blank `section`, plan-tool's for
 * repeated `requiredSections`); the host throws when `sessions` is given
 * with `dir`.
 *
 * @example
 * ```ts
 * const root = new Context()
 * root.plugin(presetPlugin, { dir: '.sessions', model: createDeepSeekModel(), guard: true })
 * root.require('userQuestions').registerProvider({ ask: myReviewUi })
 * const agent = root.require('agents').create({ session: await root.require('sessions').create() })
 * await root.require('commands').execute({ agent, line: '/plan add a --verbose flag' })
 * ```
 *
 * @public
 */
export const presetPlugin: Plugin<PresetConfig> = {
  name: '@planmode/preset',
  apply(ctx, config) {
    const split = splitConfig(config)
    const { own, host } = split
    ctx.plugin(hostPlugin, host)
    // plan-core first: every layer requires `planMode`.
    ctx.plugin(planCorePlugin)
    ctx.plugin(planModeInvariantPlugin)
    ctx.plugin(planPolicyPlugin, {
      section: own.section ?? RECOMMENDED_PLAN_SECTION,
      ...(own.placement === undefined ? {} : { placement: own.placement }),
      ...(own.childSection === undefined ? {} : { childSection: own.childSection }),
    })
    ctx.plugin(planCommandsPlugin)
    ctx.plugin(planToolPlugin, planToolConfigOf(split))
    ctx.plugin(planProjectionPlugin)
    ctx.plugin(planHistoryPlugin)
    ctx.plugin(planProgressPlugin)
    ctx.plugin(planProgressProjectionPlugin)
    // After planHistory, which plan-file reads.
    if (own.planDir !== undefined) ctx.plugin(planFilePlugin, { dir: own.planDir })
    if (own.guard !== undefined && own.guard !== false) ctx.plugin(planGuardPlugin, own.guard === true ? undefined : own.guard)
  },
}
