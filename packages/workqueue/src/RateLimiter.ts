/**
 * Per-key rate limiters deciding how long a failed key waits before its next
 * attempt (client-go's `workqueue` rate limiters).
 *
 * A limiter is stateful: `when(key)` records a failure of `key` and returns
 * its delay. Every constructor is an `Effect` that creates fresh state when
 * run, so two controllers never share a key's failure count.
 *
 * | limiter | delay for the n-th failure (n from 0) |
 * |---|---|
 * | `exponential({ base, max })` | `min(base·2ⁿ, max)`, overflow-safe; `forget` resets n |
 * | `bucket({ perSecond, burst })` | token bucket, starts full; reservations are not refunded |
 * | `fastSlow({ fast, slow, maxFast })` | `fast` for the first `maxFast` failures, then `slow` |
 * | `maxOf(a, b, …)` | the largest (`when` is called on every one) |
 * | `withMaxWait(l, max)` | `min(l, max)` |
 *
 * Durations are clamped: negative or NaN inputs count as zero.
 *
 * **A limiter to make.** Every place that takes a limiter (`Workqueue.make`,
 * `PriorityWorkqueue.make`, `Controller` options, {@link layerMaker}) takes the
 * same type, {@link Make}: an Effect that creates a limiter with fresh state
 * each time it runs. The limiter a queue or controller uses is, in order: its
 * `rateLimiter` option; the {@link Maker} setting (a `Context.Reference`, set by
 * {@link layerMaker}), run once per queue, so that every queue and controller
 * has its own state; the queue's default ({@link controllerDefault}, or
 * {@link priorityDefault} for the priority queue). To share one limiter's state
 * between queues, make it once and set `Effect.succeed(limiter)` as the maker.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/rateLimiter.js"
import type { InvalidRateLimiterOptions } from "./WorkqueueError.js"

/**
 * A rate limiter: per-key failure counts and the delays they give. A limiter
 * made by a constructor of this module has fresh state; the queues and
 * controllers given the same instance share it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimiter {
  /** Records a failure of `key` and returns how long it must wait. */
  readonly when: (key: string) => Effect.Effect<Duration.Duration>
  /** Forgets the failures of `key`. */
  readonly forget: (key: string) => Effect.Effect<void>
  /** Number of failures recorded for `key`. */
  readonly numRequeues: (key: string) => Effect.Effect<number>
}

/**
 * A rate limiter to make: an Effect that creates a limiter with fresh state
 * each time it runs. Every constructor of this module is one. Its only
 * failure is invalid options, which a queue or controller turns into a defect
 * (static configuration, as an invalid `Duration` would be).
 *
 * @example
 * ```ts
 * import { RateLimiter } from "@reconcile/workqueue"
 *
 * const limiter: RateLimiter.Make = RateLimiter.bucket({ perSecond: 10, burst: 100 })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Make = Effect.Effect<RateLimiter, InvalidRateLimiterOptions>

/**
 * The limiter that queues and controllers make for themselves when their
 * options name none: a {@link Make}, not an instance, so each queue runs it
 * and no two queues share failure counts. A `Context.Reference` whose default,
 * `undefined`, means the queue's own default ({@link controllerDefault} for the
 * FIFO queue, {@link priorityDefault} for the priority queue); set it with
 * {@link layerMaker}.
 *
 * @since 0.1.0
 * @category references
 */
export const Maker: Context.Reference<Make | undefined> = Context.Reference<Make | undefined>(
  "@reconcile/workqueue/RateLimiter/Maker",
  { defaultValue: () => undefined }
)

/**
 * Options of {@link exponential}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExponentialOptions {
  readonly base: Duration.Input
  readonly max: Duration.Input
}

/**
 * Options of {@link bucket}: `perSecond` tokens refill per second, up to `burst`.
 *
 * @since 0.1.0
 * @category models
 */
export interface BucketOptions {
  readonly perSecond: number
  readonly burst: number
}

/**
 * Options of {@link fastSlow}.
 *
 * @since 0.1.0
 * @category models
 */
export interface FastSlowOptions {
  readonly fast: Duration.Input
  readonly slow: Duration.Input
  readonly maxFast: number
}

/**
 * Per-key exponential backoff: `min(base·2ⁿ, max)` for the n-th failure.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "@reconcile/workqueue"
 *
 * const limiter = RateLimiter.exponential({ base: "5 millis", max: "1000 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const exponential: (options: ExponentialOptions) => Effect.Effect<RateLimiter> = internal.exponential

/**
 * An overall token bucket shared by all keys: the first `burst` calls get no
 * delay, then one call per `1/perSecond`. Fails if `perSecond <= 0` or
 * `burst < 1`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bucket: (options: BucketOptions) => Effect.Effect<RateLimiter, InvalidRateLimiterOptions> = internal.bucket

/**
 * `fast` for the first `maxFast` failures of a key, `slow` afterwards.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fastSlow: (options: FastSlowOptions) => Effect.Effect<RateLimiter, InvalidRateLimiterOptions> =
  internal.fastSlow

/**
 * The largest delay of several limiters; every one records the failure.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "@reconcile/workqueue"
 *
 * const limiter = RateLimiter.maxOf(
 *   RateLimiter.exponential({ base: "5 millis", max: "1000 seconds" }),
 *   RateLimiter.bucket({ perSecond: 10, burst: 100 })
 * )
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const maxOf = <E, R>(
  ...limiters: ReadonlyArray<Effect.Effect<RateLimiter, E, R>>
): Effect.Effect<RateLimiter, E, R> => Effect.map(Effect.all(limiters), internal.maxOf)

/**
 * Caps the delays of a limiter at `max`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withMaxWait = <E, R>(
  limiter: Effect.Effect<RateLimiter, E, R>,
  max: Duration.Input
): Effect.Effect<RateLimiter, E, R> => Effect.map(limiter, (l) => internal.withMaxWait(l, max))

/**
 * controller-runtime's default for the FIFO queue:
 * `maxOf(exponential(5 ms, 1000 s), bucket(10/s, burst 100))`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const controllerDefault: Effect.Effect<RateLimiter> = maxOf(
  exponential({ base: "5 millis", max: "1000 seconds" }),
  Effect.orDie(bucket({ perSecond: 10, burst: 100 }))
)

/**
 * controller-runtime's default for the priority queue: `exponential(5 ms, 1000 s)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const priorityDefault: Effect.Effect<RateLimiter> = exponential({
  base: "5 millis",
  max: "1000 seconds"
})

/**
 * A Layer that sets the {@link Maker}: every queue and controller without a
 * `rateLimiter` option makes its limiter with `make` — each one its own, with
 * fresh state.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "@reconcile/workqueue"
 *
 * const Limits = RateLimiter.layerMaker(RateLimiter.exponential({ base: "1 second", max: "5 minutes" }))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMaker = (make: Make): Layer.Layer<never> => Layer.succeed(Maker, make)

/**
 * Resolves the limiter of a queue or controller: `option` (a {@link Make},
 * run now, or an instance, used as is); else the {@link Maker} setting, run
 * now; else `orElse`, run now. Invalid limiter options become a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (option: Make | RateLimiter | undefined, orElse: Make): Effect.Effect<RateLimiter> =>
  Effect.orDie(
    option !== undefined
      ? internal.isRateLimiter(option) ? Effect.succeed(option) : option
      : Effect.flatMap(Maker, (make) => make ?? orElse)
  )
