/**
 * controller-runtime's priority queue, and its models (`AddOptions`, `Taken`, `Service`), which
 * `PriorityWorkqueue.ts` names: declared here, below `Workqueue.ts` (whose `Priority` makes this queue), so that the
 * two public modules need not import each other.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as RateLimiter from "../RateLimiter.js"
import { WorkqueueShutdown } from "../WorkqueueError.js"
import { QueueCore, type Snapshot } from "./core.js"
import { toDelayMillis } from "./delay.js"
import { Heap, type HeapNode } from "./heap.js"
import {
  commonOperations,
  IDLE_LIMIT,
  type Options,
  resolveOptions,
  type Service as WorkqueueService,
  startCore,
  stopRunning
} from "./workqueue.js"

/** How to add a key: `PriorityWorkqueue.PriorityWorkqueue.AddOptions`. */
export interface AddOptions {
  /** Delay before the key becomes ready. */
  readonly after?: Duration.Input | undefined
  /** Use the rate limiter's delay (the smaller one wins when `after` is also given). */
  readonly rateLimited?: boolean | undefined
  /** Priority, default 0; higher is served first. */
  readonly priority?: number | undefined
}

/** A key handed out by `takeWithPriority`: `PriorityWorkqueue.PriorityWorkqueue.Taken`. */
export interface Taken {
  readonly key: string
  readonly priority: number
}

/** The priority queue's operations: `PriorityWorkqueue.PriorityWorkqueue.Service`. */
export interface Service extends WorkqueueService {
  /** Adds `key` with a delay, rate limiting and/or a priority. */
  readonly addWithOptions: (key: string, options?: AddOptions) => Effect.Effect<void>
  /** Like `take`, and also reports the key's priority. */
  readonly takeWithPriority: Effect.Effect<Taken, WorkqueueShutdown>
}

/**
 * A key known to the queue: waiting (`waiting`; ready when `readyAt === 0`, else due at `readyAt`), being processed
 * (`startedAt >= 0`), both (re-added while processing: it becomes takeable at `done`), or idle (neither: kept for
 * the key's next add, see {@link IDLE_LIMIT}). The item fields describe the waiting item only.
 */
interface Entry extends HeapNode {
  readonly key: string
  waiting: boolean
  priority: number
  readyAt: number
  /** Arrival order at the item's priority: FIFO within a priority. */
  seq: number
  /** When the item became ready (ms), for the queue-duration metric. */
  addedAt: number
  /** When the key was handed out (ms); -1 when it is not being processed. */
  startedAt: number
  /** How long it waited before it was last handed out (ms). */
  waited: number
  /** Its index in `running` while it is being processed. */
  slot: number
}

/** Higher priority first, then first added first. */
const lessItem = (a: Entry, b: Entry): boolean =>
  a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq)

/**
 * controller-runtime's priority queue: every waiting key has one item that
 * merges later adds (max priority, min ready time). Ready items that are not
 * in flight sit in a heap ordered by priority, then by first add. A key's
 * waiting item and its in-flight state share one entry (one map lookup per
 * operation); an item handed out is no longer waiting, so a later add of its
 * key starts a new item.
 *
 * @internal
 */
export class PriorityQueue extends QueueCore<Entry> {
  /** Every key that is waiting or being processed, and idle keys. */
  private readonly entries = new Map<string, Entry>()
  private readonly ready = new Heap<Entry>(lessItem)
  /** The entries being processed. */
  private readonly running: Array<Entry> = []
  /** How many entries are idle. */
  private idle = 0
  private seq = 0

  add(key: string, priority: number, delayMillis: number): void {
    if (this.shuttingDown) return
    if (delayMillis > 0) this.metrics.retries(1)
    let entry = this.entries.get(key)
    // The clock is read only when the add changes a ready time (not for an add that merges into a ready item).
    if (entry === undefined || !entry.waiting) {
      const now = this.now()
      const readyAt = delayMillis > 0 ? now + delayMillis : 0
      if (entry === undefined) {
        entry = {
          key,
          waiting: true,
          priority,
          readyAt,
          seq: this.seq++,
          addedAt: now,
          startedAt: -1,
          waited: 0,
          slot: -1,
          heapIndex: -1
        }
        this.entries.set(key, entry)
      } else {
        if (entry.startedAt < 0) this.idle--
        entry.waiting = true
        entry.priority = priority
        entry.readyAt = readyAt
        entry.seq = this.seq++
        entry.addedAt = now
      }
      if (readyAt === 0) this.becomeReady(entry, now)
      else this.scheduleAt(key, readyAt)
      return
    }
    if (priority > entry.priority) {
      entry.priority = priority
      // As controller-runtime: a key raised to a higher priority queues behind the keys already at that priority.
      entry.seq = this.seq++
      if (entry.heapIndex >= 0) this.ready.fix(entry)
    }
    if (entry.readyAt === 0) return
    const now = this.now()
    const readyAt = delayMillis > 0 ? now + delayMillis : 0
    if (readyAt === 0 || readyAt < entry.readyAt) {
      if (readyAt === 0) {
        this.cancelDelayed(key)
        this.becomeReady(entry, now)
      } else {
        entry.readyAt = readyAt
        this.scheduleAt(key, readyAt)
      }
    }
  }

