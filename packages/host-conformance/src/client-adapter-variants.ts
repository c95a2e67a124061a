import type { ClientAdapter, ClientAdapterDuty, ClientAdapterFactory, ServedClient } from './client-adapter.js'

/**
 * A deliberately broken wrapper of an adapter, breaking one duty: run
 * {@link clientAdapterCases} against `wrap(yourFactory)` and the case of
 * `duty` must fail, naming it.
 *
 * @public
 */
export interface BrokenClientAdapterVariant {
  readonly duty: ClientAdapterDuty
  /** A short name, e.g. `publishes only switches the user made`. */
  readonly name: string
  /** A fragment of the message the kit fails with for this variant. */
  readonly failure: string
  wrap(factory: ClientAdapterFactory): ClientAdapterFactory
}

/** `factory` with each adapter changed by `change`. */
const changed =
  (factory: ClientAdapterFactory, change: (adapter: ClientAdapter) => ClientAdapter): ClientAdapterFactory =>
  async (environment) =>
    change(await factory(environment))

/** A view less its last part: the last item of a list, else the last key of an object. */
function lessLast(view: unknown): unknown {
  if (Array.isArray(view)) return view.slice(0, -1)
  if (typeof view !== 'object' || view === null) return undefined
  const entries = Object.entries(view)
  return Object.fromEntries(entries.slice(0, -1))
}

/**
 * One broken variant per duty of {@link clientAdapterCases}: an adapter that
 * publishes only the modes the person chose (the approved exit and entry
 * are never published), one that takes an answer it did not offer as an
 * approval, and one whose replay leaves out the last part of what the
 * client was shown.
 *
 * @public
 */
export const BROKEN_CLIENT_ADAPTER_VARIANTS: readonly BrokenClientAdapterVariant[] = [
  {
    duty: 'client-mode',
    name: 'publishes only the switches the person made',
    failure: 'the client was told the modes',
    wrap: (factory) =>
      changed(factory, (adapter) => ({
        ...adapter,
        async open(answer) {
          const served = await adapter.open(answer)
          const client: ServedClient = {
            ...served.client,
            modes: () => served.client.modes().filter((_mode, index) => index === 0 || index === served.client.modes().length - 1),
          }
          return { ...served, client }
        },
      })),
  },
  {
    duty: 'client-unknown-outcome',
    name: 'takes an answer it did not offer as an approval',
    failure: 'an outcome the client was not offered',
    wrap: (factory) =>
      changed(factory, (adapter) => ({
        ...adapter,
        open: (answer) => adapter.open((question) => (answer(question) === 'unknown' ? 'approve' : answer(question))),
      })),
  },
  {
    duty: 'client-replay',
    name: 'replays all but the last part',
    failure: 'the replay shows',
    wrap: (factory) =>
      changed(factory, (adapter) => ({
        ...adapter,
        async attach(sessionId) {
          const client = await adapter.attach(sessionId)
          return { ...client, view: () => lessLast(client.view()) }
        },
      })),
  },
]
