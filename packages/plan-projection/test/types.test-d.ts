import type { PlanProjection as FromClient } from '@planmode/plan-projection/client'
import type { PlanProjection as FromTypes } from '@planmode/plan-projection/types'
import type { ProjectionKey, ProjectionSnapshot, SessionProjectionMap } from '@planmode/seams'
import { describe, expectTypeOf, it } from 'vitest'

describe('plan projection types (§7)', () => {
  it('./types and ./client serve the same type', () => {
    expectTypeOf<FromClient>().toEqualTypeOf<FromTypes>()
    expectTypeOf<FromTypes>().toEqualTypeOf<{ readonly active: boolean; readonly pending: boolean }>()
  })

  it('merges key plan into SessionProjectionMap', () => {
    expectTypeOf<SessionProjectionMap['plan']>().toEqualTypeOf<FromTypes>()
    expectTypeOf<'plan'>().toMatchTypeOf<ProjectionKey>()
    expectTypeOf<ProjectionSnapshot['values']['plan']>().toEqualTypeOf<FromTypes | undefined>()
  })
})
