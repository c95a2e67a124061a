/**
 * The client's reading of named users (`--users`), in Node: whether the
 * server has them, who is a reviewer, how a person is shown.
 */
import { describe, expect, it } from 'vitest'
import { isMe, isReviewer, namedUsers, personName } from '../../client/src/me.js'

describe('named users', () => {
  it('the single token is the anonymous owner: no named users, not a reviewer', () => {
    expect(namedUsers({ role: 'owner' })).toBe(false)
    expect(isReviewer({ role: 'owner' })).toBe(false)
    expect(namedUsers(undefined)).toBe(false)
    expect(isReviewer(undefined)).toBe(false)
  })

  it('a user of --users', () => {
    const rita = { id: 'rita', name: 'Rita', role: 'reviewer' as const }
    expect(namedUsers(rita)).toBe(true)
    expect(isReviewer(rita)).toBe(true)
    expect(isMe(rita, { id: 'rita' })).toBe(true)
    expect(isMe(rita, { id: 'olga', name: 'Rita' })).toBe(false)
    expect(isMe({ role: 'owner' }, { id: 'rita' })).toBe(false)
    expect(isMe(rita, undefined)).toBe(false)
  })

  it('a person is shown by name, else by id', () => {
    expect(personName({ id: 'rita', name: 'Rita Moss' })).toBe('Rita Moss')
    expect(personName({ id: 'rita' })).toBe('rita')
    expect(personName({ id: 'rita', name: '  ' })).toBe('rita')
    expect(personName(undefined)).toBeUndefined()
  })
})
