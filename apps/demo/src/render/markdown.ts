import type { Style } from './style.js'

function inline(text: string, style: Style): string {
  if (!style.color) return text
  return text
    .replace(/`([^`]+)`/g, (_, code: string) => style.cyan(code))
    .replace(/\*\*([^*]+)\*\*/g, (_, bold: string) => style.bold(bold))
}

/** Splits `text` into lines of at most `width` characters at spaces (a longer word gets a line of its own). */
export function wrapWords(text: string, width: number): string[] {
  if (width <= 0 || text.length <= width) return [text]
  const lines: string[] = []
  let current = ''
  for (const word of text.split(' ')) {
    if (current !== '' && current.length + 1 + word.length > width) {
      lines.push(current)
      current = word
    } else {
      current = current === '' ? word : `${current} ${word}`
    }
  }
  lines.push(current)
  return lines
}

/**
 * Renders markdown for a terminal: headings, bullets, numbered steps and
 * inline code, wrapped to `width` with hanging indents when a width is
 * known. With colour off the markdown stays as written, only indented.
 */
export function renderMarkdown(markdown: string, style: Style, indent = '    ', width?: number): string {
  const out: string[] = []
  let fenced = false
  const wrapped = (first: string, rest: string, body: string, paint: (text: string) => string): void => {
    const room = width === undefined ? 0 : Math.max(20, width - indent.length - first.length)
    wrapWords(body, room).forEach((line, index) => out.push(`${indent}${index === 0 ? first : rest}${paint(line)}`))
  }
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
    if (line.trim() === '') {
      out.push('')
      continue
    }
    const paint = (text: string): string => inline(text, style)
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading !== null) {
      if (!style.color) out.push(indent + line)
      else out.push(indent + (heading[1]!.length === 1 ? style.bold(style.magenta(heading[2]!)) : style.bold(heading[2]!)))
      continue
    }
    const bullet = /^(\s*)([-*])\s+(.*)$/.exec(line)
    if (bullet !== null) {
      const marker = style.color ? '•' : bullet[2]!
      wrapped(`${bullet[1]}${marker} `, `${bullet[1]}  `, bullet[3]!, paint)
      continue
    }
    const numbered = /^(\s*)(\d+[.)])\s+(.*)$/.exec(line)
    if (numbered !== null) {
      const first = `${numbered[1]}${numbered[2]} `
      wrapped(first, ' '.repeat(first.length), numbered[3]!, paint)
      continue
    }
    const emphasis = /^_(.*)_$/.exec(line)
    if (emphasis !== null && style.color) {
      wrapped('', '', emphasis[1]!, (text) => style.italic(text))
      continue
    }
    wrapped('', '', line, paint)
  }
  return out.join('\n')
}
