// The queue and the controller resolve their metric series once (packages/workqueue/src/internal/metrics.ts,
// WorkqueueMetrics.updater) instead of looking them up per update: the series they update must stay the ones
// `Metric.updateUnsafe` would have updated.
import { assert, describe, it } from "@effect/vitest"
import { Workqueue, WorkqueueMetrics } from "@reconcile/workqueue"
import { updater } from "@reconcile/workqueue/WorkqueueMetrics"
import { Effect, Metric } from "effect"
import * as ControllerMetrics from "../src/ControllerMetrics.js"
import { start, uniqueName } from "./harness.js"

describe("metric series resolved once", () => {
  it.effect("two queues of one name and controller add to the same series, in the maker's registry", () =>
    Effect.gen(function*() {
      const registry: Metric.MetricRegistry = new Map()
      const withRegistry = Effect.provideService(Metric.MetricRegistry, registry)
      const first = yield* withRegistry(Workqueue.make({ name: "shared-q", controller: "shared-c" }))
      const second = yield* withRegistry(Workqueue.make({ name: "shared-q", controller: "shared-c" }))
      yield* first.add("a")
      yield* second.add("b")
      yield* second.add("c")
      const metrics = WorkqueueMetrics.forQueue("shared-q", "shared-c")
      assert.strictEqual((yield* withRegistry(Metric.value(metrics.adds))).count, 3)
      const key = yield* second.take
      yield* second.done(key)
      const work = yield* withRegistry(Metric.value(metrics.workDuration))
      assert.strictEqual(work.count, 1)
      assert.strictEqual(registry.size, 7, "one series per metric, no duplicate")
    }))

  it.effect("an updater adds to the series with the context's ambient attributes, as Metric.updateUnsafe does", () =>
    Effect.gen(function*() {
      const registry: Metric.MetricRegistry = new Map()
      const counter = Metric.counter("metric_series_test_total", { attributes: { own: "x" } })
      const context = yield* Effect.context<never>().pipe(
        Effect.provideService(Metric.CurrentMetricAttributes, { ambient: "y" }),
        Effect.provideService(Metric.MetricRegistry, registry)
      )
      const update = updater(counter, context)
      update(2)
      counter.updateUnsafe(3, context)
      assert.strictEqual(registry.size, 1)
      const [series] = Metric.snapshotUnsafe(context)
      assert.deepStrictEqual(series!.attributes, { own: "x", ambient: "y" })
      assert.strictEqual((series!.state as Metric.CounterState<number>).count, 5)
    }))

  it.effect("a controller's reconcile metrics are the series ControllerMetrics reads", () =>
    Effect.gen(function*() {
      const name = uniqueName("series")
      const { send } = yield* start(() => Effect.void, {}, name)
      yield* send("a")
      yield* send("b")
      const metrics = ControllerMetrics.forController(name)
      assert.strictEqual((yield* Metric.value(metrics.total.success)).count, 2)
      assert.strictEqual((yield* Metric.value(metrics.reconcileTime)).count, 2)
      assert.strictEqual((yield* Metric.value(metrics.activeWorkers)).value, 0)
    }))
})
