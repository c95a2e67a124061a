import type { SystemPromptRegistry, SystemPromptSection, ToolRegistry } from '@planmode/seams'

/** The system-prompt registry: sections rendered per assembly by `order` (ties keep registration order), non-empty ones joined by a blank line. */
export function createSystemPrompt(tools: ToolRegistry): SystemPromptRegistry {
  const sections = new Map<string, SystemPromptSection>()
  return {
    section(section) {
      if (sections.has(section.name)) throw new Error(`system prompt section "${section.name}" is already registered`)
      sections.set(section.name, section)
      return () => void (sections.get(section.name) === section && sections.delete(section.name))
    },
    assemble(input) {
      const rendered = [...sections.values()]
        .sort((a, b) => a.order - b.order)
        .map(({ name, order, text }) => ({ name, order, text: typeof text === 'function' ? text(input) : text }))
      const system = rendered
        .filter((section) => section.text !== '')
        .map((section) => section.text)
        .join('\n\n')
      return { sections: rendered, system, tools: tools.schemas() }
    },
  }
}
