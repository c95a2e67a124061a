/**
 * Module resolve hooks (registered by tree-loader.ts): a bare
 * `@planmode/<name>` import made from outside the tree given in
 * `PLANMODE_BENCH_TREE` resolves to that tree's `packages/<name>`, as
 * the package itself would import its own name (its `exports`, condition
 * `import`: the tree's build). Imports made from inside the tree resolve as
 * usual, so the tree's packages meet only each other. Nothing else changes.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

let tree: string | undefined
let treeUrl = ''

/** Called once by `module.register` with the tree's folder. */
export function initialize(data: { tree?: string } | undefined): void {
  tree = data?.tree
  treeUrl = tree === undefined ? '' : pathToFileURL(tree).href
}

type Next = (specifier: string, context: { parentURL?: string; conditions?: readonly string[] }) => Promise<unknown>

export function resolve(specifier: string, context: { parentURL?: string; conditions?: readonly string[] }, next: Next): Promise<unknown> {
  if (tree === undefined || !specifier.startsWith('@planmode/') || (context.parentURL ?? '').startsWith(treeUrl))
    return next(specifier, context)
  const name = specifier.split('/')[1]!
  return next(specifier, { ...context, parentURL: pathToFileURL(join(tree, 'packages', name, 'package.json')).href })
}
