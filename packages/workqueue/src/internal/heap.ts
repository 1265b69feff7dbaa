/**
 * A binary min-heap over nodes that remember their own position, so that an
 * entry can be re-ordered (`fix`) or removed in O(log n).
 *
 * @internal
 */
export interface HeapNode {
  heapIndex: number
}

/** @internal */
export class Heap<A extends HeapNode> {
  private readonly nodes: Array<A> = []

  constructor(private readonly less: (a: A, b: A) => boolean) {}

  get size(): number {
    return this.nodes.length
  }

  peek(): A | undefined {
    return this.nodes[0]
  }

  /** The nodes, in heap order (not sorted). */
  values(): ReadonlyArray<A> {
    return this.nodes.slice()
  }

  push(node: A): void {
    node.heapIndex = this.nodes.length
    this.nodes.push(node)
    this.up(node.heapIndex)
  }

  pop(): A | undefined {
    const nodes = this.nodes
    if (nodes.length === 0) return undefined
    const top = nodes[0]!
    const last = nodes.pop()!
    if (nodes.length > 0) {
      nodes[0] = last
      last.heapIndex = 0
      this.down(0)
    }
    top.heapIndex = -1
    return top
  }

  remove(node: A): void {
    const i = node.heapIndex
    if (i < 0 || this.nodes[i] !== node) return
    const last = this.nodes.pop()!
    if (i < this.nodes.length) {
      this.nodes[i] = last
      last.heapIndex = i
      this.fix(last)
    }
    node.heapIndex = -1
  }

  /** Restores the heap order after `node`'s key changed. */
  fix(node: A): void {
    if (!this.down(node.heapIndex)) this.up(node.heapIndex)
  }

  clear(): void {
    for (const node of this.nodes) node.heapIndex = -1
    this.nodes.length = 0
  }

  private up(i: number): void {
    const nodes = this.nodes
    const node = nodes[i]!
    while (i > 0) {
      const parentIndex = (i - 1) >> 1
      const parent = nodes[parentIndex]!
      if (!this.less(node, parent)) break
      nodes[i] = parent
      parent.heapIndex = i
      i = parentIndex
    }
    nodes[i] = node
    node.heapIndex = i
  }

  private down(start: number): boolean {
    const nodes = this.nodes
    const n = nodes.length
    const node = nodes[start]!
    let i = start
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && this.less(nodes[right]!, nodes[left]!) ? right : left
      if (!this.less(nodes[child]!, node)) break
      nodes[i] = nodes[child]!
      nodes[i]!.heapIndex = i
      i = child
    }
    nodes[i] = node
    node.heapIndex = i
    return i > start
  }
}
