// SPEC §25 through the real host loop with every layer it meets: /plan, a plan approved through
// exit_plan_mode's review, then update_plan refused by a deployment's verifier that reads the workspace
// until the model has written the file the step names; the refusal is a failed tool result the model
// reads, nothing is logged for it, and the cached prefix holds.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import { eventsOf, requestSystem } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'
import { APPROVE, createTranscriptHost, exit, serialized } from './transcript-host.js'

const PLAN = '# Changelog\n\n## Steps\n\n1. Add `CHANGELOG.md` with an `## Unreleased` section.\n2. Tell the user.\n'
const done = (step: number) => ({ toolCalls: [{ toolName: UPDATE_PLAN, input: { updates: [{ step, status: 'done' }] } }] })

describe('§25 a verified step, end to end', () => {
  it('the model marks a step done too early, reads why, does the work, and the step is done', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-verify-'))
    try {
      const host = createTranscriptHost([
        exit(PLAN),
        done(1),
        { toolCalls: [{ toolName: 'save', input: { path: 'CHANGELOG.md', text: '# Changelog\n\n## Unreleased\n' } }] },
        done(1),
        { text: 'The changelog is in.' },
      ])
      host.root.plugin(planProgressPlugin)
      host.root.plugin(planProgressProjectionPlugin)
      host.reviews.push(APPROVE)
      host.root.require('tools').register<{ path: string; text: string }, string>({
        name: 'save',
        description: 'Saves a file of the workspace.',
        parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
        execute: async ({ path, text }) => {
          await writeFile(join(dir, path), text)
          return `saved ${path}`
        },
      })
      const checked: string[] = []
      host.root.on('plan/verify', async (payload, next) => {
        checked.push(
          `${payload.plan === eventsOf(payload.agent.session, 'plan/review')[0]?.data.toolCallId ? 'plan' : '?'}:${payload.step}`,
        )
        const text = await readFile(join(dir, 'CHANGELOG.md'), 'utf8').catch(() => '')
        return next(
          text.includes('## Unreleased')
            ? payload
            : { ...payload, problems: [...payload.problems, 'CHANGELOG.md has no "## Unreleased" section'] },
        )
      })
      const agent = await host.agent()
      await host.command(agent, '/plan')
      await agent.prompt('add a changelog')

      const results = eventsOf(agent.session, 'tool/result').filter((event) => event.data.toolName === UPDATE_PLAN)
      expect(results.map((event) => [event.data.isError, event.data.content.map((block) => block.text).join('')])).toEqual([
        [true, 'Error: update_plan: step 1 is not done:\n- CHANGELOG.md has no "## Unreleased" section'],
        [false, 'Plan progress: 1/2.\n[x] 1. Add `CHANGELOG.md` with an `## Unreleased` section.\n[ ] 2. Tell the user.'],
      ])
      expect(checked).toEqual(['plan:1', 'plan:1'])
      expect(eventsOf(agent.session, 'plan/progress')).toHaveLength(1)
      expect(host.root.require('sessionProjections').snapshot(agent.session).values.planProgress).toMatchObject({ done: 1, total: 2 })
      // the refusal reached the model's next request, appended after everything before it
      const prompts = host.model.requests.map((request) => serialized(request).prompt)
      expect(prompts[2]!.join('\n')).toContain('step 1 is not done')
      for (let index = 1; index < prompts.length; index++) {
        expect(prompts[index]!.slice(0, prompts[index - 1]!.length)).toEqual(prompts[index - 1])
        expect(requestSystem(host.model.requests[index]!)).toBe(requestSystem(host.model.requests[0]!))
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
