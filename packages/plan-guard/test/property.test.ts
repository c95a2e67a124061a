import fc from 'fast-check'
import type { HostAgent } from '@planmode/host'
import { planGuardPlugin, PLAN_GUARD_EXEMPT_TOOLS } from '@planmode/plan-guard'
import type { ToolAnnotations } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { guardHost, refusedContent } from './support.js'

type Step =
  | { readonly kind: 'set'; readonly agent: 0 | 1; readonly active: boolean }
  | { readonly kind: 'call'; readonly agent: 0 | 1 | null; readonly tool: number }

const HINTS: (ToolAnnotations | undefined)[] = [
  undefined,
  {},
  { readOnlyHint: true },
  { readOnlyHint: false },
  { readOnlyHint: true, destructiveHint: true },
  { readOnlyHint: false, destructiveHint: true },
  { destructiveHint: false },
]

/** Tools t0…t6 (one per hint) plus the two plan tools with no annotations. */
const TOOLS = [
  ...HINTS.map((annotations, index) => ({ name: `t${index}`, annotations })),
  ...PLAN_GUARD_EXEMPT_TOOLS.map((name) => ({ name, annotations: undefined })),
]

describe('the guard rule against a plain model of it', () => {
  it('a call is refused exactly when it has an agent whose logged plan mode is on, and the tool is not read-only, exempt or allowed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(TOOLS.map((tool) => tool.name)),
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('set' as const), agent: fc.constantFrom(0 as const, 1 as const), active: fc.boolean() }),
            fc.record({
              kind: fc.constant('call' as const),
              agent: fc.constantFrom(0 as const, 1 as const, null),
              tool: fc.integer({ min: 0, max: TOOLS.length - 1 }),
            }),
          ),
          { maxLength: 25 },
        ),
        async (allow, steps: Step[]) => {
          const host = guardHost({ guard: false, planTools: false })
          host.root.plugin(planGuardPlugin, { allow })
          const tools = host.root.require('tools')
          const ran: string[] = []
          for (const tool of TOOLS) {
            tools.register({
              name: tool.name,
              description: tool.name,
              parameters: { type: 'object' },
              ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
              execute: () => void ran.push(tool.name),
            })
          }
          const agents: HostAgent[] = [await host.agent(), await host.agent()]
          const active = [false, false]
          let index = 0
          for (const step of steps) {
            if (step.kind === 'set') {
              await host.planMode().set(agents[step.agent]!, step.active)
              active[step.agent] = step.active
              continue
            }
            const tool = TOOLS[step.tool]!
            const agent = step.agent === null ? undefined : agents[step.agent]!
            const refused =
              step.agent !== null &&
              active[step.agent]! &&
              tool.annotations?.readOnlyHint !== true &&
              !PLAN_GUARD_EXEMPT_TOOLS.includes(tool.name) &&
              !allow.includes(tool.name)
            const before = ran.length
            const result = await tools.execute(
              tool.name,
              {},
              { ...(agent === undefined ? {} : { agent }), signal: new AbortController().signal, toolCallId: `c${index++}` },
            )
            expect(result.isError).toBe(refused)
            if (refused) expect(result.content).toEqual(refusedContent(tool.name))
            expect(ran.length - before).toBe(refused ? 0 : 1)
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})
