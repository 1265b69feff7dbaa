import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as PriorityWorkqueue from "../PriorityWorkqueue.js"
import * as RateLimiter from "../RateLimiter.js"
import type * as Workqueue from "../Workqueue.js"
import { WorkqueueShutdown } from "../WorkqueueError.js"
import { QueueCore } from "./core.js"
import { toDelayMillis } from "./delay.js"
import { Heap, type HeapNode } from "./heap.js"
import { commonOperations, resolveOptions, startCore } from "./workqueue.js"

/** A waiting key: ready when `readyAt === 0`, else due at `readyAt` (ms). */
interface Item extends HeapNode {
  readonly key: string
  priority: number
  readyAt: number
  /** Arrival order at the item's priority: FIFO within a priority. */
  seq: number
  /** When the item became ready (ms), for the queue-duration metric. */
  addedAt: number
}

/** Higher priority first, then first added first. */
const lessItem = (a: Item, b: Item): boolean => a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq)

/**
 * controller-runtime's priority queue: every waiting key has one item that
 * merges later adds (max priority, min ready time). Ready items that are not
 * in flight sit in a heap ordered by priority, then by first add.
 *
 * @internal
 */
export class PriorityQueue extends QueueCore<PriorityWorkqueue.PriorityWorkqueue.Taken> {
  private readonly items = new Map<string, Item>()
  private readonly ready = new Heap<Item>(lessItem)
  /** Keys handed out and not yet `done`, with the time (ms) they were handed out. */
  private readonly processing = new Map<string, number>()
  private seq = 0

  add(key: string, priority: number, delayMillis: number): void {
    if (this.shuttingDown) return
    if (delayMillis > 0) this.metrics.retries(1)
    const now = this.now()
    const readyAt = delayMillis > 0 ? now + delayMillis : 0
    const item = this.items.get(key)
    if (item === undefined) {
      const created: Item = { key, priority, readyAt, seq: this.seq++, addedAt: now, heapIndex: -1 }
      this.items.set(key, created)
      if (readyAt === 0) this.becomeReady(created, now)
      else this.scheduleAt(key, readyAt)
      return
    }
    if (priority > item.priority) {
      item.priority = priority
      // As controller-runtime: a key raised to a higher priority queues behind the keys already at that priority.
      item.seq = this.seq++
      if (item.heapIndex >= 0) this.ready.fix(item)
    }
    if (item.readyAt !== 0 && (readyAt === 0 || readyAt < item.readyAt)) {
      if (readyAt === 0) {
        this.cancelDelayed(key)
        this.becomeReady(item, now)
      } else {
        item.readyAt = readyAt
        this.scheduleAt(key, readyAt)
      }
    }
  }

  private becomeReady(item: Item, now: number): void {
    item.readyAt = 0
    item.addedAt = now
    this.recordAdd()
    if (this.processing.has(item.key)) return
    this.ready.push(item)
    this.notify()
  }

  protected tryTake(): PriorityWorkqueue.PriorityWorkqueue.Taken | undefined {
    const item = this.ready.pop()
    if (item === undefined) return undefined
    this.items.delete(item.key)
    this.processing.set(item.key, this.recordTake(item.addedAt))
    return { key: item.key, priority: item.priority }
  }

  protected onDelayedReady(key: string): void {
    const item = this.items.get(key)
    if (item !== undefined && item.readyAt !== 0) this.becomeReady(item, this.now())
  }

  protected finish(key: string): number {
    const started = this.processing.get(key)
    if (started === undefined) return -1
    this.processing.delete(key)
    const item = this.items.get(key)
    if (item !== undefined && item.readyAt === 0) this.ready.push(item)
    return started
  }

  protected forEachInFlight(f: (startedAt: number) => void): void {
    for (const started of this.processing.values()) f(started)
  }

  readyLength(): number {
    return this.ready.size
  }
}

const shutdownError = Effect.fail(new WorkqueueShutdown())

/** @internal */
export const make = (
  options: Workqueue.Workqueue.Options
): Effect.Effect<PriorityWorkqueue.PriorityWorkqueue.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { clock, limiter, recorder } = yield* resolveOptions(options, RateLimiter.priorityDefault)
    const core = new PriorityQueue(options.name, clock, limiter, recorder)
    yield* startCore(core)
    const addWithOptions = (key: string, opts: PriorityWorkqueue.PriorityWorkqueue.AddOptions = {}) => {
      const priority = opts.priority ?? 0
      const after = opts.after === undefined ? 0 : toDelayMillis(opts.after)
      if (!opts.rateLimited) return Effect.sync(() => core.add(key, priority, after))
      return Effect.flatMap(limiter.when(key), (limited) =>
        Effect.sync(() => {
          const limitedMillis = toDelayMillis(limited)
          core.add(key, priority, after === 0 || limitedMillis < after ? limitedMillis : after)
        }))
    }
    const takeWithPriority = core.takeEffect(shutdownError)
    const service: PriorityWorkqueue.PriorityWorkqueue.Service = {
      name: options.name,
      addWithOptions,
      add: (key) => Effect.sync(() => core.add(key, 0, 0)),
      addAfter: (key, delay) => Effect.sync(() => core.add(key, 0, toDelayMillis(delay))),
      addRateLimited: (key) => addWithOptions(key, { rateLimited: true }),
      take: Effect.map(takeWithPriority, (taken) => taken.key),
      takeWithPriority,
      ...commonOperations(core)
    }
    return service
  })
