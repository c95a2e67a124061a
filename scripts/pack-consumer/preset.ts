// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { createScriptedModel, sessionStorePlugin } from '@planmode/host'
import { presetPlugin, type PresetConfig } from '@planmode/preset'

const config: PresetConfig = {
  model: createScriptedModel([{ text: 'hi' }]),
  sessions: { name: 'memory', apply: (ctx) => void ctx.plugin(sessionStorePlugin, {}) },
  guard: { allow: ['run_tests'] },
  requiredSections: ['Steps'],
  freshSessions: true,
  placement: 'transcript',
}
const root = new Context()
export const fiber = () => root.plugin(presetPlugin, config)
export const badge = () => root.get('sessionProjections')?.keys()
