// The queue keeps its metric series itself (read by the registry at export): they must report what effect's own
// series of the same type would, and be shared as effect's are.
import { assert, describe, it } from "@effect/vitest"
import { Workqueue, WorkqueueMetrics } from "@reconcile/workqueue"
import { Duration, Effect, Metric } from "effect"
import { TestClock } from "effect/testing"

const advance = (millis: number) => Effect.andThen(TestClock.adjust(Duration.millis(millis)), Effect.yieldNow)

describe("WorkqueueMetrics: the queue's series", () => {
  it.effect("histograms report the state of an effect histogram fed the same durations", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "series-histogram" })
      const reference = Metric.histogram("reference_seconds", {
        boundaries: Metric.exponentialBoundaries({ start: 1e-8, factor: 10, count: 12 })
      })
      const durations = [0, 0.25, 3, 0, 1500, 0.001]
      for (const seconds of durations) {
        yield* queue.add("a")
        yield* advance(seconds * 1000)
        yield* queue.take
        yield* queue.done("a")
        yield* Metric.update(reference, seconds)
      }
      const metrics = WorkqueueMetrics.forQueue("series-histogram")
      assert.deepStrictEqual(yield* Metric.value(metrics.queueDuration), yield* Metric.value(reference))
      const empty = Metric.histogram("reference_empty_seconds", {
        boundaries: Metric.exponentialBoundaries({ start: 1e-8, factor: 10, count: 12 })
      })
      yield* Workqueue.make({ name: "series-histogram-empty" })
      assert.deepStrictEqual(
        yield* Metric.value(WorkqueueMetrics.forQueue("series-histogram-empty").workDuration),
        yield* Metric.value(empty)
      )
    }))

  it.effect("counters and gauges report what effect's would", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "series-number" })
      const metrics = WorkqueueMetrics.forQueue("series-number")
      yield* queue.add("a")
      yield* queue.add("b")
      assert.deepStrictEqual(yield* Metric.value(metrics.adds), { count: 2, incremental: false })
      assert.deepStrictEqual(yield* Metric.value(metrics.depth), { value: 2 })
    }))

  it.effect("two queues with the same name and controller record into one series", () =>
    Effect.gen(function*() {
      const first = yield* Workqueue.make({ name: "series-shared", controller: "c" })
      const second = yield* Workqueue.make({ name: "series-shared", controller: "c" })
      yield* first.add("a")
      yield* second.add("a")
      yield* second.add("b")
      assert.strictEqual((yield* Metric.value(WorkqueueMetrics.forQueue("series-shared", "c").adds)).count, 3)
    }))

  it.effect("a series that exists before the queue is kept and recorded into", () =>
    Effect.gen(function*() {
      const metrics = WorkqueueMetrics.forQueue("series-existing")
      yield* Metric.update(metrics.adds, 5)
      const queue = yield* Workqueue.make({ name: "series-existing" })
      yield* queue.add("a")
      assert.strictEqual((yield* Metric.value(metrics.adds)).count, 6)
    }))
})
