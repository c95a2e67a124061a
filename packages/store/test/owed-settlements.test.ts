import type { SessionEvent } from '@planmode/seams'
import { OwedSettlements } from '@planmode/store'
import { describe, expect, it } from 'vitest'

const asked = (seq: number, questionId: string): SessionEvent =>
  ({ type: 'question/asked', seq, time: 0, data: { questionId, agent: 'a', question: [] } }) as SessionEvent
const settled = (seq: number, questionId: string): SessionEvent =>
  ({ type: 'question/settled', seq, time: 0, data: { questionId, outcome: 'answered' } }) as SessionEvent

describe('OwedSettlements', () => {
  it('owes a question whose question/settled append rejected, and pays it failed at the next batch while the log leaves it open', async () => {
    const owed = new OwedSettlements()
    const refused = owed.watch('question/settled', { questionId: 'q1', outcome: 'answered' }, Promise.reject(new Error('disk full')))
    await expect(refused).rejects.toThrow('disk full')
    expect(owed.size).toBe(1)
    const [due, ...more] = owed.due([asked(0, 'q1')])
    expect(more).toEqual([])
    expect({ type: due!.type, data: due!.data }).toEqual({
      type: 'question/settled',
      data: { questionId: 'q1', outcome: 'failed', error: 'its settlement could not be logged (disk full)' },
    })
    expect(owed.size).toBe(0)
    due!.resolve({} as SessionEvent)
    expect(owed.due([asked(0, 'q1')])).toEqual([])
  })

  it('owes it again when the payment is refused; drops it when the log shows it settled after all', async () => {
    const owed = new OwedSettlements()
    await owed.watch('question/settled', { questionId: 'q1', outcome: 'answered' }, Promise.reject(new Error('down'))).catch(() => {})
    owed.due([asked(0, 'q1')])[0]!.reject(new Error('still down'))
    expect(owed.size).toBe(1)
    expect(owed.due([asked(0, 'q1'), settled(1, 'q1')])).toEqual([])
    expect(owed.size).toBe(0)
  })

  it('owes nothing for other appends, for settlements that land, or without a questionId', async () => {
    const owed = new OwedSettlements()
    await owed.watch('turn/end', { questionId: 'q1' }, Promise.reject(new Error('x'))).catch(() => {})
    await owed.watch('question/settled', { outcome: 'failed' }, Promise.reject(new Error('x'))).catch(() => {})
    await expect(owed.watch('question/settled', { questionId: 'q2', outcome: 'answered' }, Promise.resolve('landed'))).resolves.toBe(
      'landed',
    )
    expect(owed.size).toBe(0)
    expect(owed.due([asked(0, 'q1'), asked(1, 'q2')])).toEqual([])
  })
})
