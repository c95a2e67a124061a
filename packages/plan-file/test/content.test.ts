import { existsSync, readdirSync } from 'node:fs'
import fc from 'fast-check'
import { planFileText, type PlanFileContent } from '@planmode/plan-file'
import { afterEach, describe, expect, it } from 'vitest'
import { appendRaw, fileHost, removeTemp, steps } from './support.js'

afterEach(removeTemp)

const PLAN = '# Add due dates\n\n1. Parse `--due`.\n2. Show it in `list`.\n'
const EDIT = '# Add due dates\n\n1. Parse `--due` as YYYY-MM-DD.\n2. Show it in `list`.\n3. Flag overdue tasks.'

describe('the file of a session (SPEC §19)', () => {
  it('a presented plan: front matter with session, rev, status and title as written, then the plan exactly', async () => {
    const host = fileHost()
    const session = await host.session()
    await host.present(session, PLAN)
    await host.settled()
    expect(host.read(session)).toBe(
      `---\nsession: ${JSON.stringify(session.id)}\nrev: 1\nstatus: "open"\ntitle: "Add due dates"\n---\n${PLAN}`,
    )
    expect(host.warnings()).toEqual([])
  })

  it('follows the latest revision: its rev, status, title and text; the status changes with its record or result', async () => {
    const host = fileHost()
    const session = await host.session()
    const first = await host.present(session, PLAN)
    await host.review(session, first, 'keep-planning', { feedback: 'also flag overdue tasks' })
    await host.settled()
    expect(host.read(session)).toContain('rev: 1\nstatus: "keep-planning"\n')
    const second = await host.present(session, '# Due dates, revised\n\nmore')
    await host.settled()
    expect(host.read(session)).toBe(
      `---\nsession: ${JSON.stringify(session.id)}\nrev: 2\nstatus: "open"\ntitle: "Due dates, revised"\n---\n# Due dates, revised\n\nmore`,
    )
    await appendRaw(session, 'tool/result', {
      toolCallId: second,
      toolName: 'exit_plan_mode',
      isError: true,
      content: [{ type: 'text', text: 'Error: aborted' }],
    })
    await host.settled()
    expect(host.read(session)).toContain('rev: 2\nstatus: "refused"\n')
    for (const outcome of ['stopped', 'dismissed'] as const) {
      const id = await host.present(session, `# ${outcome}`)
      await host.review(session, id, outcome)
      await host.settled()
      expect(host.read(session)).toContain(`status: ${JSON.stringify(outcome)}\ntitle: ${JSON.stringify(outcome)}\n---\n# ${outcome}`)
    }
  })

  it('an approved edit is the body; the title stays the revision’s own (from the plan the model sent)', async () => {
    const host = fileHost()
    const session = await host.session()
    const id = await host.present(session, '# Model title\n\n1. one')
    await host.review(session, id, 'approved', { plan: '# User title\n\n1. one, better' })
    await host.settled()
    expect(host.read(session)).toBe(
      `---\nsession: ${JSON.stringify(session.id)}\nrev: 1\nstatus: "approved"\ntitle: "Model title"\n---\n# User title\n\n1. one, better`,
    )
    // An approval without an edit: the plan itself.
    const plain = await host.session()
    const other = await host.present(plain, PLAN)
    await host.review(plain, other, 'approved')
    await host.settled()
    expect(host.read(plain)).toBe(
      `---\nsession: ${JSON.stringify(plain.id)}\nrev: 1\nstatus: "approved"\ntitle: "Add due dates"\n---\n${PLAN}`,
    )
  })

  it('a title with quotes, backslashes, a tab and non-ASCII is one JSON string on its line; a heading-less plan is titled Plan', async () => {
    const host = fileHost()
    const session = await host.session()
    const title = 'Rename "greet" to \\hello\\ \tnow — ünïcode ✓'
    await host.present(session, `# ${title}\n\nbody`)
    await host.settled()
    const text = host.read(session)!
    expect(text.split('\n')[4]).toBe(`title: ${JSON.stringify(title)}`)
    expect(text.split('\n')[4]).toBe('title: "Rename \\"greet\\" to \\\\hello\\\\ \\tnow — ünïcode ✓"')
    expect(JSON.parse(text.split('\n')[4]!.slice('title: '.length))).toBe(title)
  })

  it('every value but rev is a JSON string: line breaks in a title given to planFileText stay escaped on one line', () => {
    const text = planFileText({ session: 'a"b', rev: 3, status: 'open', title: 'two\nlines\r\nand "quotes"', text: 'x' })
    expect(text).toBe('---\nsession: "a\\"b"\nrev: 3\nstatus: "open"\ntitle: "two\\nlines\\r\\nand \\"quotes\\""\n---\nx')
  })

  it('no revision, no file: events that make none, and plans that fail the heading check, write nothing', async () => {
    const host = fileHost({ progress: true })
    const session = await host.session()
    await appendRaw(session, 'turn/start', { turn: 1 })
    await host.present(session, 'no heading here')
    await appendRaw(session, 'plan/progress', { toolCallId: 'p', plan: 'nothing', steps: steps('done') })
    await host.settled()
    expect(host.read(session)).toBeUndefined()
    expect(readdirSync(host.dir)).toEqual([])
  })

  it('sessions have a file each, named by their id', async () => {
    const host = fileHost()
    const sessions = await Promise.all([host.session(), host.session(), host.session()])
    await Promise.all(sessions.map((session, at) => host.present(session, `# Plan ${at}`)))
    await host.settled()
    expect(readdirSync(host.dir).sort()).toEqual(sessions.map((session) => `${session.id}.md`).sort())
    sessions.forEach((session, at) => expect(host.read(session)).toContain(`title: "Plan ${at}"\n---\n# Plan ${at}`))
  })
})

