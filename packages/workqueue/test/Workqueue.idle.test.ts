// The FIFO queue keeps the entries of finished keys for their next add, and drops them all once they outnumber the
// others (and a fixed floor): keys in flight or waiting must come through such a sweep untouched.
import { assert, describe, it } from "@effect/vitest"
import { Workqueue, WorkqueueMetrics } from "@reconcile/workqueue"
import { Effect, Metric } from "effect"

describe("Workqueue: entries of finished keys", () => {
  it.effect("keys in flight, dirty or waiting survive the drop of idle entries; dropped keys come back", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "idle-sweep" })
      yield* queue.add("busy")
      yield* queue.add("dirty")
      assert.strictEqual(yield* queue.take, "busy")
      assert.strictEqual(yield* queue.take, "dirty")
      yield* queue.add("dirty")
      yield* queue.add("waiting")
      // 40,000 distinct keys through add → take → done, behind "waiting": the idle entries are dropped on the way.
      const keys = Array.from({ length: 40_000 }, (_, i) => `ns/key-${i}`)
      for (const key of keys) yield* queue.add(key)
      assert.strictEqual(yield* queue.take, "waiting")
      for (const key of keys) {
        assert.strictEqual(yield* queue.take, key)
        yield* queue.done(key)
      }
      yield* queue.done("busy")
      assert.strictEqual(yield* queue.len, 0, "a key in flight and not re-added is not queued at done")
      yield* queue.done("dirty")
      assert.strictEqual(yield* queue.take, "dirty", "a dirty key is queued again at done")
      yield* queue.done("dirty")
      yield* queue.done("waiting")
      // Every key, dropped or kept, is added and handed out again like a new one.
      for (const key of keys) yield* queue.add(key)
      yield* queue.add(keys[0]!)
      assert.strictEqual(yield* queue.len, keys.length)
      for (const key of keys) assert.strictEqual(yield* queue.take, key)
      const metrics = WorkqueueMetrics.forQueue("idle-sweep")
      assert.strictEqual((yield* Metric.value(metrics.adds)).count, 4 + 2 * keys.length)
      assert.strictEqual((yield* Metric.value(metrics.depth)).value, 0)
    }))
})
