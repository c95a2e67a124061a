import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const read = (path: string): string => readFileSync(`${root}${path}`, 'utf8')

const readme = read('packages/seams/README.md')
const ownHost = read('docs/own-host.md')
const pkg = JSON.parse(read('packages/seams/package.json')) as { files: string[] }

/**
 * The duty ids of the conformance kit, in the order of its `HOST_DUTIES` (the duties of duties.ts, then the
 * handoff ones, then the guidance ones), with their kind (read from its source: seams cannot depend on the kit).
 */
const kitSources =
  read('packages/host-conformance/src/duties.ts') +
  read('packages/host-conformance/src/handoff-duties.ts') +
  read('packages/host-conformance/src/guidance-duties.ts')
const kitDuties = [...kitSources.matchAll(/duty: '([a-z-]+)',\s*kind: '(host|plan)'/g)].map((match) => ({
  id: match[1]!,
  kind: match[2]!,
}))

/** The numbered sections of docs/own-host.md: number → title, as in `## 3. The session log: …`. */
const ownHostSections = new Map([...ownHost.matchAll(/^## (\d+)\. (.+)$/gm)].map((match) => [match[1]!, match[2]!]))

/** Every plain-text reference to a section of the walkthrough, `§N "Title"`, in `markdown`. */
function sectionReferences(markdown: string): { number: string; title: string }[] {
  return [...markdown.matchAll(/§(\d+) "([^"]+)"/g)].map((match) => ({ number: match[1]!, title: match[2]! }))
}

/** The README of every package, by package directory name. */
const packageReadmes = readdirSync(`${root}packages`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => {
    try {
      return [{ name: entry.name, text: read(`packages/${entry.name}/README.md`) }]
    } catch {
      return []
    }
  })

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(markdown: string): string[] {
  return [...markdown.matchAll(/^#+ (.+)$/gm)].map((match) =>
    match[1]!
      .toLowerCase()
      .replace(/[^a-z0-9 _-]/g, '')
      .replace(/ /g, '-'),
  )
}

/** The `## Host duties` section, split into its `### N. Title (`id`)` entries. */
function dutyEntries(): { number: number; id: string; body: string }[] {
  const section = /^## Host duties\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? ''
  return [...section.matchAll(/^### (\d+)\. .*\(`([a-z-]+)`\)\n([\s\S]*?)(?=^### |$(?![\s\S]))/gm)].map((match) => ({
    number: Number(match[1]),
    id: match[2]!,
    body: match[3]!,
  }))
}

/** The text of every TSDoc comment of a seams source file, comment stars removed and whitespace collapsed. */
function tsdocOf(file: string): string {
  const source = read(`packages/seams/src/${file}`)
  return [...source.matchAll(/\/\*\*([\s\S]*?)\*\//g)]
    .map((match) => match[1]!.replace(/^\s*\* ?/gm, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
}

const collapse = (text: string): string => text.replace(/\s+/g, ' ')

describe('seams README: host duties', () => {
  it('reads the kit duties (the source format this test parses is still there)', () => {
    expect(kitDuties.length).toBe(18)
    expect(kitDuties.filter((duty) => duty.kind === 'host').length).toBe(12)
  })

  it('has one numbered entry per kit duty, in the kit order, host duties first', () => {
    const entries = dutyEntries()
    expect(entries.map((entry) => entry.number)).toEqual(kitDuties.map((_, index) => index + 1))
    expect(entries.map((entry) => entry.id)).toEqual(kitDuties.map((duty) => duty.id))
    expect(kitDuties.slice(0, 9).every((duty) => duty.kind === 'host')).toBe(true)
  })

  it('names, in plain text, a section of docs/own-host.md that exists (number and title) in every entry', () => {
    expect(ownHostSections.size).toBeGreaterThanOrEqual(12)
    for (const entry of dutyEntries()) {
      expect(entry.body, `entry ${entry.number} (${entry.id}) names the walkthrough`).toContain('`docs/own-host.md` §')
      const references = sectionReferences(entry.body.replace(/\s+/g, ' '))
      expect(references.length, `entry ${entry.number} (${entry.id}) names no section of docs/own-host.md`).toBeGreaterThan(0)
      for (const { number, title } of references)
        expect(ownHostSections.get(number), `entry ${entry.number} (${entry.id}): §${number}`).toBe(title)
    }
  })

  it('states the order of a pre-step decision’s messages in the README and in the agent/pre-step TSDoc alike', () => {
    const order =
      "The host logs an `enter` decision's `messages` as `user/message` events, in the decision's order, after everything the waterfall's listeners appended while it ran (plan-core's flush appends the selected `plan/mode` inside it), and before the step's `request/header` and `step/start`. Do not log steered messages yourself before or inside the waterfall: the decision decides them"
    expect(collapse(readme)).toContain(order)
    expect(tsdocOf('index.ts')).toContain(order)
  })

  it('states the session/event duty in the README and in the event’s TSDoc alike', () => {
    const duty = 'exactly once per append, in `seq` order, before `append` resolves'
    expect(collapse(readme)).toContain(duty)
    expect(tsdocOf('index.ts')).toContain(`After every append, once the event is in \`session.events\`: ${duty}`)
    expect(tsdocOf('index.ts')).toContain(
      '`payload.session` is the session object itself, and its `events` is the same array while the log only grows',
    )
  })

  it('names each duty in the TSDoc of the members it concerns', () => {
    const where: Record<string, string[]> = {
      services: ['index.ts'],
      'turns-and-steps': ['session.ts'],
      'request-header': ['session.ts', 'system-prompt.ts'],
      'transcript-from-log': ['session.ts'],
      'session-event': ['index.ts', 'session.ts'],
      'command-args': ['commands.ts', 'session.ts'],
      'child-questions': ['user-questions.ts'],
      'pre-step-order': ['index.ts'],
      'questions-in-log': ['session.ts', 'user-questions.ts', 'interrupted-turn.ts'],
      composition: ['commands.ts', 'projections.ts', 'system-prompt.ts', 'tools.ts'],
      'restart-from-log': ['session.ts'],
      notices: ['index.ts'],
      review: ['tools.ts', 'user-questions.ts'],
      'enter-plan-mode': ['tools.ts'],
      projections: ['projections.ts'],
      'handoff-model': ['index.ts', 'handoff.ts', 'user-questions.ts'],
      'handoff-fresh': ['index.ts', 'handoff.ts', 'user-questions.ts'],
      compaction: ['session.ts'],
    }
    expect(Object.keys(where).sort()).toEqual(kitDuties.map((duty) => duty.id).sort())
    for (const [id, files] of Object.entries(where)) {
      for (const file of files) expect(tsdocOf(file), `${file} names duty ${id}`).toMatch(new RegExp(`dut(y|ies) [^.]*\`${id}\``))
    }
  })
})

describe('package READMEs: readable from the tarball alone', () => {
  it('reads every package README (the walk this test relies on still finds them)', () => {
    expect(packageReadmes.map((readme) => readme.name)).toEqual(
      expect.arrayContaining(['seams', 'plan-core', 'plan-policy', 'plan-commands', 'plan-tool', 'plan-projection', 'plan-guard']),
    )
  })

  it.each(packageReadmes.map((readme) => [readme.name, readme.text] as const))(
    '%s: no link leaves the package; links go to its own headings, its packed files or web addresses',
    (name, text) => {
      const pkg = JSON.parse(read(`packages/${name}/package.json`)) as { files?: string[] }
      const own = anchorsOf(text)
      const links = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!)
      for (const link of links) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue // https:, mailto:
        if (link.startsWith('#')) {
          expect(own, `${name}: ${link}`).toContain(link.slice(1))
          continue
        }
        const path = link.split('#')[0]!.replace(/^\.\//, '')
        expect(path.startsWith('../') || path.startsWith('/'), `${name}: ${link} points outside the package`).toBe(false)
        expect(
          pkg.files?.some((entry) => path === entry || path.startsWith(`${entry}/`)) ?? false,
          `${name}: ${link} is not in the package's files`,
        ).toBe(true)
      }
      expect(text, `${name}: a relative link leaves the package`).not.toMatch(/\]\(\.\.\//)
    },
  )

  it.each(packageReadmes.map((readme) => [readme.name, readme.text] as const))(
    '%s: every section of docs/own-host.md it names exists, with that number and title',
    (name, text) => {
      for (const { number, title } of sectionReferences(text.replace(/\s+/g, ' ')))
        expect(ownHostSections.get(number), `${name}: §${number}`).toBe(title)
    },
  )

  it('each layer README names the walkthrough and at least one of its sections in its "Without `@planmode/host`" section', () => {
    for (const name of ['plan-core', 'plan-policy', 'plan-commands', 'plan-tool', 'plan-projection', 'plan-guard']) {
      const text = packageReadmes.find((readme) => readme.name === name)!.text
      const section = /^### Without `@planmode\/host`\n([\s\S]*?)(?=^#{2,3} |$(?![\s\S]))/m.exec(text)?.[1] ?? ''
      expect(section, name).toContain('`docs/own-host.md`')
      expect(sectionReferences(section).length, name).toBeGreaterThan(0)
    }
  })

  it('the seams README refers to no file the tarball leaves out (no API report: `etc` is not packed)', () => {
    expect(pkg.files).not.toContain('etc')
    expect(readme).not.toMatch(/etc\/[\w.-]*\.api\.md/)
  })
})
