import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

// The one-way arrows of the repository (docs/architecture.md), checked over
// every workspace package read from disk:
//
//   context, seams  ←  plan-core, store  ←  the layers (plan-*)  ←  host-side packages  ←  apps, examples
//
// - A package imports packages of lower tiers only, and of its own tier
//   only where the tier says so (the base, the host side, the apps).
// - The layers never import each other; nothing in packages/plan-* imports
//   a host-side package (the tiers say both).
// - The host is plan-agnostic: it imports no plan package, and its source
//   names no plan event, plan-core or the planMode service. acp reaches a
//   host through the seams only.
// - No import cycle between packages, and no runtime import cycle between
//   the files of one package.
//
// Type-only imports (`import type`, `export type … from`, `import('…')` in
// a type): decided once, here and in docs/architecture.md.
// - Between packages they are arrows like any other: a declaration file
//   that names a package needs it installed, so a type-only back-edge would
//   make a user install the package above to use the one below.
// - Inside a package a type-only back-edge is allowed: it is erased from
//   the build, so it cannot make a runtime cycle or an order of
//   initialisation, and a class and the helper it hands itself to (a writer
//   and its commit, an agent and its turn) may name each other's types.
//   `import { type A } from` is not type-only: under verbatimModuleSyntax it
//   stays in the output as `import {} from`, so it counts.

/** A tier of the graph: its packages, and whether they may import each other (without a cycle). */
export interface Tier {
  readonly name: string
  /** Whether a package may import another package of this tier. */
  readonly withinTier: boolean
  /** Whether a workspace package (its name and its folder, relative to the root) belongs here. */
  readonly holds: (name: string, folder: string) => boolean
}

const named =
  (...names: readonly string[]) =>
  (name: string): boolean =>
    names.includes(name)

/**
 * The tiers, lowest first. A package on disk in none of them fails the check,
 * so a new package is placed here before it lands; the layers and the apps
 * are found by their names and folders.
 */
export const TIERS: readonly Tier[] = [
  // scripted-model imports no package of ours: it sits with the base, usable by any tier.
  { name: 'base', withinTier: true, holds: named('@planmode/context', '@planmode/seams', '@planmode/scripted-model') },
  // store: the session-store contract, above the seams and below every store and host.
  { name: 'core', withinTier: false, holds: named('@planmode/plan-core', '@planmode/store') },
  { name: 'layers', withinTier: false, holds: (name) => /^@planmode\/plan-(?!core$|e2e$)/.test(name) },
  {
    name: 'host side',
    withinTier: true,
    holds: named(
      '@planmode/host',
      '@planmode/ai-sdk',
      '@planmode/store-postgres',
      '@planmode/host-conformance',
      '@planmode/acp',
      '@planmode/cli',
      '@planmode/preset',
      '@planmode/testkit',
    ),
  },
  // The private packages that compose everything: the apps, the examples, the benchmarks, the plan layers' joint tests.
  {
    name: 'apps',
    withinTier: true,
    holds: (name, folder) => /^(apps|examples)\//.test(folder) || folder === 'bench' || name === '@planmode/plan-e2e',
  },
]

const PLAN_PACKAGE = /^@planmode\/plan-/

/** Imports a package may not make although the tiers allow them: `[importer, what it may not import, why]`. */
export const FORBIDDEN: readonly (readonly [string, RegExp, string])[] = [
  ['@planmode/host', PLAN_PACKAGE, 'the host is plan-agnostic'],
  ['@planmode/acp', /^@planmode\/host$/, 'acp reaches a host through the seams only'],
]

/** What the host's source may not name (SPEC: the host stays plan-agnostic): a plan event type, plan-core, the planMode service. */
const PLAN_WORD = /plan\/[a-z]|plan-core|[^@]planMode/

/** A workspace package as the check sees it. */
export interface WorkspacePackage {
  readonly name: string
  /** Its folder, relative to the root (`packages/host`). */
  readonly folder: string
  /** Its `dependencies`, `peerDependencies` and `optionalDependencies` (what an install brings), by name. */
  readonly installs: readonly string[]
  /** Its source files (not tests, builds or reports), relative to the root. */
  readonly files: readonly string[]
}

const CODE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/
/** Declarations, tests and the build tools' configs (`tsup.config.ts`, `vite.config.ts`): not the package's source. */
const NOT_SOURCE = /(?:\.d\.ts|\.test\.ts|\.test-d\.ts|\.config\.[cm]?[jt]s)$/
/** Folders that hold no source of the package: its tests, its builds, its reports. */
const SKIPPED = new Set(['node_modules', 'dist', 'test', 'tests', 'etc', 'coverage'])

function codeFiles(root: string, folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return SKIPPED.has(entry.name) || entry.name.startsWith('.') ? [] : codeFiles(root, path)
    return CODE.test(entry.name) && !NOT_SOURCE.test(entry.name) ? [path] : []
  })
}

