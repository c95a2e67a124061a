import type { Disposer, Plugin } from '@planmode/context'
import type { AssembledRequest, AssemblyInput, RenderedSection, SystemPromptRegistry, SystemPromptSection } from '@planmode/seams'

/**
 * Provides service `systemPrompt`. `assemble` renders every section (sorted
 * by `order`, ties in registration order), joins the non-empty texts with a
 * blank line, and snapshots the `tools` catalog when that service is
 * composed (an empty catalog otherwise).
 *
 * @public
 */
export const systemPromptPlugin: Plugin = {
  name: '@planmode/host/system-prompt',
  apply(ctx) {
    const sections: SystemPromptSection[] = []
    const registry: SystemPromptRegistry = {
      section(section: SystemPromptSection): Disposer {
        if (typeof section?.name !== 'string' || section.name === '') {
          throw new TypeError('systemPrompt.section: a section needs a non-empty `name`')
        }
        if (typeof section.order !== 'number' || Number.isNaN(section.order)) {
          throw new TypeError(`systemPrompt.section(${section.name}): \`order\` must be a number`)
        }
        if (typeof section.text !== 'string' && typeof section.text !== 'function') {
          throw new TypeError(`systemPrompt.section(${section.name}): \`text\` must be a string or a function`)
        }
        if (sections.some((existing) => existing.name === section.name)) {
          throw new Error(`system prompt section "${section.name}" is already registered`)
        }
        const entry = { ...section }
        sections.push(entry)
        return () => {
          const index = sections.indexOf(entry)
          if (index >= 0) sections.splice(index, 1)
        }
      },
      assemble(input: AssemblyInput = {}): AssembledRequest {
        // Array.prototype.sort is stable: ties keep registration order.
        const ordered = [...sections].sort((a, b) => a.order - b.order)
        const rendered: RenderedSection[] = ordered.map((section) => {
          const text = typeof section.text === 'function' ? section.text(input) : section.text
          if (typeof text !== 'string') {
            throw new TypeError(`system prompt section "${section.name}" rendered ${typeof text}, not a string`)
          }
          return { name: section.name, order: section.order, text }
        })
        return {
          sections: rendered,
          system: rendered
            .map((section) => section.text)
            .filter((text) => text !== '')
            .join('\n\n'),
          tools: ctx.get('tools')?.schemas() ?? [],
        }
      },
    }
    ctx.provide('systemPrompt', registry)
  },
}