  private becomeReady(entry: Entry, now: number): void {
    entry.readyAt = 0
    entry.addedAt = now
    this.recordAdd()
    if (entry.startedAt >= 0) return
    this.ready.push(entry)
    this.signal()
  }

  /** The entry handed out: what the taker gets is read from it at once, before any later add of its key. */
  protected tryTake(): Entry | undefined {
    const entry = this.ready.pop()
    if (entry === undefined) return undefined
    entry.waiting = false
    entry.startedAt = this.recordTake(entry.addedAt)
    entry.waited = entry.startedAt - entry.addedAt
    entry.slot = this.running.length
    this.running.push(entry)
    return entry
  }

  protected onDelayedReady(key: string): void {
    const entry = this.entries.get(key)
    if (entry !== undefined && entry.waiting && entry.readyAt !== 0) this.becomeReady(entry, this.now())
  }

  protected finish(key: string): number {
    const entry = this.entries.get(key)
    if (entry === undefined || entry.startedAt < 0) return -1
    const started = stopRunning(this.running, entry)
    if (entry.waiting) {
      if (entry.readyAt === 0) this.ready.push(entry)
    } else if (++this.idle > IDLE_LIMIT && this.idle * 2 > this.entries.size) {
      this.dropIdle()
    }
    return started
  }

  /** Drops every idle entry. */
  private dropIdle(): void {
    for (const entry of this.entries.values()) {
      if (!entry.waiting && entry.startedAt < 0) this.entries.delete(entry.key)
    }
    this.idle = 0
  }

  protected forEachInFlight(f: (startedAt: number) => void): void {
    for (const entry of this.running) f(entry.startedAt)
  }

  waited(key: string): number {
    const entry = this.entries.get(key)
    return entry === undefined || entry.startedAt < 0 ? -1 : entry.waited
  }

  readyLength(): number {
    return this.ready.size
  }

  snapshot(): Snapshot {
    const waiting = this.ready.values().slice().sort((a, b) => lessItem(a, b) ? -1 : lessItem(b, a) ? 1 : 0)
      .map((e) => ({ key: e.key, priority: e.priority, addedAt: this.epochOf(e.addedAt) }))
    const delayed: Array<{ key: string; priority: number; dueAt: number }> = []
    for (const e of this.entries.values()) {
      if (e.waiting && e.readyAt !== 0) {
        delayed.push({ key: e.key, priority: e.priority, dueAt: this.epochOf(e.readyAt) })
      }
    }
    delayed.sort((a, b) => a.dueAt - b.dueAt)
    return {
      waiting,
      delayed,
      inFlight: this.running.map((e) => ({ key: e.key, startedAt: this.epochOf(e.startedAt) })),
      dirty: this.running.filter((e) => e.waiting && e.readyAt === 0).map((e) => e.key)
    }
  }
}

const shutdownError = Effect.fail(new WorkqueueShutdown())

/** @internal */
export const make = (
  options: Options
): Effect.Effect<Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { clock, limiter, recorder } = yield* resolveOptions(options, RateLimiter.priorityDefault)
    const core = new PriorityQueue(options.name, clock, limiter, recorder)
    yield* startCore(core)
    const addWithOptions = (key: string, opts: AddOptions = {}) => {
      const priority = opts.priority ?? 0
      const after = opts.after === undefined ? 0 : toDelayMillis(opts.after)
      if (!opts.rateLimited) return Effect.sync(() => core.add(key, priority, after))
      return Effect.flatMap(limiter.when(key), (limited) =>
        Effect.sync(() => {
          const limitedMillis = toDelayMillis(limited)
          core.add(key, priority, after === 0 || limitedMillis < after ? limitedMillis : after)
        }))
    }
    const takeWithPriority = core.takeEffect(
      shutdownError,
      (item): Taken => ({ key: item.key, priority: item.priority })
    )
    const service: Service = {
      name: options.name,
      addWithOptions,
      add: (key) => Effect.sync(() => core.add(key, 0, 0)),
      addAfter: (key, delay) => Effect.sync(() => core.add(key, 0, toDelayMillis(delay))),
      addRateLimited: (key) => addWithOptions(key, { rateLimited: true }),
      take: core.takeEffect(shutdownError, (item) => item.key),
      takeWithPriority,
      ...commonOperations(core)
    }
    return service
  })
