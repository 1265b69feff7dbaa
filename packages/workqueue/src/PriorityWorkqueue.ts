/**
 * controller-runtime's priority queue as an alternative `Workqueue` Layer.
 *
 * Rules (each one is tested):
 * - Ready keys are handed out highest priority first, FIFO within a
 *   priority (by first add at that priority: a key raised to a higher
 *   priority queues behind the keys already there, as in controller-runtime).
 * - Re-adding a waiting key merges: the item keeps the **maximum** priority
 *   and the **minimum** ready time — so, unlike the FIFO queue, an immediate
 *   `add` promotes a key that waits for a delayed retry.
 * - `addWithOptions({ rateLimited: true, after })` waits the smaller of the
 *   limiter's delay and `after` (when given).
 * - A key is never handed out twice before `done`; adds during processing
 *   are merged into one item that becomes takeable at `done`.
 * - Objects from the initial list and resync updates should enter at
 *   {@link LowPriority}, so that real changes after a restart are not stuck
 *   behind the whole cluster.
 * - Default limiter: `RateLimiter.priorityDefault` (exponential 5 ms → 1000 s).
 *
 * Shutdown, clamping of delays and metrics are as in `Workqueue`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/priorityWorkqueue.js"
import * as Workqueue from "./Workqueue.js"

/**
 * The priority for objects from the initial list and resync updates
 * (controller-runtime's `handler.LowPriority`).
 *
 * @since 0.1.0
 * @category constants
 */
export const LowPriority = -100

/**
 * The priority queue service; its Layer also provides `Workqueue`.
 *
 * @since 0.1.0
 * @category tags
 */
export class PriorityWorkqueue
  extends Context.Service<PriorityWorkqueue, PriorityWorkqueue.Service>()("@reconcile/workqueue/PriorityWorkqueue")
{}

/**
 * @since 0.1.0
 */
export declare namespace PriorityWorkqueue {
  /**
   * How to add a key.
   *
   * @since 0.1.0
   * @category models
   */
  export interface AddOptions extends internal.AddOptions {}

  /**
   * A key handed out by `takeWithPriority`, with the priority it was queued at.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Taken extends internal.Taken {}

  /**
   * A `Workqueue` that also adds with a priority (`addWithOptions`) and reports the priority of what it hands out
   * (`takeWithPriority`).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service extends Workqueue.Workqueue.Service, internal.Service {}
}

/**
 * Makes a priority queue whose background fibers live in the current scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: Workqueue.Workqueue.Options
) => Effect.Effect<PriorityWorkqueue.Service, never, Scope.Scope> = internal.make

/**
 * A Layer providing the priority queue as both `PriorityWorkqueue` and
 * `Workqueue`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Workqueue.Workqueue.Options): Layer.Layer<PriorityWorkqueue | Workqueue.Workqueue> =>
  Layer.effectContext(
    Effect.map(
      make(options),
      (queue) => Context.make(PriorityWorkqueue, queue).pipe(Context.add(Workqueue.Workqueue, queue))
    )
  )
