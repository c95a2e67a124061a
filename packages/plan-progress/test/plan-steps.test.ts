import { planSteps } from '@planmode/plan-progress'
import { describe, expect, it } from 'vitest'

const texts = (plan: string) => planSteps(plan).map((step) => step.text)
const statuses = (plan: string) => planSteps(plan).map((step) => step.status)

describe('§17 steps, rule 1: top-level task-list items', () => {
  it('are the steps when the plan has any, in document order across lists; plain items of the same lists are not steps', () => {
    const plan = '# Plan\n\n- [ ] one\n- plain\n- [x] two\n\nText.\n\n* [X] three\n1. an ordered plain item\n'
    expect(planSteps(plan)).toEqual([
      { step: 1, text: 'one', status: 'pending' },
      { step: 2, text: 'two', status: 'done' },
      { step: 3, text: 'three', status: 'done' },
    ])
  })

  it('win over a Steps section and an ordered list', () => {
    const plan = '# Plan\n\n## Steps\n1. numbered\n2. also\n\n## Checklist\n- [ ] the task\n'
    expect(texts(plan)).toEqual(['the task'])
  })

  it('inside a list item, a block quote or a code block are not top-level', () => {
    const plan = '# Plan\n\n1. outer\n   - [ ] nested task\n\n> - [ ] quoted task\n\n```\n- [ ] code\n```\n\n    - [ ] indented code\n'
    // no top-level task item: rule 3 takes the ordered list
    expect(texts(plan)).toEqual(['outer'])
  })

  it('in an ordered list are task items too: `1. [ ] x`', () => {
    expect(planSteps('# P\n\n1. [x] first\n2. [ ] second\n')).toEqual([
      { step: 1, text: 'first', status: 'done' },
      { step: 2, text: 'second', status: 'pending' },
    ])
  })

  it('a marker without content after it is no task item (GFM): `- [ ]` is a plain item with text [ ]', () => {
    expect(planSteps('# P\n\n1. [ ]\n')).toEqual([{ step: 1, text: '[ ]', status: 'pending' }])
  })
})

describe('§17 steps, rule 2: the first top-level list in the section of the first heading named Steps', () => {
  it('any level, trimmed, case-insensitive; its top-level items, ordered or not', () => {
    expect(texts('# Plan\n\n### sTePs  \n\n- first\n  - nested, not a step\n- second\n\n1. later ordered\n')).toEqual(['first', 'second'])
  })

  it('the section ends at the next heading of the same or a higher level; a deeper heading stays inside it', () => {
    expect(texts('# Plan\n\n## Steps\n\nIntro.\n\n### Details\n\n- inside\n\n## Other\n\n- outside\n')).toEqual(['inside'])
    expect(texts('# Plan\n\n## Steps\n\nIntro only.\n\n## Other\n\n- outside\n\n1. ordered\n')).toEqual(['ordered'])
  })

  it('only the first heading named Steps counts; when its section holds no top-level list, rule 3 applies', () => {
    const plan = '# Plan\n\n## Steps\n\nSee below.\n\n> - quoted\n\n## Steps\n\n- second section\n\n1. the ordered one\n'
    expect(texts(plan)).toEqual(['the ordered one'])
  })

  it('a heading named Steps inside a list item or a block quote does not count', () => {
    expect(texts('# Plan\n\n> ## Steps\n> - quoted\n\n- bullet\n\n1. ordered\n')).toEqual(['ordered'])
    expect(texts('# Plan\n\n- ## Steps\n- bullet\n\n1. ordered\n')).toEqual(['ordered'])
  })

  it('a heading with inline markup reads by its text: `## *Steps*`', () => {
    expect(texts('# Plan\n\n## *Steps*\n- a\n')).toEqual(['a'])
  })

  it('a `Steps` line inside a code block is no heading', () => {
    expect(texts('# Plan\n\n```\n## Steps\n- no\n```\n\n- bullet\n')).toEqual([])
  })
})

describe('§17 steps, rule 3 and rule 4', () => {
  it('rule 3: the items of the first top-level ordered list, whatever its start number', () => {
    expect(texts('# Plan\n\n- bullet\n\n3. three\n4. four\n\nProse.\n\n1. next list\n')).toEqual(['three', 'four'])
  })

  it('rule 4: no task item, no Steps list, no ordered list: no steps', () => {
    expect(planSteps('# Plan\n\n- a bullet\n- another\n\nProse.')).toEqual([])
    expect(planSteps('')).toEqual([])
    expect(planSteps('# Only a title')).toEqual([])
  })
})

describe('§17 step text', () => {
  it('is the first paragraph as written in the source: markup kept, each line break and the blanks around it one space, trimmed', () => {
    const plan = '# P\n\n1. Edit `src/a.ts`:   **keep**\n   the   spaces   inside  \n   lines.\n2.   padded   \n'
    expect(texts(plan)).toEqual(['Edit `src/a.ts`:   **keep** the   spaces   inside lines.', 'padded'])
  })

  it('drops the task marker, also before inline markup', () => {
    expect(texts('# P\n\n- [ ] **bold** start\n- [x]\tafter a tab\n')).toEqual(['**bold** start', 'after a tab'])
  })

  it('is only the first block: later paragraphs and nested lists are left out', () => {
    expect(texts('# P\n\n1. first line\n\n   a second paragraph\n   - nested\n2. two\n')).toEqual(['first line', 'two'])
  })

  it('an item whose first block is not a paragraph, or that is empty, is not a step; numbering skips it', () => {
    const plan = '# P\n\n1. one\n2.\n3. ```\n   code\n   ```\n4. > quote\n5. - nested\n6. ## heading\n7. two\n'
    expect(planSteps(plan)).toEqual([
      { step: 1, text: 'one', status: 'pending' },
      { step: 2, text: 'two', status: 'pending' },
    ])
  })

  it('CRLF line endings collapse the same way', () => {
    expect(texts('# P\r\n\r\n1. a\r\n   b\r\n2. c\r\n')).toEqual(['a b', 'c'])
  })

  it('every step of a checked task starts done, every other one pending', () => {
    expect(statuses('# P\n\n- [x] a\n- [ ] b\n- [X] c\n')).toEqual(['done', 'pending', 'done'])
    expect(statuses('# P\n\n1. a\n2. b\n')).toEqual(['pending', 'pending'])
  })
})
