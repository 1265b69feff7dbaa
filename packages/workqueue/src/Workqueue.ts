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
 * - `inspect` reads what the queue holds (waiting, delayed with due times, in
 *   flight with start times) and changes nothing.
 *
 * All time comes from Effect's `Clock` (captured when the queue is made), so
 * `TestClock` drives delays in tests.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internalPriority from "./internal/priorityWorkqueue.js"
import * as internal from "./internal/workqueue.js"

/**
 * The workqueue service. Both `Workqueue.layer` (client-go FIFO) and
 * `PriorityWorkqueue.layer` provide it, so code that uses a queue picks one by
 * swapping a Layer. Controllers make their own queue from a {@link Make}.
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
  export interface Service extends internal.Service {}

  /**
   * Options of a queue.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options extends internal.Options {}

  /**
   * What a queue holds at one instant (`inspect`): keys waiting (in the order they will be handed out, with their
   * priority), delayed (soonest first, with their due time), in flight (with their start), and the keys in flight
   * that were added again meanwhile (`dirty`). Times are epoch milliseconds on the queue's `Clock`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Snapshot extends internal.Snapshot {}
}

/**
 * A FIFO queue to make: `make` builds a client-go queue, or one that behaves
 * as one (a wrapper of {@link make}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Fifo {
  readonly _tag: "Fifo"
  readonly make: (options: Workqueue.Options) => Effect.Effect<Workqueue.Service, never, Scope.Scope>
}

/**
 * A priority queue to make: `make` builds a `PriorityWorkqueue`, or a wrapper
 * of one. A controller gives it the priority queue's defaults (its default
 * limiter, the events' priorities).
 *
 * @since 0.1.0
 * @category models
 */
export interface Priority {
  readonly _tag: "Priority"
  readonly make: (options: Workqueue.Options) => Effect.Effect<internalPriority.Service, never, Scope.Scope>
}

/**
 * A queue to make, tagged with its kind: what a controller's `queue` option
 * and the {@link Maker} setting hold. The kind, not the identity of the
 * constructor, decides the defaults that go with it, so a wrapped constructor
 * keeps them.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PriorityWorkqueue, Workqueue } from "@reconcile/workqueue"
 *
 * const logged: Workqueue.Make = {
 *   _tag: "Priority",
 *   make: (options) => Effect.tap(PriorityWorkqueue.make(options), () => Effect.log(`queue ${options.name}`))
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Make = Fifo | Priority

/**
 * The setting that chooses the queue controllers make when their `queue`
 * option names none: a {@link Make}, not a queue (every controller makes its
 * own). A `Context.Reference` whose default is {@link fifo}; set it with
 * {@link layerMaker}.
 *
 * @since 0.1.0
 * @category references
 */
export const Maker: Context.Reference<Make> = Context.Reference<Make>("@reconcile/workqueue/Workqueue/Maker", {
  defaultValue: () => fifo
})

/**
 * A Layer that sets the {@link Maker}: every controller without a `queue`
 * option makes its queue with `make` (each controller its own queue).
 *
 * @example
 * ```ts
 * import { Workqueue } from "@reconcile/workqueue"
 *
 * const PriorityQueues = Workqueue.layerMaker(Workqueue.priority)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMaker = (make: Make): Layer.Layer<never> => Layer.succeed(Maker, make)

/**
 * Makes a queue whose background fibers live in the current scope; closing
 * the scope shuts it down.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Workqueue.Options) => Effect.Effect<Workqueue.Service, never, Scope.Scope> = internal.make

/**
 * The client-go FIFO queue to make ({@link make}): the default {@link Maker}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fifo: Fifo = { _tag: "Fifo", make }

/**
 * controller-runtime's priority queue to make (`PriorityWorkqueue.make`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const priority: Priority = { _tag: "Priority", make: internalPriority.make }

/**
 * A Layer providing a client-go FIFO `Workqueue`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Workqueue.Options): Layer.Layer<Workqueue> => Layer.effect(Workqueue, make(options))
