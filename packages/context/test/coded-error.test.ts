import { describe, expect, it } from 'vitest'
import { CodedError, MissingServiceError } from '@planmode/context'

const marker = Symbol.for('@planmode/test/QuotaError')

/** A subclass written as the base's TSDoc says: its own name, codes and marker. */
class QuotaError extends CodedError<'FULL' | 'LOCKED'> {
  private readonly [marker] = true
  constructor(code: 'FULL' | 'LOCKED', message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.name = 'QuotaError'
  }
  static override isInstance(error: unknown): error is QuotaError {
    return CodedError.hasMarker(error, marker)
  }
}

/** What an error of another copy of the package looks like to this one: the same markers, another class. */
function fromAnotherCopy(error: Error): object {
  const copy = Object.create(Error.prototype) as Record<string | symbol, unknown>
  for (const key of Reflect.ownKeys(error)) copy[key] = (error as unknown as Record<string | symbol, unknown>)[key]
  return copy
}

describe('CodedError', () => {
  it('carries its code, message and cause; a subclass its name', () => {
    const cause = new Error('disk full')
    const error = new QuotaError('FULL', 'the quota is used up', { cause })
    expect(error).toBeInstanceOf(Error)
    expect([error.name, error.code, error.message, error.cause]).toEqual(['QuotaError', 'FULL', 'the quota is used up', cause])
    expect('cause' in new QuotaError('LOCKED', 'locked')).toBe(false)
  })

  it('recognises its own class and the base across copies, and nothing else', () => {
    const error = new QuotaError('LOCKED', 'locked')
    expect(QuotaError.isInstance(error)).toBe(true)
    expect(CodedError.isInstance(error)).toBe(true)
    const copy = fromAnotherCopy(error)
    expect(copy).not.toBeInstanceOf(QuotaError)
    expect(QuotaError.isInstance(copy)).toBe(true)
    expect(CodedError.isInstance(copy)).toBe(true)
    expect(QuotaError.isInstance(new CodedError('FULL', 'a plain coded error'))).toBe(false)
    expect(MissingServiceError.isInstance(error)).toBe(false)
    for (const other of [new Error('x'), { code: 'FULL' }, null, undefined, 'FULL']) {
      expect(CodedError.isInstance(other)).toBe(false)
      expect(QuotaError.isInstance(other)).toBe(false)
    }
  })

  it('MissingServiceError is one, with code MISSING_SERVICE and its message as before', () => {
    const error = new MissingServiceError('planMode', '@planmode/plan-tool')
    expect(MissingServiceError.isInstance(error) && CodedError.isInstance(error)).toBe(true)
    expect([error.name, error.code, error.service, error.message]).toEqual([
      'MissingServiceError',
      'MISSING_SERVICE',
      'planMode',
      '@planmode/plan-tool requires service "planMode", which is not provided',
    ])
    expect(new MissingServiceError('tools').message).toBe('service "tools" is not provided')
    expect(MissingServiceError.isInstance(fromAnotherCopy(error))).toBe(true)
  })
})