describe('progress: from planProgress, when it tracks this revision with at least one step', () => {
  it('adds progress: "<done>/<total>" after the title, done counting done and skipped; it changes with plan/progress', async () => {
    const host = fileHost({ progress: true })
    const session = await host.session()
    const id = await host.present(session, PLAN)
    await host.review(session, id, 'approved')
    await host.settled()
    // Tracked, but no steps yet: no progress line.
    expect(host.read(session)).not.toContain('progress:')
    await host.progress(session, id, steps('in_progress', 'pending', 'pending'))
    await host.settled()
    expect(host.read(session)).toBe(
      `---\nsession: ${JSON.stringify(session.id)}\nrev: 1\nstatus: "approved"\ntitle: "Add due dates"\nprogress: "0/3"\n---\n${PLAN}`,
    )
    await host.progress(session, id, steps('done', 'skipped', 'in_progress'))
    await host.settled()
    expect(host.read(session)).toContain('title: "Add due dates"\nprogress: "2/3"\n---\n')
    // Only `active` changes: the file is written again, with the same text.
    await host.progress(session, id, steps('done', 'skipped', 'pending'))
    await host.settled()
    expect(host.read(session)).toContain('progress: "2/3"\n')
  })

  it('is left out when planProgress tracks another revision, or nothing', async () => {
    const host = fileHost({ progress: true })
    const session = await host.session()
    const first = await host.present(session, '# First')
    await host.review(session, first, 'approved')
    await host.progress(session, first, steps('done', 'pending'))
    await host.settled()
    expect(host.read(session)).toContain('title: "First"\nprogress: "1/2"\n---\n# First')
    // A new revision while the first is still the one tracked: no progress on it.
    await host.present(session, '# Second')
    await host.settled()
    expect(host.read(session)).toBe(`---\nsession: ${JSON.stringify(session.id)}\nrev: 2\nstatus: "open"\ntitle: "Second"\n---\n# Second`)
    // Plan mode entered by the user ends the tracking: still none.
    await appendRaw(session, 'plan/mode', { active: true, cause: 'user' })
    await host.settled()
    expect(host.read(session)).not.toContain('progress:')
  })

  it('without a planProgress unit there is never a progress line', async () => {
    const host = fileHost()
    const session = await host.session()
    const id = await host.present(session, PLAN)
    await host.review(session, id, 'approved')
    await host.progress(session, id, steps('done'))
    await host.settled()
    expect(host.read(session)).not.toContain('progress:')
    expect(existsSync(host.service().pathOf(session.id))).toBe(true)
  })

  it('a planProgress unit registered after plan-file is read too (by name, at each write)', async () => {
    const host = fileHost()
    const session = await host.session()
    const id = await host.present(session, PLAN)
    await host.review(session, id, 'approved')
    const { testProgressUnit } = await import('./progress-unit.js')
    host.root.require('sessionProjections').register(testProgressUnit)
    await host.progress(session, id, steps('done', 'pending'))
    await host.settled()
    expect(host.read(session)).toContain('progress: "1/2"\n')
  })
})

describe('planFileText', () => {
  const text = fc.string({ unit: 'grapheme' })
  const content: fc.Arbitrary<PlanFileContent> = fc.record(
    {
      session: fc.string({ minLength: 1 }),
      rev: fc.integer({ min: 1, max: 1_000_000 }),
      status: fc.constantFrom('open', 'approved', 'keep-planning', 'stopped', 'dismissed', 'refused'),
      title: fc.oneof(text, fc.string({ unit: 'binary' })),
      text: fc.oneof(text, fc.constant('')),
      progress: fc
        .integer({ min: 1, max: 500 })
        .chain((total) => fc.record({ done: fc.integer({ min: 0, max: total }), total: fc.constant(total) })),
    },
    { requiredKeys: ['session', 'rev', 'status', 'title', 'text'] },
  )

  it('reads back: each front-matter line is `key: value`, every value JSON (rev a plain integer), then the body unchanged', () => {
    fc.assert(
      fc.property(content, (input) => {
        const written = planFileText(input)
        const keys = ['session', 'rev', 'status', 'title', ...(input.progress === undefined ? [] : ['progress'])]
        const lines = written.split('\n')
        expect(lines[0]).toBe('---')
        const front = lines.slice(1, 1 + keys.length)
        expect(lines[1 + keys.length]).toBe('---')
        const read = Object.fromEntries(
          front.map((line) => {
            const colon = line.indexOf(': ')
            return [line.slice(0, colon), JSON.parse(line.slice(colon + 2)) as unknown]
          }),
        )
        expect(Object.keys(read)).toEqual(keys)
        expect(read).toEqual({
          session: input.session,
          rev: input.rev,
          status: input.status,
          title: input.title,
          ...(input.progress === undefined ? {} : { progress: `${input.progress.done}/${input.progress.total}` }),
        })
        expect(front[1]).toBe(`rev: ${input.rev}`)
        // The body starts right after the second `---\n`, exactly as given.
        const header = `${['---', ...front, '---'].join('\n')}\n`
        expect(written.startsWith(header)).toBe(true)
        expect(written.slice(header.length)).toBe(input.text)
      }),
    )
  })
})
