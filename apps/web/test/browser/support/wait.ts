/**
 * Waiting assertions on locators (playwright-core has no `expect`): each
 * polls its condition until it holds or the time is up, then fails with
 * what it waited for and what it last saw. No fixed sleeps anywhere.
 */
import type { Locator } from 'playwright-core'
import { scaledMs } from '@planmode/testkit'

/** How long a wait for the app may take: 20 s on an idle machine, times the load factor when the test file starts. */
export const WAIT_MS = scaledMs(20_000)

/** Polls `check` (every 25 ms, growing to 200 ms) until it returns `true`; throws `describe()` with the last value seen. */
export async function until(check: () => Promise<boolean>, describe: () => Promise<string> | string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let pause = 25
  for (;;) {
    let ok = false
    try {
      ok = await check()
    } catch {
      ok = false
    }
    if (ok) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${await describe()}`)
    await new Promise((resolve) => setTimeout(resolve, pause))
    pause = Math.min(200, pause * 2)
  }
}

const matches = (value: string | null, want: string | RegExp): boolean =>
  value === null ? false : typeof want === 'string' ? value === want : want.test(value)
const contains = (value: string | null, want: string | RegExp): boolean =>
  value === null ? false : typeof want === 'string' ? value.includes(want) : want.test(value)

/** Waiting assertions on one locator. */
export function soon(locator: Locator, timeoutMs = WAIT_MS) {
  const name = locator.toString()
  return {
    async toHaveCount(n: number) {
      await until(
        async () => (await locator.count()) === n,
        async () => `${name}: expected ${n} element(s), found ${await locator.count()}`,
        timeoutMs,
      )
    },
    async toBeVisible() {
      await locator.waitFor({ state: 'visible', timeout: timeoutMs })
    },
    async toBeEnabled() {
      await until(
        () => locator.isEnabled(),
        () => `${name}: expected enabled`,
        timeoutMs,
      )
    },
    async toBeDisabled() {
      await until(
        () => locator.isDisabled(),
        () => `${name}: expected disabled`,
        timeoutMs,
      )
    },
    async toHaveValue(value: string) {
      await until(
        async () => (await locator.inputValue()) === value,
        async () => `${name}: expected value ${JSON.stringify(value)}, saw ${JSON.stringify(await locator.inputValue().catch(() => null))}`,
        timeoutMs,
      )
    },
    async toHaveAttribute(attribute: string, want: string | RegExp) {
      await until(
        async () => matches(await locator.getAttribute(attribute, { timeout: 1_000 }), want),
        async () =>
          `${name}: expected [${attribute}] ${String(want)}, saw ${JSON.stringify(await locator.getAttribute(attribute, { timeout: 1_000 }).catch(() => null))}`,
        timeoutMs,
      )
    },
    async toHaveText(want: string | RegExp) {
      await until(
        async () => matches(((await locator.textContent({ timeout: 1_000 })) ?? '').trim(), want),
        async () =>
          `${name}: expected text ${String(want)}, saw ${JSON.stringify(await locator.textContent({ timeout: 1_000 }).catch(() => null))}`,
        timeoutMs,
      )
    },
    async toContainText(want: string | RegExp) {
      await until(
        async () => contains(await locator.textContent({ timeout: 1_000 }), want),
        async () =>
          `${name}: expected text containing ${String(want)}, saw ${JSON.stringify((await locator.textContent({ timeout: 1_000 }).catch(() => null))?.slice(0, 400))}`,
        timeoutMs,
      )
    },
  }
}
