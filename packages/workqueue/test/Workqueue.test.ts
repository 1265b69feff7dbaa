import { assert, describe, it } from "@effect/vitest"
import { PriorityWorkqueue, RateLimiter, Workqueue, WorkqueueMetrics } from "@reconcile/workqueue"
import { Clock, Duration, Effect, Exit, Fiber, Metric, Option } from "effect"
import { TestClock } from "effect/testing"

/** Moves virtual time forward and lets the woken fibers run. */
const advance = (millis: number) => Effect.andThen(TestClock.adjust(Duration.millis(millis)), Effect.yieldNow)

/** Takes everything that is ready now, without blocking. */
const drainReady = (queue: Workqueue.Workqueue.Service) =>
  Effect.gen(function*() {
    const keys: Array<string> = []
    while ((yield* queue.len) > 0) keys.push(yield* queue.take)
    return keys
  })

const limiter = RateLimiter.exponential({ base: "1 second", max: "100 seconds" })

describe("Workqueue", () => {
  it.effect("is fair: ready keys come out in FIFO order", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "fifo" })
      for (const key of ["c", "a", "b"]) yield* queue.add(key)
      assert.deepStrictEqual(yield* drainReady(queue), ["c", "a", "b"])
    }))

  it.effect("is stingy: adds of a waiting key collapse into one", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "collapse" })
      yield* queue.add("a")
      yield* queue.add("b")
      yield* queue.add("a")
      yield* queue.add("a")
      assert.strictEqual(yield* queue.len, 2)
      assert.deepStrictEqual(yield* drainReady(queue), ["a", "b"])
    }))

  it.effect("never hands a key to a second taker before done", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "stingy" })
      yield* queue.add("a")
      assert.strictEqual(yield* queue.take, "a")
      yield* queue.add("a")
      const second = yield* Effect.forkChild(queue.take)
      yield* Effect.yieldNow
      // v4: Fiber.unsafePoll is fiber.pollUnsafe(), which returns undefined (not null) while the fiber runs
      assert.isUndefined(second.pollUnsafe(), "a key in flight must not be handed out again")
      yield* queue.done("a")
      assert.strictEqual(yield* Fiber.join(second), "a")
    }))

  it.effect("add while processing marks the key dirty; done re-queues it exactly once", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "dirty" })
      yield* queue.add("a")
      yield* queue.take
      yield* queue.add("a")
      yield* queue.add("a")
      assert.strictEqual(yield* queue.len, 0, "a dirty key in flight is not ready")
      yield* queue.done("a")
      assert.deepStrictEqual(yield* drainReady(queue), ["a"])
      yield* queue.done("a")
      assert.strictEqual(yield* queue.len, 0, "the second done has nothing left to re-queue")
    }))

  it.effect("addAfter with a non-positive delay is add", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "after-zero" })
      yield* queue.addAfter("zero", 0)
      yield* queue.addAfter("negative", -5)
      yield* queue.addAfter("negative-duration", Duration.millis(-1))
      assert.deepStrictEqual(yield* drainReady(queue), ["zero", "negative", "negative-duration"])
    }))

  it.effect("addAfter makes the key ready when the delay has passed, not before", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "after" })
      yield* queue.addAfter("a", "10 seconds")
      yield* advance(9_999)
      assert.strictEqual(yield* queue.len, 0)
      yield* advance(1)
      assert.deepStrictEqual(yield* drainReady(queue), ["a"])
    }))

  it.effect("several delayed adds of one key keep the earliest ready time", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "earliest" })
      yield* queue.addAfter("a", "10 seconds")
      yield* queue.addAfter("a", "3 seconds")
      yield* queue.addAfter("a", "7 seconds")
      yield* advance(3_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["a"])
      yield* queue.done("a")
      yield* advance(10_000)
      assert.strictEqual(yield* queue.len, 0, "the later delayed adds were merged into the earliest one")
    }))

  it.effect("delayed keys become ready in ready-time order", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "order" })
      yield* queue.addAfter("late", "3 seconds")
      yield* queue.addAfter("early", "1 second")
      yield* queue.addAfter("middle", "2 seconds")
      yield* advance(5_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["early", "middle", "late"])
    }))

  it.effect("an immediate add does not cancel a pending delayed entry", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "no-cancel" })
      yield* queue.addAfter("a", "5 seconds")
      yield* queue.add("a")
      assert.deepStrictEqual(yield* drainReady(queue), ["a"])
      yield* queue.done("a")
      yield* advance(5_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["a"], "the delayed entry still fires")
    }))

  it.effect("a delayed entry that fires while the key still waits collapses into it", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "collapse-delayed" })
      yield* queue.addAfter("a", "5 seconds")
      yield* queue.add("a")
      yield* advance(5_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["a"])
    }))

  it.effect("a blocked taker wakes when a delayed entry fires", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "wake" })
      const taker = yield* Effect.forkChild(queue.take)
      yield* queue.addAfter("a", "2 seconds")
      yield* advance(1_999)
      // v4: Fiber.unsafePoll is fiber.pollUnsafe(), which returns undefined (not null) while the fiber runs
      assert.isUndefined(taker.pollUnsafe())
      yield* advance(1)
      assert.strictEqual(yield* Fiber.join(taker), "a")
    }))

  it.effect("addRateLimited waits the limiter's delay; forget and numRequeues reach the limiter", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "limited", rateLimiter: yield* limiter })
      yield* queue.addRateLimited("a")
      yield* queue.addRateLimited("a")
      assert.strictEqual(yield* queue.numRequeues("a"), 2)
      yield* advance(999)
      assert.strictEqual(yield* queue.len, 0)
      yield* advance(1)
      assert.deepStrictEqual(yield* drainReady(queue), ["a"], "the earliest (1 s) of the two entries fires")
      yield* queue.forget("a")
      assert.strictEqual(yield* queue.numRequeues("a"), 0)
    }))

  it.effect("queueWait: how long the key in process waited, from its first add since it was last taken", () =>
    Effect.gen(function*() {
      for (const make of [Workqueue.make, PriorityWorkqueue.make]) {
        const queue = yield* make({ name: "wait" })
        assert.isTrue(Option.isNone(yield* queue.queueWait("a")), "not known")
        yield* queue.add("a")
        yield* advance(300)
        yield* queue.add("a") // collapses: the wait counts from the first add
        yield* advance(200)
        assert.isTrue(Option.isNone(yield* queue.queueWait("a")), "waiting, not in process")
        assert.strictEqual(yield* queue.take, "a")
        assert.deepStrictEqual(yield* queue.queueWait("a"), Option.some(Duration.millis(500)))
        // re-added while in process: the wait in process stays that of the take; the next take counts anew
        yield* queue.add("a")
        yield* advance(1_000)
        yield* queue.done("a")
        assert.isTrue(Option.isNone(yield* queue.queueWait("a")), "done")
        yield* advance(50)
        assert.strictEqual(yield* queue.take, "a")
        assert.deepStrictEqual(yield* queue.queueWait("a"), Option.some(Duration.millis(1_050)))
        yield* queue.done("a")
      }
    }))

  it.effect("uses the RateLimiter.Maker setting when no limiter is given", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "ctx-limiter" }).pipe(
        Effect.provideService(
          RateLimiter.Maker,
          RateLimiter.fastSlow({ fast: "1 second", slow: "1 minute", maxFast: 1 })
        )
      )
      yield* queue.addRateLimited("a")
      yield* advance(1_000)
      assert.deepStrictEqual(yield* drainReady(queue), ["a"])
    }))

  it.effect("two queues never share a key's failure count", () =>
    Effect.gen(function*() {
      const one = yield* Workqueue.make({ name: "one" })
      const two = yield* Workqueue.make({ name: "two" })
      yield* one.addRateLimited("ns/a")
      yield* one.addRateLimited("ns/a")
      assert.strictEqual(yield* one.numRequeues("ns/a"), 2)
      assert.strictEqual(yield* two.numRequeues("ns/a"), 0)
    }))

  it.effect(
    "controller-runtime timeline: an extra add between retries counts as a failure, the scheduled retry stays on time",
    () =>
      Effect.gen(function*() {
        // A worker whose every attempt fails: take, addRateLimited, done. Exponential 1 s → 100 s.
        const queue = yield* Workqueue.make({ name: "timeline", rateLimiter: yield* limiter })
        const attempts: Array<number> = []
        yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
          const key = yield* queue.take
          attempts.push(yield* Clock.currentTimeMillis)
          yield* queue.addRateLimited(key)
          yield* queue.done(key)
        })))
        yield* queue.add("k") // t=0: attempt, failure #0 → retry at 1
        yield* advance(1_000) // t=1: attempt, failure #1 → retry at 3
        yield* advance(1_000)
        yield* queue.add("k") // t=2: out-of-band add → attempt now, failure #2 → 4 s, but the retry at 3 is earlier
        yield* Effect.yieldNow
        yield* advance(1_000) // t=3: the scheduled retry fires on time; failure #3 → 8 s → retry at 11 (not 7)
        yield* advance(7_000)
        assert.deepStrictEqual(attempts, [0, 1_000, 2_000, 3_000], "no retry at t=7")
        yield* advance(1_000)
        assert.deepStrictEqual(attempts, [0, 1_000, 2_000, 3_000, 11_000])
        assert.strictEqual(yield* queue.numRequeues("k"), 5)
      })
  )

  describe("shutdown", () => {
    it.effect("releases blocked takers with WorkqueueShutdown", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "release" })
        const takers = yield* Effect.all([Effect.forkChild(queue.take), Effect.forkChild(queue.take)])
        yield* Effect.yieldNow
        yield* queue.shutdown
        for (const taker of takers) {
          const exit = yield* Fiber.await(taker)
          assert.isTrue(Exit.isFailure(exit))
          // v4: a Cause is a flat list of reasons; the v3 check `cause._tag === "Fail"` is "exactly one Fail reason"
          const reasons = Exit.isFailure(exit) ? exit.cause.reasons : []
          const reason = reasons.length === 1 ? reasons[0]! : undefined
          assert.deepStrictEqual(reason?._tag === "Fail" && reason.error._tag, "WorkqueueShutdown")
        }
      }))

    it.effect("hands out the remaining keys, then signals shutdown; later adds are ignored", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "remaining" })
        yield* queue.add("a")
        yield* queue.add("b")
        yield* queue.shutdown
        yield* queue.add("c")
        yield* queue.addAfter("d", 0)
        yield* queue.addRateLimited("e")
        assert.isTrue(yield* queue.isShuttingDown)
        assert.strictEqual(yield* queue.take, "a")
        assert.strictEqual(yield* queue.take, "b")
        const error = yield* Effect.flip(queue.take)
        assert.strictEqual(error._tag, "WorkqueueShutdown")
      }))

    it.effect("drops pending delayed entries", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "drop-delayed" })
        yield* queue.addAfter("a", "1 second")
        yield* queue.shutdown
        yield* advance(2_000)
        assert.strictEqual(yield* queue.len, 0)
      }))

    it.effect("a dirty in-flight key is still re-queued at done after shutdown", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "dirty-shutdown" })
        yield* queue.add("a")
        yield* queue.take
        yield* queue.add("a")
        yield* queue.shutdown
        yield* queue.done("a")
        assert.strictEqual(yield* queue.take, "a")
      }))

    it.effect("shutdownWithDrain waits until every in-flight key is done", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "drain" })
        yield* queue.add("a")
        yield* queue.add("b")
        yield* queue.take
        yield* queue.take
        const drain = yield* Effect.forkChild(queue.shutdownWithDrain)
        yield* Effect.yieldNow
        yield* queue.done("a")
        yield* Effect.yieldNow
        // v4: Fiber.unsafePoll is fiber.pollUnsafe(), which returns undefined (not null) while the fiber runs
        assert.isUndefined(drain.pollUnsafe(), "b is still in flight")
        yield* queue.done("b")
        yield* Fiber.join(drain)
      }))

    it.effect("shutdownWithDrain returns at once when nothing is in flight", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "drain-empty" })
        yield* queue.shutdownWithDrain
        assert.isTrue(yield* queue.isShuttingDown)
      }))

    it.effect("closing the scope shuts the queue down and releases takers", () =>
      Effect.gen(function*() {
        const [queue, taker] = yield* Effect.scoped(Effect.gen(function*() {
          const queue = yield* Workqueue.make({ name: "scope" })
          const taker = yield* Effect.forkChild(queue.take)
          yield* Effect.yieldNow
          return [queue, taker] as const
        }))
        assert.isTrue(yield* queue.isShuttingDown)
        assert.isTrue(Exit.isFailure(yield* Fiber.await(taker)))
      }))
  })

  describe("bad input", () => {
    it.effect("NaN and negative delays are clamped to zero (immediate add)", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "nan" })
        yield* queue.addAfter("nan", Number.NaN)
        yield* queue.addAfter("neg", -Infinity)
        assert.deepStrictEqual(yield* drainReady(queue), ["nan", "neg"])
      }))

    it.effect("infinite delays are clamped to 2^31-1 ms and still fire", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "infinite" })
        yield* queue.addAfter("a", Duration.infinity)
        yield* queue.addAfter("b", Infinity)
        yield* advance(2 ** 31 - 2)
        assert.strictEqual(yield* queue.len, 0)
        yield* advance(1)
        assert.deepStrictEqual(yield* drainReady(queue), ["a", "b"])
      }))

    it.effect("done of a key that was never taken is a no-op and does not duplicate a waiting key", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "stray-done" })
        yield* queue.done("ghost")
        yield* queue.add("a")
        yield* queue.done("a")
        assert.deepStrictEqual(yield* drainReady(queue), ["a"])
      }))

    it.effect("operations after shutdown neither fail nor hang", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "after-shutdown" })
        yield* queue.shutdown
        yield* queue.shutdown
        yield* queue.add("a")
        yield* queue.addAfter("a", "1 second")
        yield* queue.done("a")
        yield* queue.forget("a")
        assert.strictEqual(yield* queue.len, 0)
        assert.strictEqual((yield* Effect.flip(queue.take))._tag, "WorkqueueShutdown")
        yield* queue.shutdownWithDrain
      }))

    it.effect("an interrupted taker does not swallow a key", () =>
      Effect.gen(function*() {
        const queue = yield* Workqueue.make({ name: "interrupted-taker" })
        const taker = yield* Effect.forkChild(queue.take)
        yield* Effect.yieldNow
        yield* Fiber.interrupt(taker)
        yield* queue.add("a")
        assert.strictEqual(yield* queue.take, "a")
      }))
  })

  it.effect("records client-go metrics labelled by name and controller", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "metrics-q", controller: "metrics-c" })
      const metrics = WorkqueueMetrics.forQueue("metrics-q", "metrics-c")
      yield* queue.add("a")
      yield* queue.add("a")
      yield* queue.add("b")
      assert.strictEqual((yield* Metric.value(metrics.adds)).count, 2)
      assert.strictEqual((yield* Metric.value(metrics.depth)).value, 2)
      yield* queue.take
      yield* advance(1_500)
      assert.strictEqual((yield* Metric.value(metrics.longestRunning)).value, 1.5)
      yield* queue.done("a")
      assert.strictEqual((yield* Metric.value(metrics.depth)).value, 1)
      assert.strictEqual((yield* Metric.value(metrics.queueDuration)).count, 1)
      const work = yield* Metric.value(metrics.workDuration)
      assert.strictEqual(work.count, 1)
      assert.strictEqual(work.sum, 1.5)
      yield* queue.addAfter("c", "1 second")
      assert.strictEqual((yield* Metric.value(metrics.retries)).count, 1)
    }))

  // effect 4 keeps series in the context's `Metric.MetricRegistry` and creates them lazily (at the first read or
  // update): the queue creates all of them at zero when it is made, in the registry of the fiber that makes it.
  it.effect("creates every metric series at zero, with name and controller attributes, in the maker's registry", () =>
    Effect.gen(function*() {
      const registry: Metric.MetricRegistry = new Map()
      const withRegistry = Effect.provideService(Metric.MetricRegistry, registry)
      const queue = yield* withRegistry(Workqueue.make({ name: "registered-q", controller: "registered-c" }))
      const snapshot = yield* withRegistry(Metric.snapshot)
      const attributes = { controller: "registered-c", name: "registered-q" }
      assert.deepStrictEqual(
        snapshot.map((metric) => [metric.id, metric.type, metric.attributes]).sort(),
        [
          [WorkqueueMetrics.names.adds, "Counter", attributes],
          [WorkqueueMetrics.names.depth, "Gauge", attributes],
          [WorkqueueMetrics.names.longestRunning, "Gauge", attributes],
          [WorkqueueMetrics.names.queueDuration, "Histogram", attributes],
          [WorkqueueMetrics.names.retries, "Counter", attributes],
          [WorkqueueMetrics.names.unfinishedWork, "Gauge", attributes],
          [WorkqueueMetrics.names.workDuration, "Histogram", attributes]
        ]
      )
      for (const metric of snapshot) {
        switch (metric.type) {
          case "Counter":
            assert.strictEqual(metric.state.count, 0)
            break
          case "Gauge":
            assert.strictEqual(metric.state.value, 0)
            break
          case "Histogram":
            assert.strictEqual(metric.state.count, 0)
            // client-go's buckets 10 ns … 100 s (×10), then +Inf
            assert.strictEqual(metric.state.buckets.at(-1)![0], Infinity)
            assert.strictEqual(metric.state.buckets.length, 12)
            assert.strictEqual(metric.state.buckets[0]![0], 1e-8)
            break
        }
      }
      yield* queue.add("a")
      const depth = WorkqueueMetrics.forQueue("registered-q", "registered-c").depth
      assert.strictEqual((yield* withRegistry(Metric.value(depth))).value, 1, "updates go to the maker's registry")
      const global = yield* Metric.snapshot
      assert.isFalse(global.some((metric) => metric.attributes?.name === "registered-q"), "not to the default one")
    }))
})

describe("Workqueue.Make (a queue to make, tagged with its kind)", () => {
  it.effect("fifo and priority make the queues their tags name; the Maker setting defaults to fifo", () =>
    Effect.gen(function*() {
      assert.strictEqual(Workqueue.fifo._tag, "Fifo")
      assert.strictEqual(Workqueue.priority._tag, "Priority")
      const fifo = yield* Workqueue.fifo.make({ name: "make-fifo" })
      const priority = yield* Workqueue.priority.make({ name: "make-priority" })
      assert.isFalse("addWithOptions" in fifo)
      yield* priority.addWithOptions("a", { priority: 5 })
      assert.deepStrictEqual(yield* priority.takeWithPriority, { key: "a", priority: 5 })
      assert.strictEqual(yield* Workqueue.Maker, Workqueue.fifo)
      const set = yield* Effect.provide(Workqueue.Maker, Workqueue.layerMaker(Workqueue.priority))
      assert.strictEqual(set, Workqueue.priority)
    }))
})
