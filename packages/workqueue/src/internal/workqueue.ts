/**
 * The FIFO queue (client-go's), what both queue flavours share, and the queue's models: its `Service` and `Options`
 * are declared here, below the public modules, and `Workqueue.ts` names them. (`Workqueue.Priority` makes a priority
 * queue, whose service extends this one: declared in `Workqueue.ts` and `PriorityWorkqueue.ts`, the two would import
 * each other.)
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as RateLimiter from "../RateLimiter.js"
import { WorkqueueShutdown } from "../WorkqueueError.js"
import { QueueCore, type Snapshot } from "./core.js"
import { toDelayMillis } from "./delay.js"
import * as metrics from "./metrics.js"
import { Ring } from "./ring.js"

/** The operations of a queue: `Workqueue.Workqueue.Service` (see the module header). */
export interface Service {
  /** The queue's name, used as the `name` label of its metrics. */
  readonly name: string
  /** Marks `key` as needing processing. Ignored after shutdown. */
  readonly add: (key: string) => Effect.Effect<void>
  /** Adds `key` once `delay` has passed (at once when `delay <= 0`). Ignored after shutdown. */
  readonly addAfter: (key: string, delay: Duration.Input) => Effect.Effect<void>
  /** Adds `key` after the delay the rate limiter assigns to its next failure. */
  readonly addRateLimited: (key: string) => Effect.Effect<void>
  /** Clears the rate limiter's memory of `key` (its failure count). */
  readonly forget: (key: string) => Effect.Effect<void>
  /** How many failures the rate limiter has recorded for `key`. */
  readonly numRequeues: (key: string) => Effect.Effect<number>
  /**
   * How long `key` waited in the queue before the processing in progress started (from its first add since it was
   * last handed out); `None` when it is not being processed.
   */
  readonly queueWait: (key: string) => Effect.Effect<Option.Option<Duration.Duration>>
  /**
   * Waits for the next ready key and marks it as processing until `done`.
   * After shutdown it hands out the remaining keys, then fails with
   * `WorkqueueShutdown`.
   */
  readonly take: Effect.Effect<string, WorkqueueShutdown>
  /** Ends the processing of `key`; re-queues it once if it was added meanwhile. */
  readonly done: (key: string) => Effect.Effect<void>
  /** Number of keys ready to be taken (not counting delayed or in-flight keys). */
  readonly len: Effect.Effect<number>
  /** Stops accepting adds and releases blocked takers once the queue is empty. */
  readonly shutdown: Effect.Effect<void>
  /** `shutdown`, then waits until every in-flight key is `done`. */
  readonly shutdownWithDrain: Effect.Effect<void>
  /** Whether `shutdown` has been called. */
  readonly isShuttingDown: Effect.Effect<boolean>
  /**
   * What the queue holds now (read-only, O(keys)): the keys waiting (in the order they will be handed out), the
   * delayed ones with their due time, the ones in flight with their start, for an inspector or a debug endpoint.
   */
  readonly inspect: Effect.Effect<Snapshot>
}

/** What a queue holds at one instant: `Workqueue.Workqueue.Snapshot`. */
export type { Snapshot }

/** Options of a queue: `Workqueue.Workqueue.Options`. */
export interface Options {
  /** Name of the queue: the `name` label of its metrics. */
  readonly name: string
  /** The `controller` label of its metrics (defaults to `name`). */
  readonly controller?: string | undefined
  /**
   * The rate limiter behind `addRateLimited`: a `RateLimiter.Make` (made for
   * this queue) or a limiter already made. Defaults to the
   * `RateLimiter.Maker` setting (made for this queue), else a fresh
   * `RateLimiter.controllerDefault` (`RateLimiter.priorityDefault` for the
   * priority queue).
   */
  readonly rateLimiter?: RateLimiter.Make | RateLimiter.RateLimiter | undefined
}

/**
 * A key known to the FIFO queue: waiting (`addedAt >= 0`), being processed (`startedAt >= 0`), both (re-added
 * while processing: it goes back to the ring at `done`), or idle (neither: kept for the key's next add).
 */
