import { describe, it } from 'vitest'
import { aiSdkHostFactory, type AiSdkConformanceSetup } from '@planmode/ai-sdk/conformance'
import { Context } from '@planmode/context'
import {
  commandsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  systemPromptPlugin,
  toolsPlugin,
  userQuestionsPlugin,
} from '@planmode/host'
import { describeHostConformance } from '@planmode/host-conformance'

/** One case's composition: @planmode/host's runtimes and JSONL store (no agent loop), the logs under the case's directory. Put yours here. */
function setup({ dir }: { readonly dir: string }): AiSdkConformanceSetup {
  const context = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  for (const runtime of [toolsPlugin, systemPromptPlugin, commandsPlugin, userQuestionsPlugin, sessionProjectionsPlugin])
    context.plugin(runtime)
  context.plugin(sessionStorePlugin, { dir })
  const sessions = context.require('sessions')
  return { context, createSession: () => sessions.create(), openSession: (id) => sessions.open(id) }
}

describeHostConformance('@planmode/ai-sdk (generateText)', aiSdkHostFactory({ setup }), { describe, it })
describeHostConformance('@planmode/ai-sdk (streamText)', aiSdkHostFactory({ setup, mode: 'stream' }), { describe, it })
