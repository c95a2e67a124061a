import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import type { HostAgent, ScriptedResponse, TurnOutcome } from '@planmode/host'
import type { LanguageModelV3Prompt } from '@ai-sdk/provider'
import { recordingLogger } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-steering-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

function openHost(script: ScriptedResponse[], maxSteps?: number) {
  const ctx = new Context({ logger: recordingLogger() })
  const model = createScriptedModel(script)
  ctx.plugin(hostPlugin, { dir, model, retryDelayMs: 0, ...(maxSteps === undefined ? {} : { maxSteps }) })
  ctx.require('tools').register({ name: 'noop', description: 'does nothing', parameters: { type: 'object' }, execute: () => 'ok' })
  return { ctx, model, sessions: ctx.require('sessions'), agents: ctx.require('agents') }
}

/** The user texts of a request, in order. */
const userTexts = (prompt: LanguageModelV3Prompt) =>
  prompt.flatMap((message) => (message.role === 'user' ? message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])) : []))

type Ending = 'error' | 'cancelled' | 'step-limit'

/** A first turn that ends `ending` while the message "steered" waits for a step that never comes. */
function firstTurn(ending: Ending, agent: () => HostAgent): { script: ScriptedResponse[]; maxSteps?: number; run(a: HostAgent): Promise<TurnOutcome> } {
  if (ending === 'error') {
    return {
      script: [
        () => {
          agent().steer('steered')
          return { error: 'bad request' }
        },
      ],
      run: (a) => a.prompt('first'),
    }
  }
  if (ending === 'cancelled') {
    let entered!: () => void
    const inRequest = new Promise<void>((resolve) => (entered = resolve))
    return {
      script: [
        () => {
          agent().steer('steered')
          entered()
          return new Promise(() => {})
        },
      ],
      run: async (a) => {
        const outcome = a.prompt('first')
        await inRequest
        await a.cancel()
        return outcome
      },
    }
  }
  return {
    script: [
      () => {
        agent().steer('steered')
        return { toolCalls: [{ toolName: 'noop', input: {} }] }
      },
    ],
    maxSteps: 1,
    run: (a) => a.prompt('first'),
  }
}

describe('a steered message whose turn ends before a step takes it', () => {
  it.each<Ending>(['error', 'cancelled', 'step-limit'])('is logged when the turn ends (%s), ahead of the next prompt, and a reopened log sends the same', async (ending) => {
    let agent!: HostAgent
    const first = firstTurn(ending, () => agent)
    const host = openHost([...first.script, { text: 'second answer' }], first.maxSteps)
    const session = await host.sessions.create({ id: 's1' })
    agent = host.agents.create({ session })
    expect(await first.run(agent)).toMatchObject({ turn: 1, reason: ending })
    // Logged in turn 1, before its turn/end.
    const turn1 = session.events.map((e) => (e.type === 'user/message' ? `user:${(e.data.content[0] as { text: string }).text}` : e.type))
    expect(turn1.slice(-2)).toEqual(['user:steered', 'turn/end'])

    expect(await agent.prompt('second')).toMatchObject({ turn: 2, reason: 'completed', steps: 1 })
    const secondRequest = host.model.requests.at(-1)!.prompt
    expect(userTexts(secondRequest)).toEqual(['first', 'steered', 'second'])
    host.ctx.dispose()

    // A fresh host on the same log rebuilds the same transcript, then the new answer and prompt.
    const fresh = openHost([{ text: 'third answer' }], first.maxSteps)
    const reopened = await fresh.sessions.open('s1')
    await fresh.agents.create({ session: reopened }).prompt('third')
    const thirdRequest = fresh.model.requests[0]!.prompt
    expect(thirdRequest.slice(0, secondRequest.length)).toEqual(secondRequest)
    expect(userTexts(thirdRequest)).toEqual(['first', 'steered', 'second', 'third'])
    fresh.ctx.dispose()
  })

  it('is logged when the host is disposed mid-turn (a quit), and the next process sends it before its prompt', async () => {
    let entered!: () => void
    const inRequest = new Promise<void>((resolve) => (entered = resolve))
    const host = openHost([
      () => {
        entered()
        return new Promise(() => {})
      },
    ])
    const session = await host.sessions.create({ id: 's2' })
    const agent = host.agents.create({ session })
    void agent.prompt('first')
    await inRequest
    agent.steer('typed before quitting')
    host.ctx.dispose()

    const fresh = openHost([{ text: 'hello again' }])
    const reopened = await fresh.sessions.open('s2')
    expect(await fresh.agents.create({ session: reopened }).prompt('after restart')).toMatchObject({ turn: 2, reason: 'completed' })
    expect(userTexts(fresh.model.requests[0]!.prompt)).toEqual(['first', 'typed before quitting', 'after restart'])
    fresh.ctx.dispose()
  })
})
