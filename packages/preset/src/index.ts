/**
 * Everything composed: the reference host (`@planmode/host`) with every plan
 * layer, in one plugin whose config chooses the session store (a JSONL
 * folder, any plugin that provides `sessions`, or memory) and the options
 * of the layers (guidance, guard, plan file, required sections, handoff).
 * The terminal host, the web app and the ACP agent of the planmode
 * repository all start from it.
 *
 * @packageDocumentation
 */
export { presetPlugin } from './plugin.js'
export type { PresetConfig } from './config.js'
