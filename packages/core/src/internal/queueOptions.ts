import { RateLimiter, Workqueue } from "@reconcile/workqueue"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * A controller's queue and rate limiter: the options first, then the settings
 * Layers provide (`Workqueue.Maker`, `RateLimiter.Maker`), whose defaults are
 * the FIFO queue and the queue kind's own limiter (`RateLimiter.priorityDefault`
 * for a priority queue, else `RateLimiter.controllerDefault`). The kind is the
 * queue's tag, so a wrapped priority constructor gets the priority defaults.
 * The limiter is made here, for this controller only. It reads the two options
 * of `Controller.RunOptions` that choose them.
 *
 * @internal
 */
export const resolve = (options: {
  readonly queue?: Workqueue.Make | undefined
  readonly rateLimiter?: RateLimiter.Make | undefined
}): Effect.Effect<{
  readonly makeQueue: (
    options: Workqueue.Workqueue.Options
  ) => Effect.Effect<Workqueue.Workqueue.Service, never, Scope.Scope>
  readonly priority: boolean
  readonly limiter: RateLimiter.RateLimiter
}> =>
  Effect.gen(function*() {
    const queue = options.queue ?? (yield* Workqueue.Maker)
    const priority = queue._tag === "Priority"
    const limiter = yield* RateLimiter.resolve(
      options.rateLimiter,
      priority ? RateLimiter.priorityDefault : RateLimiter.controllerDefault
    )
    return { makeQueue: queue.make, priority, limiter }
  })
