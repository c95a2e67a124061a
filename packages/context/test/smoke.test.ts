import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'

describe('smoke', () => {
  it('loads from source', () => {
    expect(new Context().get('x' as never)).toBeUndefined()
  })
})
