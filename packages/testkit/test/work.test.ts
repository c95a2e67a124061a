import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { boundedWork, LOAD_FACTOR_ENV, loadFactor, scaledMs, StuckWorkError } from '../src/index.js'

/** A promise that never settles: what a hung child or a lost wake-up looks like to a lane. */
const never = (): Promise<never> => new Promise<never>(() => {})
const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('loadFactor', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it('is at least 1, and PLANMODE_TEST_LOAD_FACTOR replaces the measurement', () => {
    expect(loadFactor()).toBeGreaterThanOrEqual(1)
    vi.stubEnv(LOAD_FACTOR_ENV, '4')
    expect(loadFactor()).toBe(4)
    expect(scaledMs(1_500)).toBe(6_000)
  })

  it('refuses an override that is not a number ≥ 1', () => {
    for (const bad of ['0.5', 'fast', '-2', 'Infinity']) {
      vi.stubEnv(LOAD_FACTOR_ENV, bad)
      expect(() => loadFactor(), bad).toThrow(/PLANMODE_TEST_LOAD_FACTOR must be a number ≥ 1/)
    }
  })
})

describe('boundedWork (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] })
    vi.stubEnv(LOAD_FACTOR_ENV, '1')
  })
  afterEach(() => {
    vi.useRealTimers()
    vi.unstubAllEnvs()
  })

  it('a lane stuck on one step stops the work with what every lane was doing: its step, how far it got, the others', async () => {
    let acks = 0
    const outcome = boundedWork({ what: 'crash test (4 kills)', stepMs: 1_000 }, async (work) => {
      await Promise.all([
        work.lane(
          'lane 0',
          async (lane) => {
            for (let round = 0; round < 2; round++) {
              lane.step(`round ${round}: child pid 100${round}, waiting for its exit`)
              await tick(100)
              lane.done()
            }
          },
          { total: 2, unit: 'kills' },
        ),
        work.lane(
          'lane 1',
          async (lane) => {
            lane.step('round 0: child pid 2000, waiting for its exit')
            await tick(100)
            lane.done()
            lane.step('round 1 (seed 77): child pid 2001, waiting for 12 acks before the kill', () => `${acks} acks, last seq 41`)
            acks = 3
            await never()
          },
          { total: 2, unit: 'kills' },
        ),
      ])
    })
    const failure = outcome.catch((error: unknown) => error)
    await vi.advanceTimersByTimeAsync(5_000)
    const error = await failure
    expect(error).toBeInstanceOf(StuckWorkError)
    const stuck = error as StuckWorkError
    expect(stuck.lane).toBe('lane 1')
    expect(stuck.message).toMatch(
      /^crash test \(4 kills\): stuck: lane 1 has been on one step for 1\.\d s, past its bound of 1\.0 s \(1\.0 s on an idle machine × load factor 1\.0\)/,
    )
    expect(stuck.report).toContain('- lane 1 (1 of 2 kills done), for 1.')
    expect(stuck.report).toContain(
      'round 1 (seed 77): child pid 2001, waiting for 12 acks before the kill\n    so far: 3 acks, last seq 41',
    )
    expect(stuck.report).toMatch(/- lane 0: finished \d+\.\d s ago \(2 of 2 kills done\)/)
    expect(stuck.report).toMatch(/load average [\d. ]+ on \d+ cores, load factor 1\.0/)
    expect(stuck.message).toContain(stuck.report)
  })

  it('slow but moving is not stuck: many steps, each within its bound, the whole far past it', async () => {
    const outcome = boundedWork({ what: 'slow work', stepMs: 1_000 }, async (work) =>
      work.lane('lane 0', async (lane) => {
        for (let step = 0; step < 50; step++) {
          lane.step(`step ${step}`)
          await tick(900)
        }
        return 'done'
      }),
    )
    await vi.advanceTimersByTimeAsync(50 * 900 + 100)
    await expect(outcome).resolves.toBe('done')
  })

  it('the bound is the load factor read when the step is checked: a busier machine waits longer', async () => {
    let settled = false
    const outcome = boundedWork({ what: 'loaded work', stepMs: 1_000 }, async (work) => {
      work.step('waiting for a child that will never answer')
      await never()
    })
    outcome.catch(() => (settled = true))
    vi.stubEnv(LOAD_FACTOR_ENV, '3')
    await vi.advanceTimersByTimeAsync(2_500)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1_000)
    await expect(outcome).rejects.toThrow(
      /stuck: main has been on one step for 3\.\d s, past its bound of 3\.0 s \(1\.0 s on an idle machine × load factor 3\.0\)/,
    )
    await expect(outcome).rejects.toThrow('- main (0 units done), for 3.')
  })

  it('a failing lane stops the others at their next step, and the work rejects with its error once they stopped', async () => {
    const seen: string[] = []
    const outcome = boundedWork({ what: 'two lanes', stepMs: 10_000 }, async (work) => {
      await Promise.all([
        work.lane('lane 0', async (lane) => {
          lane.step('round 0')
          await tick(10)
          throw new Error('round 0 of lane 0: the reopened log differs')
        }),
        work.lane('lane 1', async (lane) => {
          try {
            for (let round = 0; ; round++) {
              lane.step(`round ${round}`)
              await tick(30)
            }
          } catch (error) {
            seen.push(`lane 1 stopped: ${(error as Error).message}`)
            throw error
          } finally {
            seen.push('lane 1 finally')
          }
        }),
      ])
    })
    // What lane 1 had done when the work rejected: it had already stopped.
    const failure = outcome.catch((error: unknown) => ({ error, seen: [...seen] }))
    await vi.advanceTimersByTimeAsync(100)
    const { error, seen: atFailure } = await failure
    expect((error as Error).message).toBe('round 0 of lane 0: the reopened log differs')
    expect(atFailure).toEqual(['lane 1 stopped: round 0 of lane 0: the reopened log differs', 'lane 1 finally'])
  })

  it('main is watched once its lanes are done, and not while they run', async () => {
    const outcome = boundedWork({ what: 'tail', stepMs: 1_000 }, async (work) => {
      await work.lane('lane 0', async (lane) => {
        for (let step = 0; step < 5; step++) {
          lane.step(`step ${step}`)
          await tick(800)
        }
      })
      work.step('reading the final logs')
      await never()
    })
    const failure = outcome.catch((error: unknown) => error)
    await vi.advanceTimersByTimeAsync(10_000)
    const error = (await failure) as StuckWorkError
    expect(error.lane).toBe('main')
    expect(error.report).toContain('- main (0 units done), for 1.')
    expect(error.report).toContain('reading the final logs')
    expect(error.report).toMatch(/- lane 0: finished/)
  })

  it('a lane waiting on something that never comes stops with the work, not after it', async () => {
    const stopped: string[] = []
    const outcome = boundedWork({ what: 'wait', stepMs: 10_000 }, async (work) => {
      await Promise.all([
        work.lane('lane 0', async () => {
          await tick(10)
          throw new Error('lane 0 failed')
        }),
        work.lane('lane 1', async (lane) => {
          await lane.wait(never(), 'waiting for a line the child will never print').catch((error: unknown) => {
            stopped.push((error as Error).message)
            throw error
          })
        }),
      ])
    })
    const failure = outcome.catch((error: unknown) => ({ error, stopped: [...stopped] }))
    await vi.advanceTimersByTimeAsync(100)
    expect(await failure).toEqual({ error: new Error('lane 0 failed'), stopped: ['lane 0 failed'] })
  })

  it('wait resolves with what it waited for, as a step of the lane', async () => {
    const outcome = boundedWork({ what: 'wait', stepMs: 1_000 }, async (work) => {
      const value = await work.wait(
        tick(500).then(() => 42),
        'waiting for 42',
      )
      return work.wait(Promise.resolve(value + 1), 'adding one')
    })
    await vi.advanceTimersByTimeAsync(600)
    await expect(outcome).resolves.toBe(43)
  })

  it("the test's signal stops the work with its reason", async () => {
    const controller = new AbortController()
    const outcome = boundedWork({ what: 'cancelled', stepMs: 60_000, signal: controller.signal }, async (work) => {
      work.step('waiting')
      await never()
    })
    controller.abort(new Error('the run was cancelled'))
    await expect(outcome).rejects.toThrow('the run was cancelled')
  })

  it('refuses a step bound that is not a positive number', () => {
    expect(() => boundedWork({ what: 'x', stepMs: 0 }, async () => {})).toThrow(RangeError)
    expect(() => boundedWork({ what: 'x', stepMs: Number.NaN }, async () => {})).toThrow(/stepMs must be a positive number/)
  })
})
