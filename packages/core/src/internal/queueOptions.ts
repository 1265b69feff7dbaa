import { PriorityWorkqueue, RateLimiter, Workqueue } from "@reconcile/workqueue"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Controller from "../Controller.js"

/**
 * A controller's queue constructor and rate limiter: the options first, then
 * the makers provided by Layers (`Workqueue.layerMaker`, `RateLimiter.layer`),
 * then the defaults (FIFO queue; `RateLimiter.priorityDefault` for the
 * priority queue, else `RateLimiter.controllerDefault`). The limiter is made
 * here, for this controller only.
 *
 * @internal
 */
export const resolve = (options: Controller.Options) =>
  Effect.gen(function*() {
    const makeQueue: Workqueue.Workqueue.Make = typeof options.queue === "function"
      ? options.queue
      : options.queue === "priority"
      ? PriorityWorkqueue.make
      : options.queue === "fifo"
      ? Workqueue.make
      : Option.getOrElse(yield* Effect.serviceOption(Workqueue.Maker), () => Workqueue.make)
    const priority = makeQueue === PriorityWorkqueue.make
    const limiter = yield* RateLimiter.resolve(
      options.rateLimiter,
      priority ? RateLimiter.priorityDefault : RateLimiter.controllerDefault
    )
    return { makeQueue, priority, limiter }
  })