interface Entry {
  readonly key: string
  /** When the key was first added since it was last handed out (ms); -1 when it is not waiting (not dirty). */
  addedAt: number
  /** When the key was handed out (ms); -1 when it is not being processed. */
  startedAt: number
  /** How long it waited before it was last handed out (ms). */
  waited: number
  /** Its index in `running` while it is being processed. */
  slot: number
}

/** Up to this many keys in flight, `done` finds its entry by scanning them rather than by a map lookup. */
const SCAN_LIMIT = 16

/**
 * Idle entries are kept until there are more than this many, and more than there are busy ones; then they are
 * all dropped. Controllers add the same keys again and again: the next add of a finished key finds its entry
 * instead of inserting a new one (and `done` does not delete it), which halves the map writes per cycle. Dropping
 * them in bulk when they outnumber the rest keeps the memory bounded and the sweep's cost amortized: O(1) per key.
 *
 * @internal
 */
export const IDLE_LIMIT = 16_384

/**
 * Takes a processed entry out of its queue's `running` list (the last one moves into its slot) and marks it not
 * processing; returns when its processing started.
 *
 * @internal
 */
export const stopRunning = <E extends { slot: number; startedAt: number }>(running: Array<E>, entry: E): number => {
  const last = running.pop()!
  if (last !== entry) {
    running[entry.slot] = last
    last.slot = entry.slot
  }
  const started = entry.startedAt
  entry.startedAt = -1
  return started
}

/**
 * client-go's queue: a FIFO ready ring, and its `dirty` (waiting or re-added while processing) and `processing`
 * sets, kept as the two times of one entry per key (one map lookup per operation; the ring holds the entries).
 *
 * @internal
 */
export class FifoQueue extends QueueCore<string> {
  private readonly queue = new Ring<Entry>()
  /** Every key that is waiting or being processed, and idle keys (see {@link IDLE_LIMIT}). */
  private readonly entries = new Map<string, Entry>()
  /** The entries being processed (as many as there are workers, typically a handful). */
  private readonly running: Array<Entry> = []
  /** How many entries are idle. */
  private idle = 0

  add(key: string): void {
    if (this.shuttingDown) return
    const entry = this.entries.get(key)
    if (entry === undefined) {
      this.recordAdd()
      const created: Entry = { key, addedAt: this.now(), startedAt: -1, waited: 0, slot: -1 }
      this.entries.set(key, created)
      this.queue.push(created)
      this.signal()
    } else if (entry.addedAt < 0) {
      this.recordAdd()
      entry.addedAt = this.now()
      if (entry.startedAt < 0) {
        // Idle: waiting again.
        this.idle--
        this.queue.push(entry)
        this.signal()
      }
      // Else being processed: marked dirty, queued again at `done`.
    }
  }

  addAfter(key: string, delayMillis: number): void {
    if (this.shuttingDown) return
    this.metrics.retries(1)
    if (delayMillis <= 0) return this.add(key)
    this.scheduleAt(key, this.now() + delayMillis)
  }

  protected tryTake(): string | undefined {
    const entry = this.queue.shift()
    if (entry === undefined) return undefined
    entry.startedAt = this.recordTake(entry.addedAt)
    entry.waited = entry.startedAt - entry.addedAt
    entry.addedAt = -1
    entry.slot = this.running.length
    this.running.push(entry)
    return entry.key
  }

  protected onDelayedReady(key: string): void {
    this.add(key)
  }

  protected finish(key: string): number {
    const running = this.running
    let entry: Entry | undefined
    if (running.length <= SCAN_LIMIT) {
      for (let i = 0; i < running.length; i++) {
        if (running[i]!.key === key) {
          entry = running[i]
          break
        }
      }
    } else {
      entry = this.entries.get(key)
    }
    if (entry === undefined || entry.startedAt < 0) return -1
    const started = stopRunning(running, entry)
    if (entry.addedAt >= 0) {
      this.queue.push(entry)
    } else if (++this.idle > IDLE_LIMIT && this.idle * 2 > this.entries.size) {
      this.dropIdle()
    }
    return started
  }

