import { useMemo } from 'react'
import { renderMarkdown } from '../markdown.js'

/** Model markdown, rendered and sanitized (see markdown.ts). */
export function Markdown({ text, testId, className }: { text: string; testId?: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text])
  return <div className={`markdown ${className ?? ''}`} data-testid={testId} dangerouslySetInnerHTML={{ __html: html }} />
}
