import { describe, expect, it } from 'vitest'
import { UserQuestionError } from '@planmode/seams'

describe('UserQuestionError', () => {
  it('carries a code and a message', () => {
    const error = new UserQuestionError('NO_PROVIDER', 'no user-questions provider is registered')
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('UserQuestionError')
    expect(error.code).toBe('NO_PROVIDER')
    expect(error.message).toBe('no user-questions provider is registered')
  })

  it('keeps a cause', () => {
    const cause = new Error('socket closed')
    expect(new UserQuestionError('ASK_ABORTED', 'aborted', { cause }).cause).toBe(cause)
  })

  it('isInstance recognises errors from another copy of the package by its marker', () => {
    const foreign = Object.assign(new Error('dismissed'), {
      code: 'ASK_CANCELLED',
      [Symbol.for('@planmode/seams/UserQuestionError')]: true,
    })
    expect(foreign instanceof UserQuestionError).toBe(false)
    expect(UserQuestionError.isInstance(foreign)).toBe(true)
    expect(UserQuestionError.isInstance(new UserQuestionError('ASK_CANCELLED', 'x'))).toBe(true)
  })

  it('isInstance refuses look-alikes and non-objects', () => {
    expect(UserQuestionError.isInstance(Object.assign(new Error('x'), { code: 'ASK_CANCELLED' }))).toBe(false)
    expect(UserQuestionError.isInstance(null)).toBe(false)
    expect(UserQuestionError.isInstance('ASK_CANCELLED')).toBe(false)
    expect(UserQuestionError.isInstance(undefined)).toBe(false)
  })
})
