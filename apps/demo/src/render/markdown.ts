import type { Style } from './style.js'

function inline(text: string, style: Style): string {
  if (!style.color) return text
  return text.replace(/`([^`]+)`/g, (_, code: string) => style.cyan(code)).replace(/\*\*([^*]+)\*\*/g, (_, bold: string) => style.bold(bold))
}

/**
 * Renders markdown for a terminal: headings, bullets, numbered steps and
 * inline code. With colour off the markdown stays as written (it reads well
 * as it is), only indented.
 */
export function renderMarkdown(markdown: string, style: Style, indent = '    '): string {
  const out: string[] = []
  let fenced = false
  for (const line of markdown.replace(/\n+$/, '').split('\n')) {
    if (line.startsWith('```')) {
      fenced = !fenced
      out.push(indent + style.dim(line))
      continue
    }
    if (fenced) {
      out.push(indent + style.cyan(line))
      continue
    }
    if (!style.color) {
      out.push(line === '' ? '' : indent + line)
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading !== null) {
      const text = heading[2]!
      out.push(indent + (heading[1]!.length === 1 ? style.bold(style.magenta(text)) : style.bold(text)))
      continue
    }
    const bullet = /^(\s*)[-*]\s+(.*)$/.exec(line)
    if (bullet !== null) {
      out.push(`${indent}${bullet[1]}• ${inline(bullet[2]!, style)}`)
      continue
    }
    const emphasis = /^_(.*)_$/.exec(line)
    if (emphasis !== null) {
      out.push(indent + style.italic(emphasis[1]!))
      continue
    }
    out.push(line === '' ? '' : indent + inline(line, style))
  }
  return out.join('\n')
}
