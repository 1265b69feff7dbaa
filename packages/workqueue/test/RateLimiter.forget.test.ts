// `maxOf` forgets a key in one synchronous step when every limiter is a built-in one; a limiter whose `forget` was
// replaced (a copy of a built-in one) must still have its own `forget` run.
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import { Effect } from "effect"

describe("RateLimiter forget", () => {
  it.effect("maxOf of built-in limiters forgets the key in every one", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.maxOf(
        RateLimiter.exponential({ base: "1 second", max: "100 seconds" }),
        RateLimiter.withMaxWait(
          RateLimiter.fastSlow({ fast: "1 second", slow: "10 seconds", maxFast: 2 }),
          "5 seconds"
        ),
        RateLimiter.bucket({ perSecond: 10, burst: 100 })
      )
      yield* limiter.when("a")
      yield* limiter.when("a")
      yield* limiter.when("b")
      assert.strictEqual(yield* limiter.numRequeues("a"), 2)
      yield* limiter.forget("a")
      assert.strictEqual(yield* limiter.numRequeues("a"), 0)
      assert.strictEqual(yield* limiter.numRequeues("b"), 1)
    }))

  it.effect("a copy of a built-in limiter with its own forget: maxOf runs that forget", () =>
    Effect.gen(function*() {
      const forgotten: Array<string> = []
      const builtIn = yield* RateLimiter.exponential({ base: "1 second", max: "100 seconds" })
      const custom: RateLimiter.RateLimiter = {
        ...builtIn,
        forget: (key) => Effect.andThen(Effect.sync(() => forgotten.push(key)), builtIn.forget(key))
      }
      const limiter = yield* RateLimiter.maxOf(
        Effect.succeed(custom),
        RateLimiter.bucket({ perSecond: 10, burst: 100 })
      )
      yield* limiter.when("a")
      yield* limiter.forget("a")
      assert.deepStrictEqual(forgotten, ["a"])
      assert.strictEqual(yield* limiter.numRequeues("a"), 0)
      const capped = yield* RateLimiter.maxOf(RateLimiter.withMaxWait(Effect.succeed(custom), "1 second"))
      yield* capped.forget("b")
      assert.deepStrictEqual(forgotten, ["a", "b"])
    }))
})
