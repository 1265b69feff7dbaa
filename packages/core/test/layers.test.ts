// Queue and rate limiter from Layers: a Layer sets a *maker* (a Context.Reference); every queue and controller makes
// its own.
import { assert, describe, it } from "@effect/vitest"
import { PriorityWorkqueue, RateLimiter, Workqueue } from "@reconcile/workqueue"
import { Clock, Effect, Exit, Layer } from "effect"
import * as Reconcile from "../src/Reconcile.js"
import { advance, start } from "./harness.js"

/** An always-failing reconcile that records the virtual time of each attempt. */
const failing = () => {
  const attempts: Array<number> = []
  const reconcile = () =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      attempts.push(now)
      return Reconcile.retryable("boom")
    })
  return { attempts, reconcile }
}

const slow = RateLimiter.exponential({ base: "1 second", max: "100 seconds" })
const slower = RateLimiter.exponential({ base: "3 seconds", max: "100 seconds" })

describe("Layers compose: RateLimiter.layerMaker", () => {
  it.effect("a controller uses the limiter maker a Layer provides, each controller with its own state", () =>
    Effect.gen(function*() {
      const a = failing()
      const b = failing()
      const ca = yield* start(a.reconcile)
      const cb = yield* start(b.reconcile)
      yield* ca.send("x")
      yield* advance(7_500)
      assert.deepStrictEqual(a.attempts, [0, 1_000, 3_000, 7_000], "the Layer's exponential(1 s), not the default")
      yield* cb.send("x")
      yield* advance(1_000)
      // Shared state would put B's first retry 8 s (A's fourth failure) after its first attempt.
      assert.deepStrictEqual(b.attempts, [7_500, 8_500], "B's backoff starts at 1 s: its own limiter")
      assert.strictEqual(yield* ca.controller.queue.numRequeues("default/x"), 4)
      assert.strictEqual(yield* cb.controller.queue.numRequeues("default/x"), 2)
    }).pipe(Effect.provide(RateLimiter.layerMaker(slow))))

  it.effect("the rateLimiter option overrides the Layer", () =>
    Effect.gen(function*() {
      const a = failing()
      const { send } = yield* start(a.reconcile, { rateLimiter: slower })
      yield* send("x")
      yield* advance(10_000)
      assert.deepStrictEqual(a.attempts, [0, 3_000, 9_000])
    }).pipe(Effect.provide(RateLimiter.layerMaker(slow))))

  it.effect("a maker that hands out one instance shares its state between controllers", () =>
    Effect.gen(function*() {
      const a = failing()
      const b = failing()
      const ca = yield* start(a.reconcile)
      const cb = yield* start(b.reconcile)
      yield* ca.send("x")
      yield* advance(1_500)
      yield* cb.send("x")
      yield* advance(0)
      assert.deepStrictEqual(a.attempts, [0, 1_000])
      assert.deepStrictEqual(b.attempts, [1_500])
      // A's two failures are B's too: B's retry waits 4 s.
      yield* advance(4_000)
      assert.deepStrictEqual(b.attempts, [1_500, 5_500])
    }).pipe(Effect.provide(Layer.effect(RateLimiter.Maker, Effect.map(slow, Effect.succeed)))))

  it.effect("without a Layer the settings are their defaults: FIFO queue, the queue kind's limiter", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Workqueue.Maker, Workqueue.fifo)
      assert.isUndefined(yield* RateLimiter.Maker)
      const a = failing()
      const { controller, send } = yield* start(a.reconcile)
      assert.isFalse("addWithOptions" in controller.queue, "a FIFO queue")
      yield* send("x")
      yield* advance(20)
      assert.deepStrictEqual(a.attempts, [0, 5, 15], "controllerDefault: exponential from 5 ms")
    }))
})

/** A priority queue constructor wrapped by user code: not `PriorityWorkqueue.make` itself. */
const madeByWrapper: Array<string> = []
const wrappedPriority: Workqueue.Make = {
  _tag: "Priority",
  make: (options) =>
    Effect.tap(PriorityWorkqueue.make(options), () => Effect.sync(() => void madeByWrapper.push(options.name)))
}

