import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as RateLimiter from "../RateLimiter.js"
import type { WorkqueueShutdown } from "../WorkqueueError.js"
import { MAX_DELAY_MILLIS } from "./delay.js"
import { Heap, type HeapNode } from "./heap.js"
import type { QueueRecorder } from "./metrics.js"

/**
 * What a queue holds at one instant: `Workqueue.Workqueue.Snapshot`. Times are epoch ms on the queue's `Clock`.
 *
 * @internal
 */
export interface Snapshot {
  /** Keys ready to be taken, in the order they will be handed out (with their priority: 0 in a FIFO queue). */
  readonly waiting: ReadonlyArray<{ readonly key: string; readonly priority: number; readonly addedAt: number }>
  /** Keys with a pending delayed add (a retry, a `RequeueAfter`), soonest first, with when they are due. */
  readonly delayed: ReadonlyArray<{ readonly key: string; readonly priority: number; readonly dueAt: number }>
  /** Keys being processed (taken, not yet `done`), with when they were handed out. */
  readonly inFlight: ReadonlyArray<{ readonly key: string; readonly startedAt: number }>
  /** Keys in flight that were added again meanwhile: they are queued again at `done`. */
  readonly dirty: ReadonlyArray<string>
}

/** A fiber blocked in `take`; resumed with an item, or `undefined` on shutdown. @internal */
type Taker<T> = (item: T | undefined) => void

interface Delayed extends HeapNode {
  readonly key: string
  readyAt: number
  readonly seq: number
}

const lessDelayed = (a: Delayed, b: Delayed): boolean =>
  a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq)

/**
 * What both queue flavours share: blocked takers, the delayed-add heap and the
 * fiber that moves due entries into the queue, in-flight bookkeeping with its
 * metrics, and shutdown with or without drain.
 *
 * All state is plain mutable JavaScript touched only from synchronous code, so
 * every operation is atomic with respect to other fibers.
 *
 * @internal
 */
export abstract class QueueCore<T> {
  shuttingDown = false
  /** Number of keys handed out and not yet `done`. */
  protected inFlight = 0
  private readonly takers = new Set<Taker<T>>()
  private readonly drainWaiters = new Set<() => void>()
  private readonly delayed = new Heap<Delayed>(lessDelayed)
  private readonly delayedByKey = new Map<string, Delayed>()
  private delayedSeq = 0
  /** `fireDue` is moving due entries into the queue: `notify` waits for the end of the batch. */
  private firing = false
  private wake: (() => void) | undefined = undefined
  /** The notifier fiber is due to hand ready items to blocked takers (see {@link signal}). */
  private notifyPending = false
  private notifierWake: (() => void) | undefined = undefined
  private busyWake: (() => void) | undefined = undefined
  private depth = 0
  private readonly origin: number

  constructor(
    readonly name: string,
    readonly clock: Clock.Clock,
    readonly limiter: RateLimiter.RateLimiter,
    /** The queue's series, in the registry of the fiber that made the queue. */
    readonly metrics: QueueRecorder
  ) {
    this.origin = clock.currentTimeMillisUnsafe()
  }

  /** Removes the next ready item and records it as processing; `undefined` when none is ready. */
  protected abstract tryTake(): T | undefined
  /** A delayed entry for `key` is due. */
  protected abstract onDelayedReady(key: string): void
  /** Number of items ready to be taken. */
  abstract readyLength(): number
  /**
   * Ends the processing of `key` (re-queueing it if it was re-added meanwhile, without handing it out yet) and
   * returns when (ms) it was handed out, or -1 when it is not being processed.
   */
  protected abstract finish(key: string): number
  /** Calls `f` with the time (ms) each key in flight was handed out. */
  protected abstract forEachInFlight(f: (startedAt: number) => void): void

  /** How long (ms) `key` waited in the queue before the processing in progress started; -1 when not processing. */
  abstract waited(key: string): number

  /**
   * The clock's time in ms, relative to when the queue was made: small
   * integers stay unboxed (V8 small integers) in the hot-path maps.
   */
  now(): number {
    return this.clock.currentTimeMillisUnsafe() - this.origin
  }

  // --- metrics ------------------------------------------------------------

  /** Records an add that counts (the key was not already waiting). */
  protected recordAdd(): void {
    this.metrics.adds(1)
    this.metrics.depth(++this.depth)
  }

  /** Records that a key added at `addedAt` (ms) is handed to a taker; returns the time (ms) it starts processing. */
  protected recordTake(addedAt: number): number {
    const now = this.now()
    this.metrics.depth(--this.depth)
    this.metrics.queueDuration((now - addedAt) / 1000)
    if (++this.inFlight === 1 && this.busyWake !== undefined) {
      const wake = this.busyWake
      this.busyWake = undefined
      wake()
    }
    return now
  }

