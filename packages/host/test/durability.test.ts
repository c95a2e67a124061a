import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Context } from '@planmode/context'
import { sessionStorePlugin } from '@planmode/host'
import type { Durability } from '@planmode/host'
import { recordingLogger, text } from './helpers.js'

let dir: string
let syncs: ReturnType<typeof vi.spyOn>
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-durability-'))
  const probe = await open(join(dir, 'probe'), 'w')
  const prototype = Object.getPrototypeOf(probe) as { sync(): Promise<void> }
  await probe.close()
  syncs = vi.spyOn(prototype, 'sync')
})
afterEach(async () => {
  syncs.mockRestore()
  await rm(dir, { recursive: true, force: true })
})

async function oneTurn(durability: Durability | undefined): Promise<number[]> {
  const ctx = new Context({ logger: recordingLogger() })
  ctx.plugin(sessionStorePlugin, durability === undefined ? { dir } : { dir, durability })
  const session = await ctx.require('sessions').create()
  const counts: number[] = []
  syncs.mockClear()
  await session.append('turn/start', { turn: 1 })
  counts.push(syncs.mock.calls.length)
  await session.append('user/message', text('hi'))
  counts.push(syncs.mock.calls.length)
  await session.append('turn/end', { turn: 1, reason: 'completed' })
  counts.push(syncs.mock.calls.length)
  await ctx.require('sessions').close(session)
  return counts
}

describe('durability', () => {
  it("'append' syncs after every append", async () => {
    expect(await oneTurn('append')).toEqual([1, 2, 3])
  })

  it("'turn' (the default) syncs only after turn/end", async () => {
    expect(await oneTurn(undefined)).toEqual([0, 0, 1])
    expect(await oneTurn('turn')).toEqual([0, 0, 1])
  })

  it("'never' does not sync, and close does not either", async () => {
    expect(await oneTurn('never')).toEqual([0, 0, 0])
    expect(syncs).not.toHaveBeenCalled()
  })
})
