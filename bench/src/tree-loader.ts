/**
 * `node --import <bench>/dist/tree-loader.js …`: with `PLANMODE_BENCH_TREE`
 * set to another checkout of this repository (built), the bench's imports of
 * `@planmode/*` load that tree's packages instead of this one's (see
 * tree-hooks.ts). The pre-step job measures an older tree this way, in the
 * same run and with the same bench code.
 */
import { register } from 'node:module'

const tree = process.env['PLANMODE_BENCH_TREE']
if (tree !== undefined && tree !== '') register('./tree-hooks.js', import.meta.url, { data: { tree } })