  // --- taking -------------------------------------------------------------

  /**
   * Items became ready while fibers are blocked in `take`: lets the notifier
   * fiber hand them out once the calling fiber yields, rather than resuming a
   * taker inside the caller's `add` or `done`. A taker resumed there runs
   * nested in the caller, takes its one item, and blocks again before the
   * caller adds the next: a suspension per item. Deferred, a burst of adds is
   * handed out together and each woken taker keeps taking without blocking.
   * Ready items stay in the queue until then, so an interrupted or late taker
   * loses nothing, and a fiber calling `take` meanwhile gets them (FIFO).
   */
  protected signal(): void {
    if (this.notifyPending || this.firing || this.takers.size === 0) return
    this.notifyPending = true
    const wake = this.notifierWake
    if (wake !== undefined) {
      this.notifierWake = undefined
      wake()
    }
  }

  /** Hands ready items to blocked takers, oldest taker first. */
  protected notify(): void {
    // While due delayed entries are being moved (`fireDue`), hand nothing out: once they are all in, the takers get
    // the best of them (a priority queue: highest priority first, as controller-runtime moves every due item before
    // handing any out).
    if (this.firing) return
    while (this.takers.size > 0) {
      const item = this.tryTake()
      if (item === undefined) return
      const taker = this.takers.values().next().value as Taker<T>
      this.takers.delete(taker)
      taker(item)
    }
  }

  /**
   * Blocks until an item is ready; fails with `shutdown` once the queue is shut down and empty. The taker gets
   * `project(item)`, computed as the item is handed out (no further step on the taker's fiber).
   */
  takeEffect<A>(
    shutdown: Effect.Effect<never, WorkqueueShutdown>,
    project: (item: T) => A
  ): Effect.Effect<A, WorkqueueShutdown> {
    return Effect.suspend(() => {
      const item = this.tryTake()
      if (item !== undefined) return Effect.succeed(project(item))
      if (this.shuttingDown) return shutdown
      return Effect.callback<A, WorkqueueShutdown>((resume) => {
        const taker: Taker<T> = (item) => resume(item === undefined ? shutdown : Effect.succeed(project(item)))
        this.takers.add(taker)
        return Effect.sync(() => {
          this.takers.delete(taker)
        })
      })
    })
  }

  /** Marks `key` done; a key that is not being processed is ignored. */
  done(key: string): void {
    const started = this.finish(key)
    if (started < 0) return
    this.inFlight--
    this.metrics.workDuration((this.now() - started) / 1000)
    this.signal()
    if (this.inFlight === 0 && this.drainWaiters.size > 0) {
      for (const resolve of this.drainWaiters) resolve()
      this.drainWaiters.clear()
    }
  }

  // --- delays -------------------------------------------------------------