  /** Drops every idle entry. */
  private dropIdle(): void {
    for (const entry of this.entries.values()) {
      if (entry.addedAt < 0 && entry.startedAt < 0) this.entries.delete(entry.key)
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
    return this.queue.length
  }

  snapshot(): Snapshot {
    const waiting = Array.from(this.queue, (e) => ({ key: e.key, priority: 0, addedAt: this.epochOf(e.addedAt) }))
    const delayed: Array<{ key: string; priority: number; dueAt: number }> = []
    this.forEachDelayed((key, dueAt) => delayed.push({ key, priority: 0, dueAt }))
    delayed.sort((a, b) => a.dueAt - b.dueAt)
    return {
      waiting,
      delayed,
      inFlight: this.running.map((e) => ({ key: e.key, startedAt: this.epochOf(e.startedAt) })),
      dirty: this.running.filter((e) => e.addedAt >= 0).map((e) => e.key)
    }
  }
}

/** How often the in-flight gauges are refreshed, as in client-go. @internal */
export const UNFINISHED_WORK_UPDATE_PERIOD = Duration.millis(500)

const shutdownError = Effect.fail(new WorkqueueShutdown())

const identity = <A>(a: A): A => a

/** Forks the queue's background fibers into the scope and shuts it down when the scope closes. @internal */
export const startCore = <T>(core: QueueCore<T>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    yield* Effect.addFinalizer(() => Effect.sync(() => core.shutdown()))
    yield* Effect.forkScoped(core.delayLoop)
    yield* Effect.forkScoped(core.notifyLoop)
    yield* Effect.forkScoped(core.unfinishedWorkLoop(UNFINISHED_WORK_UPDATE_PERIOD))
  })

/** Resolves the options shared by both queue flavours. @internal */
export const resolveOptions = (
  options: Options,
  defaultLimiter: Effect.Effect<RateLimiter.RateLimiter>
) =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const limiter = yield* RateLimiter.resolve(options.rateLimiter, defaultLimiter)
    const recorder = metrics.recorder(
      metrics.make(options.name, options.controller ?? options.name),
      metrics.recordingContext(yield* Metric.MetricRegistry)
    )
    return { clock, limiter, recorder }
  })

/**
 * The operations both queue flavours implement the same way on their core.
 *
 * @internal
 */
export const commonOperations = <T>(core: QueueCore<T>) => ({
  forget: (key: string) => core.limiter.forget(key),
  numRequeues: (key: string) => core.limiter.numRequeues(key),
  queueWait: (key: string) =>
    Effect.sync(() => {
      const waited = core.waited(key)
      return waited < 0 ? Option.none() : Option.some(Duration.millis(waited))
    }),
  done: (key: string) => Effect.sync(() => core.done(key)),
  len: Effect.sync(() => core.readyLength()),
  shutdown: Effect.sync(() => core.shutdown()),
  shutdownWithDrain: Effect.andThen(Effect.sync(() => core.shutdown()), core.awaitDrained),
  isShuttingDown: Effect.sync(() => core.shuttingDown),
  inspect: Effect.sync(() => core.snapshot())
})

/** @internal */
export const make = (
  options: Options
): Effect.Effect<Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { clock, limiter, recorder } = yield* resolveOptions(
      options,
      RateLimiter.controllerDefault
    )
    const core = new FifoQueue(options.name, clock, limiter, recorder)
    yield* startCore(core)
    const addAfter = (key: string, delay: number) => Effect.sync(() => core.addAfter(key, delay))
    const service: Service = {
      name: options.name,
      add: (key) => Effect.sync(() => core.add(key)),
      addAfter: (key, delay) => addAfter(key, toDelayMillis(delay)),
      addRateLimited: (key) => Effect.flatMap(limiter.when(key), (delay) => addAfter(key, toDelayMillis(delay))),
      take: core.takeEffect(shutdownError, identity),
      ...commonOperations(core)
    }
    return service
  })
