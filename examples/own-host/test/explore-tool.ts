import type { ToolExecution } from '@planmode/seams'
import type { OwnHost } from '../src/index.js'

/** The sub-agent tool of docs/own-host.md ("Sub-agents: a child inherits plan mode"): a helper agent, a child of the caller, answers one question. */
export function exploreTool(host: OwnHost) {
  return {
    name: 'explore',
    description: 'Ask a helper agent one question about the workspace.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    annotations: { readOnlyHint: true },
    async execute({ question }: { question: string }, execution: ToolExecution): Promise<string> {
      const child = host.agent(await host.session(), execution.agent === undefined ? {} : { owner: execution.agent })
      await child.prompt(question)
      const said = child.session.events.flatMap((event) =>
        event.type === 'assistant/message' ? event.data.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
      )
      return said.at(-1) ?? ''
    },
  }
}
