/**
 * Markdown from the model, made safe for the DOM: `marked` renders it with
 * every raw HTML token escaped (shown as text, never parsed), and DOMPurify
 * sanitizes the result (no scripts, handlers, forms, frames or remote
 * images). Links open in a new tab without a referrer.
 */
import DOMPurify from 'dompurify'
import { Marked } from 'marked'

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html(token) {
      return escapeHtml(token.text)
    },
  },
})

const purifier = DOMPurify(window)
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer nofollow')
  }
})

/** Sanitized HTML for `markdown`. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown, { async: false })
  return purifier.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
    FORBID_ATTR: ['style', 'id', 'name'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  })
}

/** The plan's title: plan-core's own rule (SPEC §6's card title), so the client and the host agree. */
export { planTitle } from '@planmode/plan-core'

export { planFileName } from './plan-file.js'

/** Starts a download of `text` as `name`. */
export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/markdown;charset=utf-8' }))
  const link = document.createElement('a')
  link.href = url
  link.download = name
  link.rel = 'noopener'
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 0)
}
