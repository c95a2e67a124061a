/**
 * Moves focus to a newly shown panel's heading, unless the person is typing
 * in a text field (a question arriving must not take their keystrokes).
 */
export function focusUnlessTyping(element: HTMLElement | null): void {
  if (element === null) return
  const active = document.activeElement
  const typing = active instanceof HTMLTextAreaElement || (active instanceof HTMLInputElement && active.type === 'text')
  if (!typing) element.focus({ preventScroll: true })
}
