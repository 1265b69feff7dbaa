import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as RateLimiter from "../RateLimiter.js"
import { InvalidRateLimiterOptions } from "../WorkqueueError.js"

type Service = RateLimiter.RateLimiter

/**
 * The synchronous `forget` of the limiters made here, so that `maxOf` forgets a key in one step (a controller
 * forgets the key of every successful reconcile) rather than through `Effect.forEach`. It is trusted only while the
 * limiter's `forget` is still the one it was made with (a copy with another `forget` keeps the symbol).
 */
const forgetSync: unique symbol = Symbol.for("@reconcile/workqueue/RateLimiter/forgetSync")

interface SyncForget {
  readonly [forgetSync]: { readonly forget: Service["forget"]; readonly run: (key: string) => void }
}

const syncForgetOf = (limiter: Service): ((key: string) => void) | undefined => {
  const sync = forgetSync in limiter ? (limiter as Service & SyncForget)[forgetSync] : undefined
  return sync !== undefined && sync.forget === limiter.forget ? sync.run : undefined
}

/** A limiter whose `forget` runs `run` synchronously. */
const withSyncForget = (limiter: Omit<Service, "forget">, run: (key: string) => void): Service & SyncForget => {
  const forget = (key: string) => Effect.sync(() => run(key))
  return { ...limiter, forget, [forgetSync]: { forget, run } }
}

const millisOf = (input: Duration.Input): number => {
  const millis = Duration.toMillis(input)
  return Number.isNaN(millis) || millis < 0 ? 0 : millis
}

/** A limiter whose delay depends only on a per-key failure count. @internal */
const perKey = (delayFor: (failures: number) => number): Service => {
  const failures = new Map<string, number>()
  return withSyncForget({
    when: (key) =>
      Effect.sync(() => {
        const n = failures.get(key) ?? 0
        failures.set(key, n + 1)
        return Duration.millis(delayFor(n))
      }),
    numRequeues: (key) => Effect.sync(() => failures.get(key) ?? 0)
  }, (key) => void failures.delete(key))
}

/** @internal */
export const exponential = (options: RateLimiter.ExponentialOptions): Effect.Effect<Service> =>
  Effect.sync(() => {
    const base = millisOf(options.base)
    const max = millisOf(options.max)
    // base·2ⁿ overflows to Infinity for large n, and min() then caps it: no overflow to handle.
    return perKey((n) => Math.min(base * Math.pow(2, n), max))
  })

/** @internal */
export const fastSlow = (
  options: RateLimiter.FastSlowOptions
): Effect.Effect<Service, InvalidRateLimiterOptions> =>
  Number.isInteger(options.maxFast) && options.maxFast >= 0
    ? Effect.sync(() => {
      const fast = millisOf(options.fast)
      const slow = millisOf(options.slow)
      return perKey((n) => (n < options.maxFast ? fast : slow))
    })
    : Effect.fail(
      new InvalidRateLimiterOptions({
        limiter: "fastSlow",
        option: "maxFast",
        reason: `must be a non-negative integer, got ${options.maxFast}`
      })
    )

/** @internal */
export const bucket = (options: RateLimiter.BucketOptions): Effect.Effect<Service, InvalidRateLimiterOptions> => {
  const { burst, perSecond } = options
  if (!(perSecond > 0) || !Number.isFinite(perSecond)) {
    return Effect.fail(
      new InvalidRateLimiterOptions({
        limiter: "bucket",
        option: "perSecond",
        reason: `must be a finite number > 0, got ${perSecond}`
      })
    )
  }
  if (!Number.isInteger(burst) || burst < 1) {
    return Effect.fail(
      new InvalidRateLimiterOptions({
        limiter: "bucket",
        option: "burst",
        reason: `must be an integer >= 1, got ${burst}`
      })
    )
  }
  return Effect.clockWith((clock) =>
    Effect.sync((): Service => {
      // Token bucket as golang.org/x/time/rate's Reserve: starts full, every
      // call takes a token (tokens may go negative), the delay is the wait
      // until the deficit refills. Reservations are never refunded.
      let tokens = burst
      let last = clock.currentTimeMillisUnsafe()
      const forget = () => Effect.void
      const service: Service & SyncForget = {
        when: () =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const now = clock.currentTimeMillisUnsafe()
              if (now > last) {
                tokens = Math.min(burst, tokens + ((now - last) / 1000) * perSecond)
                last = now
              }
              tokens -= 1
              return Duration.millis(tokens >= 0 ? 0 : (-tokens / perSecond) * 1000)
            })
          ),
        forget,
        numRequeues: () => Effect.succeed(0),
        [forgetSync]: { forget, run: () => {} }
      }
      return service
    })
  )
}

/** @internal */
export const maxOf = (limiters: ReadonlyArray<Service>): Service => {
  const limiter: Omit<Service, "forget"> = {
    when: (key) =>
      Effect.map(
        Effect.forEach(limiters, (limiter) => limiter.when(key)),
        (delays) => delays.reduce((a, b) => Duration.max(a, b), Duration.zero)
      ),
    numRequeues: (key) =>
      Effect.map(Effect.forEach(limiters, (limiter) => limiter.numRequeues(key)), (counts) => Math.max(0, ...counts))
  }
  const forgets = limiters.map(syncForgetOf)
  if (forgets.every((forget) => forget !== undefined)) {
    return withSyncForget(limiter, (key) => {
      for (const forget of forgets) forget!(key)
    })
  }
  return { ...limiter, forget: (key) => Effect.forEach(limiters, (limiter) => limiter.forget(key), { discard: true }) }
}

/** @internal */
export const withMaxWait = (limiter: Service, max: Duration.Input): Service => {
  const cap = Duration.fromInputUnsafe(max)
  const capped = {
    when: (key: string) => Effect.map(limiter.when(key), (delay) => Duration.min(delay, cap)),
    forget: limiter.forget,
    numRequeues: limiter.numRequeues
  }
  if (syncForgetOf(limiter) === undefined) return capped
  // Same `forget` as `limiter`: its synchronous one still applies.
  const service: Service & SyncForget = { ...capped, [forgetSync]: (limiter as Service & SyncForget)[forgetSync] }
  return service
}

/** Whether a rate limiter option is a limiter already made (rather than a `RateLimiter.Make`). @internal */
export const isRateLimiter = (input: RateLimiter.Make | Service): input is Service => !Effect.isEffect(input)
