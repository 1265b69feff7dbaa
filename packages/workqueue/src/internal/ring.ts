/**
 * A growable FIFO ring buffer: O(1) push and shift without the O(n) cost of
 * `Array.prototype.shift` on large queues. Its capacity is a power of two, so
 * positions wrap with a mask rather than a division.
 *
 * @internal
 */
export class Ring<A> {
  private buffer: Array<A | undefined>
  private head = 0
  private size = 0

  constructor(capacity = 16) {
    let size = 16
    while (size < capacity) size *= 2
    this.buffer = new Array(size)
  }

  get length(): number {
    return this.size
  }

  push(value: A): void {
    if (this.size === this.buffer.length) this.grow()
    this.buffer[(this.head + this.size) & (this.buffer.length - 1)] = value
    this.size++
  }

  shift(): A | undefined {
    if (this.size === 0) return undefined
    const value = this.buffer[this.head]
    this.buffer[this.head] = undefined
    this.head = (this.head + 1) & (this.buffer.length - 1)
    this.size--
    return value
  }

  peek(): A | undefined {
    return this.size === 0 ? undefined : this.buffer[this.head]
  }

  clear(): void {
    this.buffer = new Array(16)
    this.head = 0
    this.size = 0
  }

  *[Symbol.iterator](): IterableIterator<A> {
    for (let i = 0; i < this.size; i++) yield this.buffer[(this.head + i) & (this.buffer.length - 1)] as A
  }

  private grow(): void {
    const next = new Array<A | undefined>(this.buffer.length * 2)
    for (let i = 0; i < this.size; i++) next[i] = this.buffer[(this.head + i) & (this.buffer.length - 1)]
    this.buffer = next
    this.head = 0
  }
}
