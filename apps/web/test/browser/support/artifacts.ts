/** Screenshots of key states, saved as test artifacts (apps/web/test/artifacts, gitignored). */
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'

/** The artifacts directory. */
export const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url))

/** Saves a full-page screenshot as `artifacts/<name>.png` and returns its path. */
export async function snap(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true })
  const path = `${ARTIFACTS}${name}.png`
  await page.screenshot({ path, fullPage: true })
  return path
}
