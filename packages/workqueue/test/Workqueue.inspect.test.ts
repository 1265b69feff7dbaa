// `inspect`: what a queue holds, for an inspector — both flavours, under TestClock (it.effect starts at epoch 0).
import { assert, describe, it } from "@effect/vitest"
import { PriorityWorkqueue, Workqueue } from "@reconcile/workqueue"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"

const advance = (millis: number) => Effect.andThen(TestClock.adjust(Duration.millis(millis)), Effect.yieldNow)

describe("Workqueue.inspect", () => {
  it.effect("FIFO: waiting in take order, delayed soonest first with due times, in flight with start, dirty", () =>
    Effect.gen(function*() {
      yield* advance(1_000)
      const queue = yield* Workqueue.make({ name: "inspect-fifo" })
      yield* queue.add("a")
      yield* advance(10)
      yield* queue.add("b")
      yield* queue.addAfter("late", "5 seconds")
      yield* queue.addAfter("soon", "2 seconds")
      assert.strictEqual(yield* queue.take, "a")
      yield* advance(100)
      yield* queue.add("a") // re-added while in flight: dirty
      const snapshot = yield* queue.inspect
      assert.deepStrictEqual(snapshot, {
        waiting: [{ key: "b", priority: 0, addedAt: 1_010 }],
        delayed: [{ key: "soon", priority: 0, dueAt: 3_010 }, { key: "late", priority: 0, dueAt: 6_010 }],
        inFlight: [{ key: "a", startedAt: 1_010 }],
        dirty: ["a"]
      })
      // reading changes nothing
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* queue.inspect, snapshot)
      yield* queue.done("a")
      const after = yield* queue.inspect
      assert.deepStrictEqual(after.waiting.map((w) => w.key), ["b", "a"])
      assert.deepStrictEqual(after.inFlight, [])
      assert.deepStrictEqual(after.dirty, [])
      yield* advance(2_000)
      assert.deepStrictEqual(
        (yield* queue.inspect).delayed.map((d) => d.key),
        ["late"],
        "a due entry is no longer delayed"
      )
    }))

  it.effect("priority queue: waiting highest priority first, delayed with their priority", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "inspect-priority" })
      yield* queue.addWithOptions("low", { priority: PriorityWorkqueue.LowPriority })
      yield* queue.add("normal")
      yield* queue.addWithOptions("high", { priority: 10 })
      yield* queue.addWithOptions("retry", { priority: 5, after: "1 second" })
      const snapshot = yield* queue.inspect
      assert.deepStrictEqual(snapshot.waiting.map((w) => [w.key, w.priority]), [
        ["high", 10],
        ["normal", 0],
        ["low", PriorityWorkqueue.LowPriority]
      ])
      assert.deepStrictEqual(snapshot.delayed, [{ key: "retry", priority: 5, dueAt: 1_000 }])
      assert.deepStrictEqual(snapshot.inFlight, [])
      yield* advance(300)
      const taken = yield* queue.takeWithPriority
      assert.strictEqual(taken.key, "high")
      yield* queue.add("high") // dirty: takeable again at done
      const busy = yield* queue.inspect
      assert.deepStrictEqual(busy.inFlight, [{ key: "high", startedAt: 300 }])
      assert.deepStrictEqual(busy.dirty, ["high"])
      assert.deepStrictEqual(busy.waiting.map((w) => w.key), ["normal", "low"], "a dirty key is not takeable yet")
      yield* advance(1_000)
      const due = yield* queue.inspect
      assert.deepStrictEqual(due.delayed, [])
      assert.deepStrictEqual(due.waiting.map((w) => w.key), ["retry", "normal", "low"])
    }))
})
