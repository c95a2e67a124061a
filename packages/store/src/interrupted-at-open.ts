import { closeInterruptedTurn, type Session } from '@planmode/seams'

/**
 * What a store does when it opens a session for writing, before anyone
 * else can append: the seams' `closeInterruptedTurn` (every ask the log
 * leaves open settled `interrupted`, then the open turn's open step and
 * the turn closed `interrupted`), each told to `warn` first. An append that
 * fails is a warning too, never a failed open: the session opens all the
 * same, and an agent loop closes the turn before its next one.
 *
 * @remarks
 * Call it once the log is read and the session held, before the session
 * is handed out: nothing of this process asks or runs a turn on it yet,
 * so everything open is a dead writer's. This is how a question whose
 * writer died before it could log a settlement ends: the next writer
 * settles it `interrupted` here (SPEC §22.4).
 *
 * @example
 * ```ts
 * await closeInterruptedAtOpen(session, (message) => logger.warn(`my-store: ${message}`))
 * ```
 *
 * @public
 */
export async function closeInterruptedAtOpen(
  session: Pick<Session, 'id' | 'events' | 'append'>,
  warn: (message: string) => void,
): Promise<void> {
  try {
    await closeInterruptedTurn(session, warn)
  } catch (error) {
    warn(`could not close the interrupted turn of session ${session.id}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
