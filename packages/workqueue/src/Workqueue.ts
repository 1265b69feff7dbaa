/**
 * The deduplicating, delaying, rate-limited work queue of client-go, as an
 * Effect service.
 *
 * Rules (each one is tested):
 * - **Fair**: ready keys are handed out in FIFO order.
 * - **Stingy**: a key is never handed to two takers before `done`; adds of a
 *   key that is already waiting collapse into one.
 * - `add` while the key is being processed marks it dirty; `done` re-queues it
 *   exactly once.
 * - `addAfter(k, d)`: `d <= 0` (also NaN) is `add`; otherwise a delayed entry.
 *   Several delayed adds of one key keep the earliest ready time. An immediate
 *   `add` does not cancel a pending delayed entry: it fires later and collapses
 *   if the key is still waiting. Delays longer than 2³¹−1 ms (about 24.8 days,
 *   Node's longest timer), infinite ones included, are clamped to it.
 * - `addRateLimited(k)` is `addAfter(k, limiter.when(k))`; `forget(k)` clears
 *   the limiter's memory of `k`; `numRequeues(k)` reads it.
 * - `shutdown`: later adds are ignored; takers receive the remaining ready
 *   keys, then fail with `WorkqueueShutdown`. Pending delayed entries are
 *   dropped. `shutdownWithDrain` also waits until every in-flight key is `done`.
 * - `done` of a key that is not being processed is a no-op.
 *
 * All time comes from Effect's `Clock` (captured when the queue is made), so
 * `TestClock` drives delays in tests.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/workqueue.js"
import type * as RateLimiter from "./RateLimiter.js"
import type { WorkqueueShutdown } from "./WorkqueueError.js"

/**
 * The workqueue service. Both `Workqueue.layer` (client-go FIFO) and
 * `PriorityWorkqueue.layer` provide it, so a controller picks its queue by
 * swapping a Layer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Workqueue } from "@reconcile/workqueue"
 *
 * const program = Effect.gen(function*() {
 *   const queue = yield* Workqueue.make({ name: "demo" })
 *   yield* queue.add("default/web")
 *   const key = yield* queue.take
 *   yield* queue.done(key)
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class Workqueue extends Context.Service<Workqueue, Workqueue.Service>()("@reconcile/workqueue/Workqueue") {}

/**
 * @since 0.1.0
 */
export declare namespace Workqueue {
  /**
   * The operations of a workqueue. Keys are plain strings (a controller uses
   * `namespace/name`), compared by value.
   *
   * @since 0.1.0
   * @category models
   */
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
  }

  /**
   * Options of a queue.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    /** Name of the queue: the `name` label of its metrics. */
    readonly name: string
    /** The `controller` label of its metrics (defaults to `name`). */
    readonly controller?: string | undefined
    /**
     * The rate limiter behind `addRateLimited`: a `RateLimiter.Make` (made for
     * this queue) or a limiter already made. Defaults, in order, to the
     * `RateLimiter.Maker` in context (made for this queue), the `RateLimiter`
     * instance in context, a fresh `RateLimiter.controllerDefault`
     * (`RateLimiter.priorityDefault` for the priority queue).
     */
    readonly rateLimiter?: RateLimiter.Make | RateLimiter.RateLimiter.Service | undefined
  }

  /**
   * A queue constructor: `Workqueue.make`, `PriorityWorkqueue.make` or your own.
   *
   * @since 0.1.0
   * @category models
   */
  export type Make = (options: Options) => Effect.Effect<Service, never, Scope.Scope>
}

/**
 * The service a Layer provides to choose the queue constructor that
 * controllers use when their `queue` option names none. It holds a
 * constructor, not a queue: every controller makes its own queue with it.
 *
 * @since 0.1.0
 * @category tags
 */
export class Maker extends Context.Service<Maker, Workqueue.Make>()("@reconcile/workqueue/Workqueue/Maker") {}

/**
 * A Layer that makes every controller without a `queue` option build its
 * queue with `make` (each controller its own queue).
 *
 * @example
 * ```ts
 * import { PriorityWorkqueue, Workqueue } from "@reconcile/workqueue"
 *
 * const PriorityQueues = Workqueue.layerMaker(PriorityWorkqueue.make)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMaker = (make: Workqueue.Make): Layer.Layer<Maker> => Layer.succeed(Maker, make)

/**
 * Makes a queue whose background fibers live in the current scope; closing
 * the scope shuts it down.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Workqueue.Options) => Effect.Effect<Workqueue.Service, never, Scope.Scope> = internal.make

/**
 * A Layer providing a client-go FIFO `Workqueue`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Workqueue.Options): Layer.Layer<Workqueue> => Layer.effect(Workqueue, make(options))
