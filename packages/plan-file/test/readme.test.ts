import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planFilePlugin } from '@planmode/plan-file'
import { planHistoryPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import { afterEach, expect, it } from 'vitest'
import { readmeMirror } from '@planmode/testkit'
import { removeTemp, tempDir } from './support.js'

afterEach(removeTemp)

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

it('runs the README composition example, which is the code below', async () => {
  const mirror = readmeMirror(new URL('../README.md', import.meta.url), new URL(import.meta.url), {
    block: /## Compose\n\n```ts\n([\s\S]*?)```/,
  })
  expect(mirror.block).toEqual(mirror.mirrored)
  expect(mirror.missingImports).toEqual([])

  const plansDir = join(tempDir(), 'plans')
  const example = async () => {
    // readme:start
    const root = new Context()
    root.plugin(hostPlugin, {
      model: createScriptedModel([
        { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: '# Add a hello file\n\n1. Write hello.txt.' } }] },
        { text: 'Waiting for your review.' },
      ]),
    })
    root.plugin(planCorePlugin) // first: the layers require `planMode`
    root.plugin(planToolPlugin)
    root.plugin(planHistoryPlugin) // before plan-file: it reads the planHistory unit
    root.plugin(planFilePlugin, { dir: plansDir })

    const session = await root.require('sessions').create()
    const agent = root.require('agents').create({ session })
    await root.require('planMode').set(agent, true)
    await agent.prompt('Plan a hello file.')
    await root.require('planFile').settled() // every change so far is on disk
    // <plansDir>/<session.id>.md now holds the plan, status "refused" (no one was there to review it)
    // readme:end
    return session
  }
  const session = await example()
  expect(readFileSync(join(plansDir, `${session.id}.md`), 'utf8')).toBe(
    `---\nsession: ${JSON.stringify(session.id)}\nrev: 1\nstatus: "refused"\ntitle: "Add a hello file"\n---\n# Add a hello file\n\n1. Write hello.txt.`,
  )
})

it('the sample file at the top of the README is what planFileText writes', async () => {
  const { planFileText } = await import('@planmode/plan-file')
  const sample = /```md\n([\s\S]*?)```/.exec(readme)![1]!
  const text = planFileText({
    session: 's_mx5g0ux2_eced937bd0',
    rev: 2,
    status: 'approved',
    title: 'Add due dates to tasks',
    text: '# Add due dates to tasks\n\n1. Parse `--due` in `tasks add`.\n2. …\n',
    progress: { done: 1, total: 3 },
  })
  expect(text).toBe(sample)
})
