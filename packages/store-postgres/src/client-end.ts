import type pg from 'pg'

// Ending a dedicated connection (the lease's, the listener's) that may be
// partitioned: a server that never answers must not hold up `close` or
// `end` for longer than PING_MS.

/** How long a dedicated connection may take to answer before it is given up for dead. */
export const PING_MS = 3_000

/** Whether `promise` settles within `ms`. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Drops a client's socket at once, without the goodbye a partitioned server never answers. */
export function destroy(client: pg.Client): void {
  ;(client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
}

/** Ends a client, or drops its socket when the server does not answer within {@link PING_MS}. */
export async function endClient(client: pg.Client): Promise<void> {
  if (!(await within(client.end(), PING_MS))) destroy(client)
}
