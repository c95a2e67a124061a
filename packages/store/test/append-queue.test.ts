import type { SessionEvent } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AppendQueue, type PendingAppend } from '@planmode/store'

const event = (pending: PendingAppend, seq: number): SessionEvent =>
  ({ type: pending.type, seq, time: 0, data: pending.data }) as SessionEvent

describe('AppendQueue', () => {
  it('commits one batch at a time, in order; appends added while a batch commits form the next batch', async () => {
    const batches: string[][] = []
    let release: () => void = () => {}
    let seq = 0
    const queue = new AppendQueue((batch) => {
      batches.push(batch.map((pending) => pending.type))
      return new Promise<void>((resolve) => {
        release = () => {
          for (const pending of batch) pending.resolve(event(pending, seq++))
          resolve()
        }
      })
    })
    const first = queue.add('a', 1)
    const second = queue.add('b', 2)
    await Promise.resolve()
    expect(batches).toEqual([['a', 'b']])
    const third = queue.add('c', 3)
    expect(queue.queued).toBe(3)
    await Promise.resolve()
    expect(batches).toEqual([['a', 'b']]) // the next batch waits for this one
    release()
    expect((await first).seq).toBe(0)
    expect((await second).seq).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(batches).toEqual([['a', 'b'], ['c']])
    release()
    expect((await third).seq).toBe(2)
    await queue.settled()
    expect(queue.queued).toBe(0)
  })

  it('settles appends a commit settles at once, rejections included, and settled() waits only for appends added before it', async () => {
    const queue = new AppendQueue((batch) => {
      for (const pending of batch) {
        if (pending.type === 'bad') pending.reject(new Error('refused'))
        else pending.resolve(event(pending, 0))
      }
      return undefined
    })
    const good = queue.add('good', {})
    const bad = queue.add('bad', {})
    const settled = queue.settled()
    await expect(good).resolves.toMatchObject({ type: 'good' })
    await expect(bad).rejects.toThrow('refused')
    await settled
    expect(queue.queued).toBe(0)
    await expect(queue.settled()).resolves.toBeUndefined()
  })

  it('every append settles exactly once and in the order added, whatever the batch boundaries (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.boolean(), fc.nat(3)), { minLength: 1, maxLength: 40 }), async (plan) => {
        const order: number[] = []
        let next = 0
        const queue = new AppendQueue((batch) => {
          const settle = (): void => {
            for (const pending of batch) {
              const index = pending.data as number
              order.push(index)
              if (plan[index]![0]) pending.resolve(event(pending, next++))
              else pending.reject(new Error(`no ${index}`))
            }
          }
          if (batch.length % 2 === 0) {
            settle()
            return undefined
          }
          return new Promise<void>((resolve) =>
            setTimeout(() => {
              settle()
              resolve()
            }, 0),
          )
        })
        const results: Promise<unknown>[] = []
        for (let index = 0; index < plan.length; index++) {
          results.push(
            queue.add('x', index).then(
              () => 'ok',
              () => 'no',
            ),
          )
          // Some appends come after a pause, so they fall into later batches.
          for (let wait = 0; wait < plan[index]![1]; wait++) await Promise.resolve()
        }
        const outcomes = await Promise.all(results)
        await queue.settled()
        expect(order).toEqual(plan.map((_, index) => index))
        expect(outcomes).toEqual(plan.map(([ok]) => (ok ? 'ok' : 'no')))
        expect(queue.queued).toBe(0)
      }),
      { numRuns: 60 },
    )
  })
})
