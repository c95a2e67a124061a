import type { ScriptedResponse } from '@planmode/host'

/** The first plan the scripted model presents. */
export const PLAN_V1 = [
  '# Add a greeting',
  '',
  '## Steps',
  '',
  '1. Add greet() to src/greet.ts.',
  '2. Print the greeting from the CLI.',
].join('\n')

/** The plan it presents again after the feedback. */
export const PLAN_V2 = [PLAN_V1, '3. Test greet() in test/greet.test.ts.'].join('\n')

/** What the person types to start the arc. */
export const GOAL = 'Add a greeting to the CLI'

/** The feedback the person gives on the first plan. */
export const FEEDBACK = 'Add a test for greet() too.'

/**
 * The default model of the arc: explore with a read, present PLAN_V1, then
 * (after Keep planning) PLAN_V2.
 */
export function planningScript(): ScriptedResponse[] {
  return [
    {
      text: 'Let me look at the CLI first.',
      toolCalls: [{ toolCallId: 'call-read', toolName: 'read_file', input: { path: 'src/cli.ts' } }],
    },
    { toolCalls: [{ toolCallId: 'call-plan-1', toolName: 'exit_plan_mode', input: { plan: PLAN_V1 } }] },
    { text: 'Revised with a test.', toolCalls: [{ toolCallId: 'call-plan-2', toolName: 'exit_plan_mode', input: { plan: PLAN_V2 } }] },
  ]
}

/** The model the approval hands the plan to: carries it out (PLAN_V2's three steps, or PLAN_V1's two), tracking the steps with update_plan. */
export function carryingScript(prefix = 'call-up', steps: 2 | 3 = 3): ScriptedResponse[] {
  return [
    { toolCalls: [{ toolCallId: `${prefix}-1`, toolName: 'update_plan', input: { updates: [{ step: 1, status: 'in_progress' }] } }] },
    {
      toolCalls: [
        {
          toolCallId: `${prefix}-2`,
          toolName: 'update_plan',
          input: {
            updates: [
              { step: 1, status: 'done' },
              { step: 2, status: 'in_progress' },
            ],
          },
        },
      ],
    },
    {
      toolCalls: [
        {
          toolCallId: `${prefix}-3`,
          toolName: 'update_plan',
          input: { updates: [{ step: 2, status: 'done' }, ...(steps === 3 ? [{ step: 3, status: 'done' }] : [])] },
        },
      ],
    },
    { text: 'Done: the CLI greets, and greet() is tested.' },
  ]
}
