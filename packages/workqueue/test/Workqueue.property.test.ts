import { assert, describe, it } from "@effect/vitest"
import { RateLimiter, Workqueue } from "@reconcile/workqueue"
import { Arbitrary, Duration, Effect, Schema } from "effect"
import { TestClock } from "effect/testing"

/**
 * A reference model of client-go's delaying, rate-limited queue, written as
 * plainly as possible. The property runs random operations against the real
 * queue and the model and compares them after every step.
 */
class Model {
  now = 0
  queue: Array<string> = []
  dirty = new Set<string>()
  processing = new Set<string>()
  delayed = new Map<string, { readyAt: number; seq: number }>()
  seq = 0
  failures = new Map<string, number>()
  shuttingDown = false

  add(key: string) {
    if (this.shuttingDown || this.dirty.has(key)) return
    this.dirty.add(key)
    if (!this.processing.has(key)) this.queue.push(key)
  }
  addAfter(key: string, delay: number) {
    if (this.shuttingDown) return
    if (delay <= 0) return this.add(key)
    const readyAt = this.now + delay
    const entry = this.delayed.get(key)
    if (entry === undefined) this.delayed.set(key, { readyAt, seq: this.seq++ })
    else if (readyAt < entry.readyAt) entry.readyAt = readyAt
  }
  addRateLimited(key: string) {
    const n = this.failures.get(key) ?? 0
    this.failures.set(key, n + 1)
    this.addAfter(key, Math.min(100 * 2 ** n, 10_000))
  }
  take(): string {
    const key = this.queue.shift()!
    this.dirty.delete(key)
    this.processing.add(key)
    return key
  }
  done(key: string) {
    if (!this.processing.delete(key)) return
    if (this.dirty.has(key)) this.queue.push(key)
  }
  advance(millis: number) {
    const target = this.now + millis
    const due = [...this.delayed.entries()]
      .filter(([, e]) => e.readyAt <= target)
      .sort(([, a], [, b]) => a.readyAt - b.readyAt || a.seq - b.seq)
    for (const [key] of due) {
      this.delayed.delete(key)
      this.add(key)
    }
    this.now = target
  }
  shutdown() {
    this.shuttingDown = true
    this.delayed.clear()
  }
}

// effect 4 replaced FastCheck with its own `Arbitrary` (derived from Schemas), which has no weighted `oneof`:
// the generators below are the fast-check ones of the effect 3 version, rebuilt from Schemas, with the same weights.
const integer = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

type ArbitraryValue<T> = T extends Arbitrary.Arbitrary<infer A> ? A : never

/** fast-check's weighted `oneof`: a branch is picked with probability weight / (sum of weights). */
const oneof = <const Branches extends ReadonlyArray<{ arbitrary: Arbitrary.Arbitrary<unknown>; weight: number }>>(
  ...branches: Branches
): Arbitrary.Arbitrary<ArbitraryValue<Branches[number]["arbitrary"]>> => {
  const total = branches.reduce((sum, branch) => sum + branch.weight, 0)
  // Picks from a wide range, modulo `total`: bounded integers are biased towards their bounds, the remainders are not.
  return Arbitrary.flatMap(Arbitrary.schema(integer(0, total * 1024 - 1)), (pick) => {
    let rest = pick % total
    const branch = branches.find((branch) => (rest -= branch.weight) < 0) ?? branches[0]!
    return branch.arbitrary as Arbitrary.Arbitrary<ArbitraryValue<Branches[number]["arbitrary"]>>
  })
}

