/**
 * Where the heap of a loaded session goes (job `heap`, issue 19): two heap
 * snapshots of one process, before and after the host's store opens the
 * size's JSONL file, each node's self size summed by kind, then the
 * difference: what the loaded log holds. Heavy (a snapshot is about twice
 * the heap), so it is run apart at a mid size and read per event.
 */
import { readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'
import { Context, type Logger } from '@planmode/context'
import { sessionStorePlugin } from '@planmode/host'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** Bytes by kind of heap node, for the events of one loaded session. */
export interface HeapBreakdown {
  readonly events: number
  /** The JSONL file's size (bytes). */
  readonly fileBytes: number
  /** What the open added to the heap, by kind (bytes): see {@link KINDS}. */
  readonly kinds: Record<Kind, number>
}

/** The kinds a node is summed under. */
export const KINDS = {
  strings: 'strings (the text: messages, tool results, ids; property names are shared, in shapes)',
  objects: 'objects (each event, its data, content blocks, tool inputs)',
  eventsArray: 'the events array (its one backing store, a slot per event)',
  arrays: 'other arrays (content arrays and their backing stores)',
  numbers: 'heap numbers (`time`, a millisecond timestamp above the small-integer range)',
  other: 'everything else (shapes, code, closures: the runtime, not the log)',
} as const
type Kind = keyof typeof KINDS

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[]] } }
  readonly nodes: number[]
}

/** Sums one heap snapshot's self sizes by kind; the largest plain array node is reported apart as `eventsArray`. */
function summarize(snapshot: Snapshot): Record<Kind, number> {
  const fields = snapshot.snapshot.meta.node_fields
  const types = snapshot.snapshot.meta.node_types[0]
  const width = fields.length
  const typeAt = fields.indexOf('type')
  const sizeAt = fields.indexOf('self_size')
  const sums: Record<Kind, number> = { strings: 0, objects: 0, eventsArray: 0, arrays: 0, numbers: 0, other: 0 }
  let largestArray = 0
  const nodes = snapshot.nodes
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]!]
    const size = nodes[i + sizeAt]!
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') sums.strings += size
    else if (type === 'object') sums.objects += size
    else if (type === 'array') {
      sums.arrays += size
      largestArray = Math.max(largestArray, size)
    } else if (type === 'number' || type === 'heap number') sums.numbers += size
    else sums.other += size
  }
  sums.arrays -= largestArray
  sums.eventsArray = largestArray
  return sums
}

async function snapshotIn(dir: string, name: string): Promise<Record<Kind, number>> {
  const file = writeHeapSnapshot(join(dir, name))
  try {
    return summarize(JSON.parse(await readFile(file, 'utf8')) as Snapshot)
  } finally {
    await rm(file, { force: true })
  }
}

/** Opens session `id` of `dir` through the host store between two heap snapshots; returns what the open added. */
export async function heapBreakdown(dir: string, id: string): Promise<HeapBreakdown> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('bench: the heap job needs --expose-gc')
  const ctx = new Context({ logger: quiet })
  ctx.plugin(sessionStorePlugin, { dir, durability: 'never' })
  const store = ctx.require('sessions')
  gc()
  const before = await snapshotIn(dir, 'before.heapsnapshot')
  const session = await store.open(id)
  gc()
  const after = await snapshotIn(dir, 'after.heapsnapshot')
  const kinds = Object.fromEntries(Object.keys(KINDS).map((k) => [k, after[k as Kind] - before[k as Kind]])) as Record<Kind, number>
  // The events array was not there before: the largest array then was something else.
  kinds.eventsArray = after.eventsArray
  kinds.arrays = after.arrays + after.eventsArray - before.arrays - before.eventsArray - after.eventsArray
  const fileBytes = (await stat(join(dir, `${id}.jsonl`))).size
  const events = session.events.length
  await store.close(session)
  return { events, fileBytes, kinds }
}
