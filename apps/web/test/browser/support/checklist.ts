/**
 * The checklist of the approved plan as a tab showed it at each
 * `data-as-of-seq`: a MutationObserver in the page records, after every DOM
 * change, the frame's `asOfSeq` and the checklist's DOM (the count beside
 * the chip, the title, each step's number, status, current mark and text),
 * so two tabs can be compared at every seq both showed.
 */
import type { Page } from 'playwright-core'

/** One recorded state: the `asOfSeq` shown and the checklist as text (`''` when none is shown). */
export interface ChecklistState {
  readonly asOfSeq: number
  readonly checklist: string
}

declare global {
  interface Window {
    __checklist?: ChecklistState[]
  }
}

/** Starts recording in `page` (its session view must be there); records the current state at once. */
export async function recordChecklist(page: Page): Promise<void> {
  await page.evaluate(() => {
    const read = (): ChecklistState | undefined => {
      const session = document.querySelector('[data-testid="session"]')
      if (session === null) return undefined
      const panel = document.querySelector('[data-testid="plan-progress"]')
      const count = document.querySelector('[data-testid="plan-progress-count"]')
      const steps = panel === null ? [] : Array.from(panel.querySelectorAll('[data-testid="plan-progress-step"]'))
      const checklist =
        panel === null && count === null
          ? ''
          : [
              `count ${count?.getAttribute('data-done')}/${count?.getAttribute('data-total')} ${(count?.textContent ?? '').trim()}`,
              `panel ${panel?.getAttribute('data-done')}/${panel?.getAttribute('data-total')} active ${panel?.getAttribute('data-active')} ${(panel?.querySelector('[data-testid="plan-progress-title"]')?.textContent ?? '').trim()}`,
              ...steps.map(
                (step) =>
                  `${step.getAttribute('data-step')} ${step.getAttribute('data-status')} ${step.getAttribute('aria-current') ?? '-'} ${(step.textContent ?? '').replace(/\s+/g, ' ').trim()}`,
              ),
            ].join('\n')
      return { asOfSeq: Number(session.getAttribute('data-as-of-seq')), checklist }
    }
    const log: ChecklistState[] = []
    window.__checklist = log
    const note = (): void => {
      const state = read()
      if (state === undefined) return
      const last = log.at(-1)
      if (last?.asOfSeq !== state.asOfSeq || last.checklist !== state.checklist) log.push(state)
    }
    note()
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true })
  })
}

/** What `page` recorded so far, in order. */
export async function checklistLog(page: Page): Promise<ChecklistState[]> {
  return page.evaluate(() => window.__checklist ?? [])
}

/**
 * The checklist each `asOfSeq` showed last in a log (a seq whose frame came
 * with a re-render of the same seq keeps its final DOM).
 */
export function bySeq(log: readonly ChecklistState[]): Map<number, string> {
  const seen = new Map<number, string>()
  for (const state of log) seen.set(state.asOfSeq, state.checklist)
  return seen
}
