const marker = Symbol.for('@planmode/context/CodedError')

/**
 * The base of every planmode error a caller branches on: a `code`, the
 * `cause` it was given, and a marker that survives two copies of a package.
 * Test with the static `isInstance` of the class you expect rather than
 * `instanceof`, which fails when a package is installed twice (a host's copy
 * and a layer's); `CodedError.isInstance` recognises an error of any
 * planmode package.
 *
 * @remarks
 * A subclass sets its `name`, keeps its codes as a string union, and gives
 * itself a marker of its own (a `Symbol.for` key named after its package
 * and class, which never changes) with a static `isInstance` that checks it
 * through {@link CodedError.hasMarker}, as the example does.
 *
 * @example
 * ```ts
 * const marker = Symbol.for('@acme/store/QuotaError')
 *
 * export class QuotaError extends CodedError<'FULL' | 'LOCKED'> {
 *   private readonly [marker] = true
 *   constructor(code: 'FULL' | 'LOCKED', message: string, options?: { cause?: unknown }) {
 *     super(code, message, options)
 *     this.name = 'QuotaError'
 *   }
 *   static override isInstance(error: unknown): error is QuotaError {
 *     return CodedError.hasMarker(error, marker)
 *   }
 * }
 *
 * try { await store.append(event) } catch (error) {
 *   if (QuotaError.isInstance(error) && error.code === 'FULL') await compact()
 * }
 * ```
 *
 * @public
 */
export class CodedError<Code extends string = string> extends Error {
  /** What went wrong; branch on it. */
  readonly code: Code
  private readonly [marker] = true

  constructor(code: Code, message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'CodedError'
    this.code = code
  }

  /** True for an error of any planmode package that uses this base, from any copy of it. */
  static isInstance(error: unknown): error is CodedError {
    return CodedError.hasMarker(error, marker)
  }

  /** Whether `error` is an object carrying the marker `key` (what each subclass's `isInstance` checks). */
  static hasMarker(error: unknown, key: symbol): boolean {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[key] === true
  }
}
