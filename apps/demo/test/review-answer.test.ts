import { describe, expect, it } from 'vitest'
import type { UserQuestion } from '@planmode/seams'
import { LineSource } from '../src/terminal/line-source.js'
import { parseReviewAnswer } from '../src/terminal/review-answer.js'

const review: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan and leave plan mode?',
  detail: '# Plan',
  options: [
    { label: 'Approve', description: 'leave plan mode' },
    { label: 'Keep planning', description: 'stay' },
  ],
  intent: { kind: 'plan-review', approve: 'Approve' },
}

describe('reading a typed review answer', () => {
  it('selects by number or label, with optional feedback after a colon', () => {
    expect(parseReviewAnswer(review, '1')).toEqual({ id: 'plan-review', selected: ['Approve'] })
    expect(parseReviewAnswer(review, ' approve ')).toEqual({ id: 'plan-review', selected: ['Approve'] })
    expect(parseReviewAnswer(review, 'Keep planning')).toEqual({ id: 'plan-review', selected: ['Keep planning'] })
    expect(parseReviewAnswer(review, '2: split step 3')).toEqual({ id: 'plan-review', selected: ['Keep planning'], custom: 'split step 3' })
    expect(parseReviewAnswer(review, 'keep planning: add tests: unit and e2e')).toEqual({
      id: 'plan-review',
      selected: ['Keep planning'],
      custom: 'add tests: unit and e2e',
    })
  })

  it('treats other text as free-form feedback and an empty line as dismissal', () => {
    expect(parseReviewAnswer(review, 'use a Map instead')).toEqual({ id: 'plan-review', selected: [], custom: 'use a Map instead' })
    expect(parseReviewAnswer(review, '3')).toEqual({ id: 'plan-review', selected: [], custom: '3' })
    expect(parseReviewAnswer(review, '   ')).toBeUndefined()
  })
})

describe('the shared line queue', () => {
  it('serves an urgent reader (a review) before the prompt, and ends cleanly', async () => {
    const lines = new LineSource()
    const prompt = lines.next()
    const answer = lines.next(undefined, true)
    lines.push('1')
    lines.push('/quit')
    expect(await answer).toBe('1')
    expect(await prompt).toBe('/quit')
    const aborted = new AbortController()
    const pending = lines.next(aborted.signal, true)
    aborted.abort()
    expect(await pending).toBeUndefined()
    lines.push('later')
    lines.end()
    expect(await lines.next()).toBe('later')
    expect(await lines.next()).toBeUndefined()
    expect(lines.done).toBe(true)
  })
})