  /** Schedules `key` to become ready at `readyAt`; several schedules of one key keep the earliest. */
  protected scheduleAt(key: string, readyAt: number): void {
    const existing = this.delayedByKey.get(key)
    if (existing !== undefined) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt
        this.delayed.fix(existing)
        if (this.delayed.peek() === existing) this.kick()
      }
      return
    }
    const node: Delayed = { key, readyAt, seq: this.delayedSeq++, heapIndex: -1 }
    this.delayed.push(node)
    this.delayedByKey.set(key, node)
    if (this.delayed.peek() === node) this.kick()
  }

  /** Drops a pending delayed entry of `key`, if any. */
  protected cancelDelayed(key: string): void {
    const node = this.delayedByKey.get(key)
    if (node === undefined) return
    this.delayedByKey.delete(key)
    this.delayed.remove(node)
  }

  /** Number of keys with a pending delayed entry. */
  delayedLength(): number {
    return this.delayed.size
  }

  /** Calls `f` with each key that has a pending delayed entry and when it is due (epoch ms on the queue's clock). */
  forEachDelayed(f: (key: string, dueAt: number) => void): void {
    for (const node of this.delayedByKey.values()) f(node.key, this.origin + node.readyAt)
  }

  /** A time of this queue (ms since it was made, see {@link now}) as epoch ms on its clock. */
  epochOf(millis: number): number {
    return this.origin + millis
  }

  /** What the queue holds now: `Workqueue.Workqueue.Snapshot` (see `Service.inspect`). */
  abstract snapshot(): Snapshot

  private kick(): void {
    const wake = this.wake
    if (wake !== undefined) {
      this.wake = undefined
      wake()
    }
  }

  /** Moves every due entry into the queue; returns ms until the next one, or -1 if none. */
  private fireDue(): number {
    const now = this.now()
    let moved = false
    this.firing = true
    try {
      for (;;) {
        const next = this.delayed.peek()
        if (next === undefined || next.readyAt > now) break
        this.delayed.pop()
        this.delayedByKey.delete(next.key)
        this.onDelayedReady(next.key)
        moved = true
      }
    } finally {
      this.firing = false
    }
    // Handing items out may schedule new delayed entries: the next wait is read after it.
    if (moved) this.notify()
    const next = this.delayed.peek()
    return next === undefined ? -1 : Math.max(0, next.readyAt - now)
  }

  private readonly waitForWake: Effect.Effect<void> = Effect.callback<void>((resume) => {
    const wake = () => resume(Effect.void)
    this.wake = wake
    return Effect.sync(() => {
      if (this.wake === wake) this.wake = undefined
    })
  })

  /** The fiber that turns delayed entries into adds; ends at shutdown. */
  readonly delayLoop: Effect.Effect<void> = Effect.suspend(() => {
    if (this.shuttingDown) return Effect.void
    const wait = this.fireDue()
    const sleep = wait < 0
      ? this.waitForWake
      : Effect.raceFirst(this.clock.sleep(Duration.millis(Math.min(wait, MAX_DELAY_MILLIS))), this.waitForWake)
    return Effect.andThen(sleep, this.delayLoop)
  })

  private readonly waitForSignal: Effect.Effect<void> = Effect.suspend(() =>
    this.notifyPending ? Effect.void : Effect.callback<void>((resume) => {
      const wake = () => resume(Effect.void)
      this.notifierWake = wake
      return Effect.sync(() => {
        if (this.notifierWake === wake) this.notifierWake = undefined
      })
    })
  )

  private readonly notifyNow: Effect.Effect<void> = Effect.sync(() => {
    this.notifyPending = false
    this.notify()
  })

  /**
   * The fiber that hands ready items to blocked takers after a {@link signal}:
   * woken inside the signalling operation, it yields first, so it runs once
   * the signalling fiber yields. Ends at shutdown.
   */
  readonly notifyLoop: Effect.Effect<void> = Effect.suspend(() =>
    this.shuttingDown
      ? Effect.void
      : Effect.andThen(
        this.waitForSignal,
        Effect.andThen(Effect.yieldNow, Effect.andThen(this.notifyNow, this.notifyLoop))
      )
  )

  // --- in-flight metrics ----------------------------------------------------

  /** Updates `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`. */
  updateUnfinishedWork(): void {
    const now = this.now()
    let total = 0
    let longest = 0
    this.forEachInFlight((started) => {
      const elapsed = (now - started) / 1000
      total += elapsed
      if (elapsed > longest) longest = elapsed
    })
    this.metrics.unfinishedWork(total)
    this.metrics.longestRunning(longest)
  }

  /**
   * Refreshes the in-flight gauges every `period` while keys are in flight,
   * and sleeps without ticking while none is (so idle queues cost nothing and
   * large `TestClock` jumps stay cheap).
   */
  unfinishedWorkLoop(period: Duration.Duration): Effect.Effect<void> {
    const waitBusy = Effect.callback<void>((resume) => {
      const wake = () => resume(Effect.void)
      this.busyWake = wake
      return Effect.sync(() => {
        if (this.busyWake === wake) this.busyWake = undefined
      })
    })
    const loop: Effect.Effect<void> = Effect.suspend(() => {
      this.updateUnfinishedWork()
      return Effect.andThen(this.inFlight === 0 ? waitBusy : this.clock.sleep(period), loop)
    })
    return loop
  }

  // --- shutdown -------------------------------------------------------------

  shutdown(): void {
    if (this.shuttingDown) return
    this.shuttingDown = true
    this.delayed.clear()
    this.delayedByKey.clear()
    this.kick()
    // Ready items not yet handed to blocked takers (see `signal`) go to them now; the takers still blocked after
    // that have nothing left to get and learn of the shutdown.
    this.notifyPending = false
    this.notify()
    const notifierWake = this.notifierWake
    if (notifierWake !== undefined) {
      this.notifierWake = undefined
      notifierWake()
    }
    const takers = Array.from(this.takers)
    this.takers.clear()
    for (const taker of takers) taker(undefined)
  }

  /** Waits until no key is being processed. */
  readonly awaitDrained: Effect.Effect<void> = Effect.suspend(() =>
    this.inFlight === 0 ? Effect.void : Effect.callback<void>((resume) => {
      const resolve = () => resume(Effect.void)
      this.drainWaiters.add(resolve)
      return Effect.sync(() => {
        this.drainWaiters.delete(resolve)
      })
    })
  )
}
