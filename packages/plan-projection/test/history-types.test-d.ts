import type {
  PlanHistoryView as ViewFromClient,
  PlanRevision as FromClient,
  PlanDiffLine,
  PlanReviewer,
} from '@planmode/plan-projection/client'
import { diffPlans } from '@planmode/plan-projection/client'
import type {
  PlanHistoryView as ViewFromTypes,
  PlanRevision as FromTypes,
  PlanReviewer as ReviewerFromTypes,
  PlanRevisionStatus,
} from '@planmode/plan-projection/types'
import type { PersistentList, PlanHistoryState, PlanRevision as FromIndex } from '@planmode/plan-projection'
import type { ProjectionKey, ProjectionSnapshot, SessionProjectionMap } from '@planmode/seams'
import { describe, expectTypeOf, it } from 'vitest'

describe('planHistory types (§15)', () => {
  it('./types, ./client and the root serve the same types', () => {
    expectTypeOf<FromClient>().toEqualTypeOf<FromTypes>()
    expectTypeOf<FromIndex>().toEqualTypeOf<FromTypes>()
    expectTypeOf<ViewFromClient>().toEqualTypeOf<ViewFromTypes>()
    expectTypeOf<ViewFromTypes>().toEqualTypeOf<{ readonly revisions: readonly FromTypes[] }>()
    expectTypeOf<PlanHistoryState['revisions']>().toEqualTypeOf<PersistentList<FromTypes>>()
  })

  it('a revision has the §15 fields', () => {
    expectTypeOf<FromTypes['rev']>().toEqualTypeOf<number>()
    expectTypeOf<FromTypes['toolCallId']>().toEqualTypeOf<string>()
    expectTypeOf<FromTypes['seq']>().toEqualTypeOf<number>()
    expectTypeOf<FromTypes['title']>().toEqualTypeOf<string>()
    expectTypeOf<FromTypes['plan']>().toEqualTypeOf<string>()
    expectTypeOf<FromTypes['status']>().toEqualTypeOf<PlanRevisionStatus>()
    expectTypeOf<PlanRevisionStatus>().toEqualTypeOf<'open' | 'approved' | 'keep-planning' | 'stopped' | 'dismissed' | 'refused'>()
    expectTypeOf<FromTypes['approvedPlan']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<FromTypes['feedback']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<FromTypes['comments']>().toEqualTypeOf<
      readonly { readonly line: number; readonly text: string; readonly by?: PlanReviewer }[] | undefined
    >()
    expectTypeOf<FromTypes['unattended']>().toEqualTypeOf<true | undefined>()
    expectTypeOf<FromTypes['by']>().toEqualTypeOf<PlanReviewer | undefined>()
    expectTypeOf<PlanReviewer>().toEqualTypeOf<{ readonly id: string; readonly name?: string }>()
    expectTypeOf<PlanReviewer>().toEqualTypeOf<ReviewerFromTypes>()
  })

  it('merges key planHistory into SessionProjectionMap', () => {
    expectTypeOf<SessionProjectionMap['planHistory']>().toEqualTypeOf<ViewFromTypes>()
    expectTypeOf<'planHistory'>().toMatchTypeOf<ProjectionKey>()
    expectTypeOf<ProjectionSnapshot['values']['planHistory']>().toEqualTypeOf<ViewFromTypes | undefined>()
  })

  it('diffPlans(before, after) returns PlanDiffLine[]', () => {
    expectTypeOf(diffPlans).parameters.toEqualTypeOf<[before: string, after: string]>()
    expectTypeOf(diffPlans).returns.toEqualTypeOf<PlanDiffLine[]>()
    expectTypeOf<PlanDiffLine['kind']>().toEqualTypeOf<'same' | 'added' | 'removed'>()
    expectTypeOf<PlanDiffLine['before']>().toEqualTypeOf<number | undefined>()
  })
})
