// What a later stage of the showcase (a session of its own: src/showcase-handoff.ts, src/showcase-verify.ts)
// needs from the showcase around it, and the renderer it prints with.
import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Style } from './render/style.js'
import { TranscriptRenderer, type TranscriptOutput } from './render/transcript.js'
import type { DemoHost } from './terminal/demo-host.js'

/** What a stage run in a session of its own needs from the showcase around it. */
export interface StageInput {
  readonly out: TranscriptOutput
  readonly style: Style
  readonly section: string
  readonly sessionDir: string
  /** A fresh copy of the sample project, for this stage's session alone. */
  readonly workspace: string
  /** The default model (the offline planner). */
  readonly model: LanguageModelV3
  /** Records a stage (and warns on the renderer last given to `useRenderer` when it did not happen). */
  readonly check: (name: string, ok: boolean) => void
  /** Makes `renderer` the showcase's current one. */
  readonly useRenderer: (renderer: TranscriptRenderer) => void
}

/** The stage's renderer, made the showcase's current one: tool calls titled by the tools of the host `host()` returns. */
export function stageRenderer(input: StageInput, host: () => DemoHost | undefined): TranscriptRenderer {
  const renderer = new TranscriptRenderer({
    out: input.out,
    style: input.style,
    planSection: input.section,
    present: (name, args) =>
      host()
        ?.ctx.get('tools')
        ?.get(name)
        ?.presentCall?.(args as never),
  })
  input.useRenderer(renderer)
  return renderer
}