const key = Schema.Literals(["a", "b", "c", "d", "e"])
const record = <const Fields extends Schema.Struct.Fields>(fields: Fields) => Arbitrary.schema(Schema.Struct(fields))
const op = oneof(
  { arbitrary: record({ op: Schema.Literal("add"), key }), weight: 4 },
  { arbitrary: record({ op: Schema.Literal("addAfter"), key, delay: integer(-100, 3_000) }), weight: 3 },
  { arbitrary: record({ op: Schema.Literal("addRateLimited"), key }), weight: 2 },
  { arbitrary: record({ op: Schema.Literal("take") }), weight: 4 },
  { arbitrary: record({ op: Schema.Literal("done"), index: integer(0, 2 ** 31 - 1) }), weight: 3 },
  { arbitrary: record({ op: Schema.Literal("strayDone"), key }), weight: 1 },
  { arbitrary: record({ op: Schema.Literal("forget"), key }), weight: 1 },
  { arbitrary: record({ op: Schema.Literal("advance"), millis: integer(1, 2_000) }), weight: 3 },
  { arbitrary: record({ op: Schema.Literal("shutdown") }), weight: 1 }
)

describe("Workqueue against a reference model", () => {
  it.effect.prop(
    "never two holders of a key, FIFO among ready keys, nothing lost, len bounded, nothing accepted after shutdown",
    [Arbitrary.array(op, { maxLength: 60 })],
    ([ops]) =>
      Effect.gen(function*() {
        const rateLimiter = yield* RateLimiter.exponential({ base: "100 millis", max: "10 seconds" })
        const queue = yield* Workqueue.make({ name: "model", rateLimiter })
        const model = new Model()
        const held = new Set<string>()
        const check = Effect.gen(function*() {
          const len = yield* queue.len
          assert.strictEqual(len, model.queue.length, "len matches the model")
          assert.isAtMost(len, new Set([...model.queue]).size, "len never exceeds the distinct waiting keys")
        })
        for (const step of ops) {
          switch (step.op) {
            case "add":
              model.add(step.key)
              yield* queue.add(step.key)
              break
            case "addAfter":
              model.addAfter(step.key, step.delay)
              yield* queue.addAfter(step.key, Duration.millis(step.delay))
              break
            case "addRateLimited":
              model.addRateLimited(step.key)
              yield* queue.addRateLimited(step.key)
              break
            case "take": {
              if (model.queue.length === 0) break
              const expected = model.take()
              const taken = yield* queue.take
              assert.strictEqual(taken, expected, "FIFO among ready keys")
              assert.isFalse(held.has(taken), "a key is never held by two takers before done")
              held.add(taken)
              break
            }
            case "done": {
              if (held.size === 0) break
              const k = [...held][step.index % held.size]!
              held.delete(k)
              model.done(k)
              yield* queue.done(k)
              break
            }
            case "strayDone":
              if (held.has(step.key)) break
              model.done(step.key)
              yield* queue.done(step.key)
              break
            case "forget":
              model.failures.delete(step.key)
              yield* queue.forget(step.key)
              assert.strictEqual(yield* queue.numRequeues(step.key), 0)
              break
            case "advance":
              model.advance(step.millis)
              yield* TestClock.adjust(Duration.millis(step.millis))
              yield* Effect.yieldNow
              break
            case "shutdown":
              model.shutdown()
              yield* queue.shutdown
              break
          }
          yield* check
        }

        // Nothing lost: every key still owed a run (waiting, dirty or delayed) is handed out after its last add.
        const owed = new Set([...model.dirty, ...model.delayed.keys()])
        const shutDownBefore = model.shuttingDown
        model.advance(20_000)
        yield* TestClock.adjust("20 seconds")
        yield* Effect.yieldNow
        for (const k of held) {
          model.done(k)
          yield* queue.done(k)
        }
        const flushed = new Set<string>()
        while ((yield* queue.len) > 0) {
          const k = yield* queue.take
          flushed.add(k)
          yield* queue.done(k)
        }
        assert.deepStrictEqual([...flushed].sort(), [...owed].sort(), "every owed key is handed out")
        if (shutDownBefore) {
          assert.strictEqual((yield* Effect.flip(queue.take))._tag, "WorkqueueShutdown")
        }
      }),
    // v4: `fastCheck: { numRuns }` is `arbitrary: { runs }`; `size: 60` lets arrays reach maxLength as fast-check's did
    { timeout: 120_000, arbitrary: { runs: 200, size: 60 } }
  )
})
