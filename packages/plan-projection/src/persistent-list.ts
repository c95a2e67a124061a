/**
 * An immutable list that shares its structure between versions: a 32-way
 * trie of full 32-element leaves, plus the last 1–32 elements in `tail` (the
 * layout of Clojure's and Scala's persistent vectors). Plain JSON: nested
 * arrays and numbers, so a JSON copy of it is a list again. No operation
 * changes a node once made; the nodes are not frozen (freezing an array
 * costs more than the rest of a change), so do not change them either.
 *
 * `push` and `set` copy the tail, or the path from the root to one leaf
 * (at most 32 references per level; 3 levels hold 32,800 elements), so a
 * change costs the same at 20,000 elements as at 10. Building an array
 * of it is the one O(n) operation.
 *
 * @public
 */
export interface PersistentList<T> {
  /** The number of elements. */
  readonly size: number
  /** How far an index is shifted right to pick the root's child: 5 per level below the root. */
  readonly shift: number
  /** The trie of the elements before `tail`: nodes of up to 32 children, leaves of exactly 32 elements. */
  readonly root: readonly unknown[]
  /** The last elements, 1 to 32 of them (none when the list is empty). */
  readonly tail: readonly T[]
}

const BITS = 5
const WIDTH = 1 << BITS
const MASK = WIDTH - 1
const NO_NODE: readonly unknown[] = []

/** The empty list. */
export function emptyList<T>(): PersistentList<T> {
  return { size: 0, shift: BITS, root: NO_NODE, tail: NO_NODE as readonly T[] }
}

/** The index of the first element held in the tail. */
const tailOffset = (list: PersistentList<unknown>): number => (list.size < WIDTH ? 0 : ((list.size - 1) >>> BITS) << BITS)

/** The element at `index` (0 ≤ index < size). */
export function listGet<T>(list: PersistentList<T>, index: number): T {
  const offset = tailOffset(list)
  if (index >= offset) return list.tail[index - offset]!
  let node = list.root
  for (let level = list.shift; level > 0; level -= BITS) node = node[(index >>> level) & MASK] as readonly unknown[]
  return node[index & MASK] as T
}

/** A copy of `node` with `value` at `at`. */
function withChild(node: readonly unknown[], at: number, value: unknown): readonly unknown[] {
  const copy = node.slice()
  copy[at] = value
  return copy
}

/** `node` wrapped in as many single-child nodes as `level` needs. */
const pathTo = (level: number, node: readonly unknown[]): readonly unknown[] => (level === 0 ? node : [pathTo(level - BITS, node)])

/** `parent` (at `level`) with the full tail of a list of `size` elements added as its last leaf. */
function withLeaf(size: number, level: number, parent: readonly unknown[], leaf: readonly unknown[]): readonly unknown[] {
  const at = ((size - 1) >>> level) & MASK
  if (level === BITS) return withChild(parent, at, leaf)
  const child = parent[at] as readonly unknown[] | undefined
  return withChild(parent, at, child === undefined ? pathTo(level - BITS, leaf) : withLeaf(size, level - BITS, child, leaf))
}

/** The list with `value` added at the end. */
export function listPush<T>(list: PersistentList<T>, value: T): PersistentList<T> {
  const { size, shift, root, tail } = list
  if (size - tailOffset(list) < WIDTH) {
    const grown = tail.slice()
    grown.push(value)
    return { size: size + 1, shift, root, tail: grown }
  }
  // The tail is full: it becomes the trie's last leaf, and a new tail starts with `value`.
  if (size >>> BITS > 1 << shift) {
    return { size: size + 1, shift: shift + BITS, root: [root, pathTo(shift, tail)], tail: [value] }
  }
  return { size: size + 1, shift, root: withLeaf(size, shift, root, tail), tail: [value] }
}

function setIn(level: number, node: readonly unknown[], index: number, value: unknown): readonly unknown[] {
  if (level === 0) return withChild(node, index & MASK, value)
  const at = (index >>> level) & MASK
  return withChild(node, at, setIn(level - BITS, node[at] as readonly unknown[], index, value))
}

/** The list with `value` at `index` (0 ≤ index < size). */
export function listSet<T>(list: PersistentList<T>, index: number, value: T): PersistentList<T> {
  const offset = tailOffset(list)
  if (index >= offset)
    return { size: list.size, shift: list.shift, root: list.root, tail: withChild(list.tail, index - offset, value) as readonly T[] }
  return { size: list.size, shift: list.shift, root: setIn(list.shift, list.root, index, value), tail: list.tail }
}

/** The elements, in order, as a new plain array: leaf by leaf, then the tail. */
export function listToArray<T>(list: PersistentList<T>): T[] {
  const out: T[] = new Array<T>(list.size)
  const offset = tailOffset(list)
  let at = 0
  const walk = (node: readonly unknown[], level: number): void => {
    if (level === 0) {
      for (let i = 0; i < node.length; i++) out[at++] = node[i] as T
      return
    }
    for (let i = 0; i < node.length; i++) walk(node[i] as readonly unknown[], level - BITS)
  }
  if (offset > 0) walk(list.root, list.shift)
  for (let i = 0; i < list.tail.length; i++) out[at++] = list.tail[i]!
  return out
}
