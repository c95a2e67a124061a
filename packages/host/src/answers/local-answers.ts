import type { Context } from '@planmode/context'
import type { Session } from '@planmode/seams'
import { LocalAnswerDesk } from './local-desk.js'
import { localAnswers } from './local-inbox.js'

/** What the local channel needs of the JSONL store: its folder, and the sessions it writes. */
interface WritingStore {
  readonly dir: string | undefined
  get(id: string): (Session & { readonly file: string | undefined }) | undefined
}

/**
 * Provides services `answerDesk` (this store's writer side) and
 * `answerInbox` (the submitter side, over the same folder) for the JSONL
 * store `store`; the desk's channels close with `ctx`.
 */
export function provideLocalAnswers(ctx: Context, store: WritingStore, socketDir: string | undefined): void {
  const desk = new LocalAnswerDesk({
    logger: ctx.logger,
    ...(socketDir === undefined ? {} : { socketDir }),
    logOf: (session) => {
      const own = store.get(session.id)
      return own === session ? own.file : undefined
    },
  })
  ctx.provide('answerDesk', desk)
  ctx.provide('answerInbox', localAnswers({ dir: store.dir! }))
  ctx.effect(() => {
    desk
      .close()
      .catch((error: unknown) => ctx.logger.warn(`session store: closing the answer channels failed: ${(error as Error).message}`))
  })
}
