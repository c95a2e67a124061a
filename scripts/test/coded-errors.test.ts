// Every public error class of a published package uses the one base, `CodedError` of @planmode/context: a
// `code`, a cause, and a marker of its own that a static `isInstance` checks (docs/architecture.md).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { workspacePackages } from './import-rules.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

interface ErrorClass {
  readonly where: string
  readonly name: string
  /** What it extends, as written (`CodedError<'FULL'>` is `CodedError`). */
  readonly base: string | undefined
  readonly hasIsInstance: boolean
  /** A member keyed by a computed name (the marker), set to `true`. */
  readonly hasMarker: boolean
}

/** The exported classes named `…Error` of a source text. */
export function errorClassesOf(where: string, text: string): ErrorClass[] {
  const source = ts.createSourceFile(where, text, ts.ScriptTarget.Latest, true)
  return source.statements.filter(ts.isClassDeclaration).flatMap((node) => {
    const name = node.name?.text
    const exported = node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) === true
    if (name === undefined || !exported || !name.endsWith('Error')) return []
    const heritage = node.heritageClauses?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]
    const members = node.members
    return [
      {
        where,
        name,
        base: heritage === undefined ? undefined : heritage.expression.getText(source),
        hasIsInstance: members.some(
          (member) =>
            ts.isMethodDeclaration(member) &&
            member.name.getText(source) === 'isInstance' &&
            member.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword) === true,
        ),
        hasMarker: members.some(
          (member) =>
            ts.isPropertyDeclaration(member) &&
            ts.isComputedPropertyName(member.name) &&
            member.initializer?.kind === ts.SyntaxKind.TrueKeyword,
        ),
      },
    ]
  })
}

/** Every `…Error` class of the published packages' public surface: declared in their source, exported in their API reports. */
function publicErrorClasses(): ErrorClass[] {
  return workspacePackages(root)
    .filter(
      (pkg) =>
        pkg.folder.startsWith('packages/') &&
        (JSON.parse(readFileSync(join(root, pkg.folder, 'package.json'), 'utf8')) as { private?: boolean }).private !== true,
    )
    .flatMap((pkg) => {
      const etc = join(root, pkg.folder, 'etc')
      const reports = existsSync(etc) ? readdirSync(etc).filter((file) => file.endsWith('.api.md')) : []
      const exported = new Set(
        reports.flatMap((file) =>
          [...readFileSync(join(etc, file), 'utf8').matchAll(/^export (?:abstract )?class (\w+)/gm)].map((match) => match[1]!),
        ),
      )
      return pkg.files
        .flatMap((file) => errorClassesOf(file, readFileSync(join(root, file), 'utf8')))
        .filter((each) => exported.has(each.name))
    })
}

/** What is wrong with the error classes: each extends CodedError (itself, or one that does), with its own marker and isInstance. */
function problemsOf(classes: readonly ErrorClass[]): string[] {
  const byName = new Map(classes.map((each) => [each.name, each]))
  const coded = (each: ErrorClass, seen = new Set<string>()): boolean =>
    each.base === 'CodedError' ||
    (each.base !== undefined && !seen.has(each.name) && byName.has(each.base) && coded(byName.get(each.base)!, seen.add(each.name)))
  return classes.flatMap((each) => [
    ...(each.name === 'CodedError' || coded(each)
      ? []
      : [`${each.where}: ${each.name} extends ${each.base ?? 'nothing'}, not CodedError of @planmode/context`]),
    ...(each.hasIsInstance ? [] : [`${each.where}: ${each.name} has no static isInstance`]),
    ...(each.hasMarker ? [] : [`${each.where}: ${each.name} carries no marker of its own (a computed member set to true)`]),
  ])
}

describe('coded errors', () => {
  it('every public error class of a published package extends CodedError, with a marker of its own and a static isInstance', () => {
    const classes = publicErrorClasses()
    expect(classes.map((each) => each.name)).toEqual(
      expect.arrayContaining([
        'CodedError',
        'MissingServiceError',
        'UserQuestionError',
        'AnswerInboxError',
        'SessionLogError',
        'PlanModeAgentError',
        'HostConformanceError',
        'AgentError',
        'ModelTimeoutError',
        'InvariantViolationError',
        'ProjectionViewError',
      ]),
    )
    expect(problemsOf(classes)).toEqual([])
  })

  it('the check catches a plain Error subclass, one without isInstance or marker, and accepts one built on another coded error', () => {
    const classes = errorClassesOf(
      'x.ts',
      [
        'export class PlainError extends Error {}',
        "export class BareError extends CodedError<'X'> {}",
        "export class GoodError extends CodedError<'G'> {\n  private readonly [marker] = true\n  static override isInstance(e: unknown): e is GoodError { return true }\n}",
        'export class NarrowerError extends GoodError {\n  private readonly [other] = true\n  static override isInstance(e: unknown): e is NarrowerError { return true }\n}',
        'class InternalError extends Error {}',
      ].join('\n'),
    )
    expect(problemsOf(classes)).toEqual([
      'x.ts: PlainError extends Error, not CodedError of @planmode/context',
      'x.ts: PlainError has no static isInstance',
      'x.ts: PlainError carries no marker of its own (a computed member set to true)',
      'x.ts: BareError has no static isInstance',
      'x.ts: BareError carries no marker of its own (a computed member set to true)',
    ])
  })
})
