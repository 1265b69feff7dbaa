// `done` finds a key among the keys in flight by scanning them while there are few (up to 16, as many as a
// controller has workers), and through the queue's map beyond: both paths must follow client-go's rules.
import { assert, describe, it } from "@effect/vitest"
import { Workqueue, WorkqueueMetrics } from "@reconcile/workqueue"
import { Effect, Metric } from "effect"

/** A small seeded generator (mulberry32), so that every run draws the same orders. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Takes everything that is ready now, without blocking. */
const drainReady = (queue: Workqueue.Workqueue.Service) =>
  Effect.gen(function*() {
    const keys: Array<string> = []
    while ((yield* queue.len) > 0) keys.push(yield* queue.take)
    return keys
  })

describe("Workqueue: many keys in flight", () => {
  for (const inFlight of [3, 16, 17, 60]) {
    it.effect(`${inFlight} keys in flight, done in any order: re-added keys come back once, the others never`, () =>
      Effect.gen(function*() {
        const next = random(inFlight)
        for (let run = 0; run < 20; run++) {
          // A random order of done, and a random set of keys re-added while processing.
          const order = Array.from({ length: inFlight }, (_, i) => i)
          for (let i = order.length - 1; i > 0; i--) {
            const j = Math.floor(next() * (i + 1))
            ;[order[i], order[j]] = [order[j]!, order[i]!]
          }
          const readded = order.filter(() => next() < 0.4).reverse()
          const name = `inflight-${inFlight}-${run}`
          const queue = yield* Workqueue.make({ name })
          const keys = Array.from({ length: inFlight }, (_, i) => `ns/key-${i}`)
          for (const key of keys) yield* queue.add(key)
          assert.deepStrictEqual(yield* drainReady(queue), keys)
          // Re-added while processing: dirty, not ready until done.
          for (const i of readded) yield* queue.add(keys[i]!)
          assert.strictEqual(yield* queue.len, 0)
          yield* queue.done("ns/unknown")
          for (const i of order) {
            // A key string equal to, but not the same object as, the one `take` returned.
            yield* queue.done(`ns/${"key-" + i}`)
            yield* queue.done(keys[i]!) // a second done is a no-op
          }
          const back = yield* drainReady(queue)
          assert.deepStrictEqual(
            [...back].sort(),
            readded.map((i) => keys[i]!).sort(),
            "every re-added key comes back exactly once"
          )
          // Re-queued keys come back in the order they were done.
          assert.deepStrictEqual(back, order.filter((i) => readded.includes(i)).map((i) => keys[i]!))
          for (const key of back) yield* queue.done(key)
          const metrics = WorkqueueMetrics.forQueue(name)
          yield* queue.addAfter("unused", "1 hour")
          assert.strictEqual((yield* Metric.value(metrics.workDuration)).count, inFlight + back.length)
          assert.strictEqual((yield* Metric.value(metrics.depth)).value, 0)
        }
      }))
  }
})
