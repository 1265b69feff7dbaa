import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import { Duration, Effect, Schema } from "effect"
import { TestClock } from "effect/testing"

const millis = (d: Duration.Duration) => Duration.toMillis(d)
const integer = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const delays = (limiter: RateLimiter.RateLimiter, key: string, n: number) =>
  Effect.forEach(Array.from({ length: n }), () => Effect.map(limiter.when(key), millis))

describe("RateLimiter", () => {
  describe("exponential", () => {
    it.effect("delays base·2ⁿ capped at max; keys are independent; forget resets", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.exponential({ base: "5 millis", max: "1 second" })
        assert.deepStrictEqual(yield* delays(limiter, "a", 10), [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000])
        assert.deepStrictEqual(yield* delays(limiter, "b", 2), [5, 10])
        assert.strictEqual(yield* limiter.numRequeues("a"), 10)
        yield* limiter.forget("a")
        assert.strictEqual(yield* limiter.numRequeues("a"), 0)
        assert.deepStrictEqual(yield* delays(limiter, "a", 1), [5])
      }))

    it.effect("does not overflow at n = 10,000", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.exponential({ base: "1 second", max: "100 seconds" })
        const all = yield* delays(limiter, "k", 10_001)
        assert.strictEqual(all[10_000], 100_000)
        assert.isTrue(all.every((d) => Number.isFinite(d) && d >= 1_000 && d <= 100_000))
      }))

    it.effect.prop(
      "the n-th delay is min(base·2ⁿ, max)",
      // v4: FastCheck is gone; property inputs are Schemas (fc.integer({ min, max }) is an Int between min and max)
      [integer(0, 1_000), integer(1, 100_000), integer(0, 80)],
      ([base, max, n]) =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter.exponential({ base: Duration.millis(base), max: Duration.millis(max) })
          const all = yield* delays(limiter, "k", n + 1)
          assert.strictEqual(all[n], Math.min(base * 2 ** n, max))
        })
    )

    it.effect("each run of the constructor has its own state", () =>
      Effect.gen(function*() {
        const make = RateLimiter.exponential({ base: "1 second", max: "1 minute" })
        const one = yield* make
        const two = yield* make
        yield* one.when("k")
        assert.strictEqual(yield* two.numRequeues("k"), 0)
      }))
  })

  describe("bucket", () => {
    it.effect("a full burst passes at once, then perSecond", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.bucket({ perSecond: 10, burst: 100 })
        const burst = yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => `k${i}`), (k) => limiter.when(k))
        assert.isTrue(burst.every((d) => millis(d) === 0))
        assert.deepStrictEqual(yield* delays(limiter, "x", 3), [100, 200, 300], "reservations queue up at 1/perSecond")
      }))

    it.effect("refills with time, up to burst; reservations are not refunded", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.bucket({ perSecond: 2, burst: 2 })
        assert.deepStrictEqual(yield* delays(limiter, "k", 3), [0, 0, 500])
        yield* TestClock.adjust("500 millis")
        assert.deepStrictEqual(
          yield* delays(limiter, "k", 1),
          [500],
          "the token refilled at 500 ms went to the earlier reservation"
        )
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(yield* delays(limiter, "k", 3), [0, 0, 500], "refill stops at burst")
      }))

    it.effect("rejects perSecond <= 0 and burst < 1 with a typed error", () =>
      Effect.gen(function*() {
        const rate = yield* Effect.flip(RateLimiter.bucket({ perSecond: 0, burst: 1 }))
        assert.strictEqual(rate._tag, "InvalidRateLimiterOptions")
        assert.strictEqual(rate.option, "perSecond")
        const nan = yield* Effect.flip(RateLimiter.bucket({ perSecond: Number.NaN, burst: 1 }))
        assert.strictEqual(nan.option, "perSecond")
        const burst = yield* Effect.flip(RateLimiter.bucket({ perSecond: 1, burst: 0 }))
        assert.strictEqual(burst.option, "burst")
      }))
  })

  describe("fastSlow", () => {
    it.effect("fast for the first maxFast failures, then slow; per key; forget resets", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.fastSlow({ fast: "1 second", slow: "1 minute", maxFast: 2 })
        assert.deepStrictEqual(yield* delays(limiter, "a", 4), [1_000, 1_000, 60_000, 60_000])
        assert.deepStrictEqual(yield* delays(limiter, "b", 1), [1_000])
        yield* limiter.forget("a")
        assert.deepStrictEqual(yield* delays(limiter, "a", 1), [1_000])
      }))

    it.effect("rejects a negative maxFast", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(RateLimiter.fastSlow({ fast: "1 second", slow: "1 minute", maxFast: -1 }))
        assert.strictEqual(error.option, "maxFast")
      }))
  })

  describe("combinators", () => {
    it.effect("maxOf takes the largest delay and records the failure in every limiter", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.maxOf(
          RateLimiter.exponential({ base: "1 second", max: "1 hour" }),
          RateLimiter.fastSlow({ fast: "3 seconds", slow: "1 hour", maxFast: 1 })
        )
        assert.deepStrictEqual(yield* delays(limiter, "k", 3), [3_000, 3_600_000, 3_600_000])
        assert.strictEqual(yield* limiter.numRequeues("k"), 3)
        yield* limiter.forget("k")
        assert.strictEqual(yield* limiter.numRequeues("k"), 0)
        assert.deepStrictEqual(yield* delays(limiter, "k", 1), [3_000])
      }))

    it.effect("withMaxWait caps delays", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.withMaxWait(
          RateLimiter.exponential({ base: "1 second", max: "1 hour" }),
          "3 seconds"
        )
        assert.deepStrictEqual(yield* delays(limiter, "k", 4), [1_000, 2_000, 3_000, 3_000])
      }))

    it.effect("controllerDefault is maxOf(exponential(5 ms, 1000 s), bucket(10/s, 100))", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.controllerDefault
        assert.deepStrictEqual(yield* delays(limiter, "k", 3), [5, 10, 20])
        // Exhaust the shared bucket: the 101st call overall waits for a token.
        yield* Effect.forEach(Array.from({ length: 97 }, (_, i) => `o${i}`), (k) => limiter.when(k))
        assert.deepStrictEqual(yield* delays(limiter, "fresh", 1), [100])
      }))

    it.effect("priorityDefault is exponential(5 ms, 1000 s)", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.priorityDefault
        const all = yield* delays(limiter, "k", 30)
        assert.strictEqual(all[0], 5)
        assert.strictEqual(all[29], 1_000_000)
      }))

    it.effect("negative durations count as zero", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.exponential({ base: Duration.millis(-5), max: "1 second" })
        assert.deepStrictEqual(yield* delays(limiter, "k", 2), [0, 0])
      }))
  })
})
