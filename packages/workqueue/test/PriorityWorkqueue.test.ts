import { assert, describe, it } from "@effect/vitest"
import { PriorityWorkqueue, RateLimiter, Workqueue } from "@reconcile/workqueue"
import { Duration, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"

const advance = (millis: number) => Effect.andThen(TestClock.adjust(Duration.millis(millis)), Effect.yieldNow)

const drainReady = (queue: PriorityWorkqueue.PriorityWorkqueue.Service) =>
  Effect.gen(function*() {
    const taken: Array<string> = []
    while ((yield* queue.len) > 0) {
      const { key, priority } = yield* queue.takeWithPriority
      taken.push(`${key}@${priority}`)
    }
    return taken
  })

describe("PriorityWorkqueue", () => {
  it.effect("hands out higher priorities first, FIFO within a priority", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-order" })
      yield* queue.addWithOptions("low-1", { priority: PriorityWorkqueue.LowPriority })
      yield* queue.add("normal-1")
      yield* queue.addWithOptions("high", { priority: 10 })
      yield* queue.addWithOptions("low-2", { priority: PriorityWorkqueue.LowPriority })
      yield* queue.add("normal-2")
      assert.deepStrictEqual(yield* drainReady(queue), [
        "high@10",
        "normal-1@0",
        "normal-2@0",
        "low-1@-100",
        "low-2@-100"
      ])
    }))

  it.effect("initial-list items at LowPriority do not hold back a real change", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-initial" })
      for (let i = 0; i < 1_000; i++) {
        yield* queue.addWithOptions(`ns/initial-${i}`, { priority: PriorityWorkqueue.LowPriority })
      }
      yield* queue.add("ns/changed")
      assert.deepStrictEqual(yield* queue.takeWithPriority, { key: "ns/changed", priority: 0 })
    }))

  it.effect("re-adding a waiting key merges to the maximum priority", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-max" })
      yield* queue.add("a")
      yield* queue.add("b")
      yield* queue.addWithOptions("b", { priority: 5 })
      yield* queue.addWithOptions("b", { priority: 1 })
      assert.strictEqual(yield* queue.len, 2)
      assert.deepStrictEqual(yield* drainReady(queue), ["b@5", "a@0"])
    }))

  it.effect("re-adding a delayed key merges to the minimum ready time; an immediate add promotes it", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-min" })
      yield* queue.addAfter("a", "10 seconds")
      yield* queue.addAfter("a", "2 seconds")
      yield* queue.addAfter("a", "5 seconds")
      yield* advance(1_999)
      assert.strictEqual(yield* queue.len, 0)
      yield* advance(1)
      assert.deepStrictEqual(yield* drainReady(queue), ["a@0"])
      yield* queue.done("a")
      yield* advance(10_000)
      assert.strictEqual(yield* queue.len, 0, "later ready times were merged away")

      yield* queue.addAfter("b", "1 minute")
      yield* queue.add("b")
      assert.deepStrictEqual(yield* drainReady(queue), ["b@0"], "an immediate add promotes a waiting key")
      yield* queue.done("b")
      yield* advance(60_000)
      assert.strictEqual(yield* queue.len, 0, "the promoted key's delayed entry is gone")
    }))

  it.effect("never hands out a key in flight; a re-add during processing is served after done", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-stingy" })
      yield* queue.add("a")
      assert.strictEqual(yield* queue.take, "a")
      yield* queue.addWithOptions("a", { priority: 3 })
      yield* queue.add("b")
      assert.deepStrictEqual(yield* drainReady(queue), ["b@0"])
      const waiting = yield* Effect.forkChild(queue.takeWithPriority)
      yield* Effect.yieldNow
      // v4: Fiber.unsafePoll is fiber.pollUnsafe(), which returns undefined (not null) while the fiber runs
      assert.isUndefined(waiting.pollUnsafe())
      yield* queue.done("a")
      assert.deepStrictEqual(yield* Fiber.join(waiting), { key: "a", priority: 3 })
    }))

  it.effect("rateLimited waits the smaller of the limiter's delay and `after`", () =>
    Effect.gen(function*() {
      const rateLimiter = yield* RateLimiter.exponential({ base: "4 seconds", max: "1 minute" })
      const queue = yield* PriorityWorkqueue.make({ name: "pq-limited", rateLimiter })
      yield* queue.addWithOptions("a", { rateLimited: true, after: "1 second" })
      yield* queue.addWithOptions("b", { rateLimited: true, after: "1 minute" })
      yield* advance(1_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["a@0"])
      yield* advance(3_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["b@0"])
      assert.strictEqual(yield* queue.numRequeues("b"), 1)
      yield* queue.forget("b")
      assert.strictEqual(yield* queue.numRequeues("b"), 0)
    }))

  it.effect("defaults to the priority limiter exponential(5 ms, 1000 s)", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-default" })
      for (let i = 0; i < 200; i++) yield* queue.addRateLimited(`k${i}`)
      // No bucket: even the 200th key waits only 5 ms.
      yield* advance(5)
      assert.strictEqual(yield* queue.len, 200)
    }))

  it.effect("shutdown hands out what is ready, then fails takers; adds are ignored", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "pq-shutdown" })
      yield* queue.add("a")
      yield* queue.shutdown
      yield* queue.addWithOptions("b", { priority: 100 })
      assert.strictEqual(yield* queue.take, "a")
      assert.strictEqual((yield* Effect.flip(queue.take))._tag, "WorkqueueShutdown")
    }))

  it.effect("its Layer also provides Workqueue, so controllers swap queues by swapping a Layer", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.Workqueue
      const priority = yield* PriorityWorkqueue.PriorityWorkqueue
      assert.strictEqual(queue, priority)
      yield* priority.addWithOptions("low", { priority: -1 })
      yield* queue.add("normal")
      assert.strictEqual(yield* queue.take, "normal")
    }).pipe(Effect.provide(Layer.fresh(PriorityWorkqueue.layer({ name: "pq-layer" })))))

  it.effect("Workqueue.layer provides the FIFO queue", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.Workqueue
      yield* queue.add("x")
      assert.strictEqual(yield* queue.take, "x")
    }).pipe(Effect.provide(Workqueue.layer({ name: "fifo-layer" }))))
})
