/**
 * The `needs` graph of a document's bricks: what names a missing brick, what forms a cycle, and the order
 * bricks apply in. Every walk keeps its own stack: a 1 MB document can chain tens of thousands of bricks.
 */

export interface GraphBrick {
  readonly id: string
  readonly needs: readonly string[]
}

/** Each `needs` entry that names no brick of the document, with the brick that has it. */
export function unknownDependencies(bricks: readonly GraphBrick[]): { brickId: string; missing: string }[] {
  const ids = new Set(bricks.map((b) => b.id))
  return bricks.flatMap((b) => b.needs.filter((n) => !ids.has(n)).map((missing) => ({ brickId: b.id, missing })))
}

/**
 * The cycles of the graph: each strongly connected component of more than one brick, or one brick that
 * needs itself, as brick ids in document order. Tarjan's algorithm, iterative. Unknown needs are ignored.
 */
export function dependencyCycles(bricks: readonly GraphBrick[]): string[][] {
  const indexOf = new Map(bricks.map((b, i) => [b.id, i]))
  const edges = bricks.map((b) => b.needs.map((n) => indexOf.get(n)).filter((i): i is number => i !== undefined))
  const order = new Array<number>(bricks.length).fill(-1)
  const low = new Array<number>(bricks.length).fill(0)
  const onStack = new Array<boolean>(bricks.length).fill(false)
  const stack: number[] = []
  const cycles: number[][] = []
  let counter = 0
  for (let root = 0; root < bricks.length; root++) {
    if (order[root] !== -1) continue
    const work: { node: number; edge: number }[] = [{ node: root, edge: 0 }]
    order[root] = low[root] = counter++
    stack.push(root)
    onStack[root] = true
    while (work.length > 0) {
      const frame = work[work.length - 1]!
      const next = edges[frame.node]![frame.edge++]
      if (next !== undefined) {
        if (order[next] === -1) {
          order[next] = low[next] = counter++
          stack.push(next)
          onStack[next] = true
          work.push({ node: next, edge: 0 })
        } else if (onStack[next]) {
          low[frame.node] = Math.min(low[frame.node]!, order[next]!)
        }
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent) low[parent.node] = Math.min(low[parent.node]!, low[frame.node]!)
      if (low[frame.node] !== order[frame.node]) continue
      const component: number[] = []
      let member: number
      do {
        member = stack.pop()!
        onStack[member] = false
        component.push(member)
      } while (member !== frame.node)
      if (component.length > 1 || edges[frame.node]!.includes(frame.node)) cycles.push(component.sort((a, b) => a - b))
    }
  }
  return cycles.sort((a, b) => a[0]! - b[0]!).map((c) => c.map((i) => bricks[i]!.id))
}

/**
 * The bricks in dependency order: each after every brick it needs, and otherwise in document order (of the
 * bricks ready at each step, the earliest in the document comes first). Bricks in or behind a cycle come
 * last, in document order; needs naming no brick are ignored. Kahn's algorithm over a binary heap.
 */
export function dependencyOrder<B extends GraphBrick>(bricks: readonly B[]): B[] {
  const indexOf = new Map(bricks.map((b, i) => [b.id, i]))
  const waiting = bricks.map(() => 0)
  const dependants: number[][] = bricks.map(() => [])
  bricks.forEach((b, i) => {
    for (const need of new Set(b.needs)) {
      const j = indexOf.get(need)
      if (j === undefined) continue
      waiting[i]! += 1
      dependants[j]!.push(i)
    }
  })
  const ready = new MinHeap()
  waiting.forEach((n, i) => n === 0 && ready.push(i))
  const out: B[] = []
  const placed = new Array<boolean>(bricks.length).fill(false)
  for (let i = ready.pop(); i !== undefined; i = ready.pop()) {
    out.push(bricks[i]!)
    placed[i] = true
    for (const d of dependants[i]!) if (--waiting[d]! === 0) ready.push(d)
  }
  bricks.forEach((b, i) => placed[i] || out.push(b))
  return out
}

/** A binary min-heap of indexes. */
class MinHeap {
  private readonly items: number[] = []
  push(value: number): void {
    const items = this.items
    items.push(value)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (items[parent]! <= value) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = value
  }
  pop(): number | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (items.length === 0 || last === undefined) return top
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= items.length) break
      const right = left + 1
      const child = right < items.length && items[right]! < items[left]! ? right : left
      if (items[child]! >= last) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }
}