/** The workspace's packages (the folders `pnpm-workspace.yaml` lists: `dir/*` and plain folders), read from disk. */
export function workspacePackages(root: string): WorkspacePackage[] {
  const globs = [...readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8').matchAll(/^\s*-\s*['"]?([\w./*-]+)['"]?\s*$/gm)].map(
    (match) => match[1]!,
  )
  const folders = globs
    .filter((glob) => !glob.includes('@'))
    .flatMap((glob) =>
      glob.endsWith('/*')
        ? existsSync(join(root, glob.slice(0, -2)))
          ? readdirSync(join(root, glob.slice(0, -2))).map((name) => `${glob.slice(0, -2)}/${name}`)
          : []
        : [glob],
    )
    .filter((folder) => existsSync(join(root, folder, 'package.json')))
  return folders.map((folder) => {
    const manifest = JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | string | undefined
    >
    const deps = (key: string): string[] => Object.keys((manifest[key] as Record<string, string> | undefined) ?? {})
    return {
      name: manifest.name as string,
      folder,
      installs: [...new Set([...deps('dependencies'), ...deps('peerDependencies'), ...deps('optionalDependencies')])],
      files: codeFiles(root, folder),
    }
  })
}

/** One module a source file imports, and whether only types come through it (erased from the build). */
export interface ImportOf {
  readonly specifier: string
  readonly typeOnly: boolean
}

/**
 * What a source file imports: `import` (`type` or not), `export … from`,
 * `import x = require()`, `import()` and `require()` calls, and `import('…')`
 * types; never a specifier in a comment or a string.
 */
export function importsOf(text: string, fileName = 'file.ts'): ImportOf[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith('x') ? ts.ScriptKind.TSX : undefined)
  const found: ImportOf[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly === true })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly })
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true })
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require'))
        found.push({ specifier: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The file a relative specifier names, as TypeScript resolves it (`./x.js` is `./x.ts`), or `undefined` (an asset, a missing file). */
function resolveRelative(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(from), specifier)
  const stem = base.replace(/\.(?:js|mjs|cjs|ts|mts|cts|tsx|jsx)$/, '')
  const candidates = [
    base,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${stem}.cts`,
    `${stem}.js`,
    `${stem}.mjs`,
    `${stem}.cjs`,
    join(base, 'index.ts'),
    join(base, 'index.js'),
  ]
  const found = candidates.find((file) => existsSync(file) && statSync(file).isFile())
  return found === undefined ? undefined : relative(root, found)
}

/** The cycles of a directed graph: each strongly connected component of more than one node, or a node importing itself (Tarjan). */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (node: string): void => {
    indices.set(node, index)
    low.set(node, index)
    index += 1
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!))
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node)
  return cycles
}

/** The package a specifier names (`@planmode/plan-tool/handoff` → `@planmode/plan-tool`), when it is a scoped or plain package name. */
const packageOf = (specifier: string): string =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!

/** What the repository's import graph breaks, one sentence a violation; empty when it keeps every rule. */
export function importGraphProblems(root: string, tiers: readonly Tier[] = TIERS): string[] {
  const problems: string[] = []
  const packages = workspacePackages(root)
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]))
  const rank = new Map<string, number>()
  for (const pkg of packages) {
    const at = tiers.findIndex((tier) => tier.holds(pkg.name, pkg.folder))
    if (at < 0)
      problems.push(
        `${pkg.name} (${pkg.folder}) is in no tier: place it in the table of scripts/test/import-rules.ts and docs/architecture.md`,
      )
    else rank.set(pkg.name, at)
  }
  const arrow = (from: string, to: string, where: string): void => {
    const [a, b] = [rank.get(from), rank.get(to)]
    if (a === undefined || b === undefined || from === to) return
    if (b > a || (b === a && !tiers[a]!.withinTier)) {
      const why = b > a ? `${tiers[b]!.name} is above ${tiers[a]!.name}` : `two packages of tier ${tiers[a]!.name} never import each other`
      problems.push(`${where}: ${from} imports ${to}, against the arrows (${why})`)
    }
    for (const [importer, target, why] of FORBIDDEN)
      if (from === importer && target.test(to)) problems.push(`${where}: ${from} imports ${to} (${why})`)
  }
  const packageGraph = new Map<string, string[]>(packages.map((pkg) => [pkg.name, []]))
  const link = (from: string, to: string): void => {
    const list = packageGraph.get(from)!
    if (from !== to && !list.includes(to)) list.push(to)
  }
  for (const pkg of packages) {
    for (const dependency of pkg.installs) {
      if (!byName.has(dependency)) continue
      arrow(pkg.name, dependency, `${pkg.folder}/package.json`)
      link(pkg.name, dependency)
    }
    const files = new Map<string, string[]>()
    for (const file of pkg.files) {
      const text = readFileSync(join(root, file), 'utf8')
      const targets: string[] = []
      for (const { specifier, typeOnly } of importsOf(text, file)) {
        if (specifier.startsWith('.')) {
          const target = resolveRelative(root, file, specifier)
          // Inside a package only what stays in the build makes a cycle (see the head of this file).
          if (target !== undefined && !typeOnly && pkg.files.includes(target)) targets.push(target)
        } else if (byName.has(packageOf(specifier))) {
          arrow(pkg.name, packageOf(specifier), file)
          link(pkg.name, packageOf(specifier))
        }
      }
      files.set(file, targets)
      if (pkg.name === '@planmode/host') {
        text.split('\n').forEach((line, at) => {
          if (PLAN_WORD.test(line)) problems.push(`${file}:${at + 1}: the host names plan mode (${line.trim()}); it stays plan-agnostic`)
        })
      }
    }
    for (const cycle of cyclesOf(files)) problems.push(`a runtime import cycle in ${pkg.folder}: ${cycle.join(' ↔ ')}`)
  }
  for (const cycle of cyclesOf(packageGraph)) problems.push(`an import cycle between packages: ${cycle.join(' ↔ ')}`)
  return problems
}