describe("Layers compose: Workqueue.layerMaker", () => {
  it.effect("a controller makes its queue with the constructor a Layer provides; each controller its own", () =>
    Effect.gen(function*() {
      const a = yield* start(() => Effect.void)
      const b = yield* start(() => Effect.void)
      assert.isTrue("addWithOptions" in a.controller.queue, "a priority queue")
      assert.notStrictEqual(a.controller.queue, b.controller.queue)
      assert.strictEqual(a.controller.queue.name, a.name)
      const fifo = yield* start(() => Effect.void, { queue: Workqueue.fifo })
      assert.isFalse("addWithOptions" in fifo.controller.queue, "the queue option overrides the Layer")
    }).pipe(Effect.provide(Workqueue.layerMaker(Workqueue.priority))))

  it.effect("a priority queue from a Layer gets the priority queue's default limiter (no bucket)", () =>
    Effect.gen(function*() {
      // One worker blocked on the first key; 200 rate-limited adds are all ready after 5 ms without the bucket of
      // RateLimiter.controllerDefault (which would hold all but its burst of 100).
      const { controller } = yield* start(() => Effect.never, { gracefulShutdownTimeout: 0 })
      yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => `default/k${i}`), controller.queue.addRateLimited)
      yield* advance(5)
      assert.strictEqual(yield* controller.queue.len, 199)
    }).pipe(Effect.provide(Workqueue.layerMaker(Workqueue.priority))))

  it.effect("a wrapped priority maker is a priority queue by its tag: it gets the priority defaults", () =>
    Effect.gen(function*() {
      // As an option and from the Layer: 200 rate-limited adds are all ready after 5 ms (one in flight), as with
      // RateLimiter.priorityDefault; controllerDefault's bucket would hold all but its burst of 100.
      for (const options of [{ queue: wrappedPriority }, {}]) {
        const { controller, name } = yield* start(() => Effect.never, { ...options, gracefulShutdownTimeout: 0 })
        assert.include(madeByWrapper, name, "the wrapper made the queue")
        yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => `default/k${i}`), controller.queue.addRateLimited)
        yield* advance(5)
        assert.strictEqual(yield* controller.queue.len, 199)
      }
    }).pipe(Effect.provide(Workqueue.layerMaker(wrappedPriority))))

  it.effect("both makers compose: a priority queue with the Layer's limiter", () =>
    Effect.gen(function*() {
      const a = failing()
      const { controller, send } = yield* start(a.reconcile)
      assert.isTrue("addWithOptions" in controller.queue)
      yield* send("x")
      yield* advance(4_000)
      assert.deepStrictEqual(a.attempts, [0, 1_000, 3_000])
    }).pipe(
      Effect.provide(Layer.mergeAll(Workqueue.layerMaker(Workqueue.priority), RateLimiter.layerMaker(slow)))
    ))
})

describe("one type for a rate limiter to make", () => {
  it.effect("Workqueue.make and PriorityWorkqueue.make take a RateLimiter.Make (made per queue) or an instance", () =>
    Effect.gen(function*() {
      const make: RateLimiter.Make = RateLimiter.bucket({ perSecond: 1, burst: 1 })
      const q1 = yield* Workqueue.make({ name: "make-1", rateLimiter: make })
      const q2 = yield* PriorityWorkqueue.make({ name: "make-2", rateLimiter: make })
      yield* q1.addRateLimited("a")
      yield* q2.addRateLimited("a")
      assert.strictEqual(yield* q1.len, 1, "q1's bucket is full")
      assert.strictEqual(yield* q2.len, 1, "q2 has a bucket of its own")
      // The 0.1 form: a limiter already made, used as is.
      const instance = yield* RateLimiter.exponential({ base: "1 second", max: "1 minute" })
      const q3 = yield* Workqueue.make({ name: "make-3", rateLimiter: instance })
      yield* q3.addRateLimited("a")
      assert.strictEqual(yield* instance.numRequeues("a"), 1)
    }))

  it.effect("a queue made under RateLimiter.layerMaker makes its own limiter", () =>
    Effect.gen(function*() {
      const q1 = yield* Workqueue.make({ name: "layer-1" })
      const q2 = yield* Workqueue.make({ name: "layer-2" })
      yield* q1.addRateLimited("a")
      yield* q1.addRateLimited("a")
      assert.strictEqual(yield* q1.numRequeues("a"), 2)
      assert.strictEqual(yield* q2.numRequeues("a"), 0)
      yield* q2.addRateLimited("a")
      yield* advance(999)
      assert.strictEqual(yield* q2.len, 0)
      yield* advance(1)
      assert.strictEqual(yield* q2.len, 1, "q2's first retry waits the Layer's base, 1 s")
    }).pipe(Effect.provide(RateLimiter.layerMaker(slow))))

  it.effect("Controller options take the same RateLimiter.Make, including one that can fail (invalid options die)", () =>
    Effect.gen(function*() {
      const a = failing()
      const { send } = yield* start(a.reconcile, { rateLimiter: RateLimiter.bucket({ perSecond: 1, burst: 1 }) })
      yield* send("x")
      yield* advance(2_000)
      assert.deepStrictEqual(a.attempts, [0, 0, 1_000, 2_000])
      const exit = yield* Effect.exit(
        start(a.reconcile, { rateLimiter: RateLimiter.bucket({ perSecond: 0, burst: 1 }) })
      )
      assert.isTrue(Exit.hasDies(exit), "invalid limiter options are a defect")
    }))
})
