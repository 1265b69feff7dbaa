// Ready items reach fibers blocked in `take` once the adding fiber yields (not inside its `add`): a burst of adds is
// handed out together, nothing is lost when a woken taker goes away, and shutdown still hands out what is ready.
import { assert, describe, it } from "@effect/vitest"
import { PriorityWorkqueue, Workqueue } from "@reconcile/workqueue"
import { Effect, Exit, Fiber } from "effect"

describe("Workqueue: handing ready keys to blocked takers", () => {
  it.effect("a burst of adds reaches blocked takers in FIFO order, each key once", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "handoff-burst" })
      const keys = Array.from({ length: 100 }, (_, i) => `ns/key-${i}`)
      const taken: Array<string> = []
      const worker = Effect.gen(function*() {
        while (taken.length < keys.length) {
          const key = yield* queue.take
          taken.push(key)
          yield* queue.done(key)
        }
      })
      const workers = yield* Effect.all([Effect.forkChild(worker), Effect.forkChild(worker)])
      yield* Effect.yieldNow // both workers block in take
      for (const key of keys) yield* queue.add(key)
      assert.strictEqual(yield* queue.len, keys.length, "handed out once the adding fiber yields")
      yield* queue.add("stop") // the worker still blocked when the other takes the last key
      yield* Fiber.joinAll(workers)
      assert.deepStrictEqual(taken.slice(0, keys.length), keys)
    }))

  it.effect("a woken taker that is interrupted before it runs loses nothing", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "handoff-interrupt" })
      const taker = yield* Effect.forkChild(queue.take)
      yield* Effect.yieldNow
      yield* queue.add("a")
      yield* Fiber.interrupt(taker)
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(yield* queue.take, "a")
    }))

  it.effect("shutdown hands the ready keys to blocked takers, then signals the others", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "handoff-shutdown" })
      const takers = yield* Effect.all([Effect.forkChild(queue.take), Effect.forkChild(queue.take)])
      yield* Effect.yieldNow
      yield* queue.add("a")
      yield* queue.shutdown
      const exits = yield* Effect.forEach(takers, Fiber.await)
      assert.deepStrictEqual(exits[0], Exit.succeed("a"))
      assert.isTrue(Exit.isFailure(exits[1]!))
    }))

  it.effect("a priority queue hands a burst out highest priority first", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: "handoff-priority" })
      const taker = yield* Effect.forkChild(queue.takeWithPriority)
      yield* Effect.yieldNow
      yield* queue.addWithOptions("low", { priority: -1 })
      yield* queue.addWithOptions("high", { priority: 10 })
      assert.deepStrictEqual(yield* Fiber.join(taker), { key: "high", priority: 10 })
      assert.strictEqual(yield* queue.take, "low")
    }))

  it.effect("keeps FIFO order while the ready ring wraps around and grows", () =>
    Effect.gen(function*() {
      const queue = yield* Workqueue.make({ name: "ring-wrap" })
      const keys = Array.from({ length: 100 }, (_, i) => `ns/key-${i}`)
      const taken: Array<string> = []
      for (const key of keys.slice(0, 12)) yield* queue.add(key)
      for (let i = 0; i < 10; i++) taken.push(yield* queue.take)
      for (const key of keys.slice(12)) yield* queue.add(key)
      while ((yield* queue.len) > 0) taken.push(yield* queue.take)
      assert.deepStrictEqual(taken, keys)
    }))
})
