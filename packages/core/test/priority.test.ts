/**
 * Priorities end to end (initial list and resyncs at `LowPriority`, handler and source rules, a key keeps its
 * priority through retries) and the liveness of rate-limited retries with every queue × `outOfBandFailures`.
 */
import { assert, describe, it } from "@effect/vitest"
import { PriorityWorkqueue, RateLimiter, Workqueue } from "@reconcile/workqueue"
import { Arbitrary, Clock, Duration, Effect, pipe, Schema } from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as Reconcile from "../src/Reconcile.js"
import * as Source from "../src/Source.js"
import { constantFrom } from "./arbitraries.js"
import { advance, obj, settle, start, TestManager, uniqueName } from "./harness.js"

interface Versioned {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string }
}

const versioned = (name: string, resourceVersion: string): Versioned => ({
  metadata: { name, namespace: "default", resourceVersion }
})

const slowLimiter = RateLimiter.exponential({ base: "1 second", max: "100 seconds" })

type Queue = "fifo" | "priority"
type OutOfBand = Controller.OutOfBandFailures
const combinations: ReadonlyArray<readonly [Queue, OutOfBand]> = [
  ["fifo", "count"],
  ["fifo", "ignore"],
  ["priority", "count"],
  ["priority", "ignore"]
]

/** Starts a controller on two channels (`a`, `b`) whose reconcile records `name@ms` of every attempt. */
const startRecording = (
  options: Controller.Options,
  outcome: (name: string) => Effect.Effect<void, Reconcile.Outcome> = () => Effect.void,
  watches: (a: Source.Source<Versioned>, b: Source.Source<Versioned>) => ReadonlyArray<Controller.Watch> = (a, b) => [
    Controller.watch(a, Handler.forObject),
    Controller.watch(b, Handler.forObject)
  ]
) =>
  Effect.gen(function*() {
    const a = yield* Source.channel<Versioned>("a")
    const b = yield* Source.channel<Versioned>("b")
    const log: Array<string> = []
    const controller = yield* Controller.make({
      name: uniqueName("priority"),
      watches: watches(a.source, b.source),
      reconcile: (req) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          log.push(`${req.name}@${now}`)
          return outcome(req.name)
        }),
      options
    }).pipe(Effect.provide(TestManager))
    return { a, b, log, controller }
  })

describe("Handler.lowPriorityWhenUnchanged (the default rule of every watch)", () => {
  it("initial-list creates and same-resourceVersion updates are low priority; everything else has no opinion", () => {
    const rule = Handler.lowPriorityWhenUnchanged
    assert.strictEqual(Handler.LowPriority, -100)
    assert.strictEqual(rule(Event.create(versioned("a", "1"), { initial: true })), Handler.LowPriority)
    assert.isUndefined(rule(Event.create(versioned("a", "1"))))
    assert.strictEqual(rule(Event.update(versioned("a", "7"), versioned("a", "7"))), Handler.LowPriority)
    assert.isUndefined(rule(Event.update(versioned("a", "7"), versioned("a", "8"))))
    assert.isUndefined(rule(Event.update(obj("a"), obj("a"))), "no resourceVersion: not taken for a resync")
    assert.isUndefined(rule(Event.delete(versioned("a", "1"))))
    assert.isUndefined(rule(Event.generic(versioned("a", "1"))))
  })
})

describe("withPriority (handlers and sources)", () => {
  it.effect("a number or a rule per event, data-first or pipeable; the handler still maps events as before", () =>
    Effect.gen(function*() {
      const event = Event.create(versioned("a", "1"))
      const handler = pipe(Handler.forObject<Versioned>, Handler.withPriority(3))
      assert.strictEqual(handler.priority?.(event), 3)
      assert.deepStrictEqual(yield* handler(event), yield* Handler.forObject(event))
      const rule = Handler.withPriority(Handler.forObject<Versioned>, (e) => e._tag === "Create" ? 1 : undefined)
      assert.strictEqual(rule.priority?.(event), 1)
      assert.isUndefined(rule.priority?.(Event.generic(versioned("a", "1"))))
      const { source } = yield* Source.channel<Versioned>("s")
      const prioritized = pipe(source, Source.withPriority(-5))
      assert.strictEqual(prioritized.priority?.(event), -5)
      assert.strictEqual(prioritized.name, "s")
      const filtered = Source.filter(prioritized, () => true)
      assert.strictEqual(filtered.priority?.(event), -5, "combinators keep the source's rule")
      assert.isUndefined(source.priority, "a plain source has no rule")
      const resync = Source.periodic("resync", "1 minute", Effect.succeed([versioned("a", "1")]))
      assert.strictEqual(resync.priority?.(Event.generic(versioned("a", "1"))), Handler.LowPriority, "a resync")
    }))
})

describe("PriorityWorkqueue: FIFO within a priority", () => {
  it.effect("a key raised to a higher priority queues behind the keys already at that priority (controller-runtime)", () =>
    Effect.gen(function*() {
      const queue = yield* PriorityWorkqueue.make({ name: uniqueName("pq-raise") })
      yield* queue.addWithOptions("listed", { priority: Handler.LowPriority })
      yield* queue.add("changed-1")
      yield* queue.addWithOptions("listed", { priority: 0 }) // a real change of a listed object
      yield* queue.add("changed-2")
      const taken: Array<string> = []
      while ((yield* queue.len) > 0) taken.push((yield* queue.takeWithPriority).key)
      assert.deepStrictEqual(taken, ["changed-1", "listed", "changed-2"])
    }))
})

describe("priority after a restart", () => {
  const N = 10_000
  /** The initial list of N objects is queued, workers reconcile (10 ms each); at t=50 ms two real changes arrive. */
  const restart = (queue: Queue) =>
    Effect.gen(function*() {
      const source = yield* Source.channel<Versioned>("objects")
      for (let i = 0; i < N; i++) {
        yield* source.offer(Event.create(versioned(`obj-${i}`, "1"), { initial: true }))
      }
      const order: Array<string> = []
      const controller = yield* Controller.make({
        name: uniqueName(`restart-${queue}`),
        watches: [Controller.watch(source.source, Handler.forObject)],
        reconcile: (req) => Effect.andThen(Effect.sleep("10 millis"), Effect.sync(() => void order.push(req.name))),
        options: { queue: Workqueue[queue], rateLimiter: slowLimiter, gracefulShutdownTimeout: 0 }
      }).pipe(Effect.provide(TestManager))
      // the source hands the list to the queue over a few scheduler rounds (one per `settle`): let it finish
      for (let round = 0; round < 100 && (yield* controller.queue.len) < N - 1; round++) yield* settle
      assert.strictEqual(yield* controller.queue.len, N - 1, "the initial list is queued, one key in flight")
      yield* advance(50)
      assert.strictEqual(order.length, 5, "the initial list is being worked through")
      // a real change of a listed object (a new resourceVersion) and a new object
      yield* source.offer(Event.update(versioned(`obj-${N - 1}`, "1"), versioned(`obj-${N - 1}`, "2")))
      yield* source.offer(Event.create(versioned("new", "3")))
      yield* settle
      yield* advance(30)
      return order
    })

  it.effect("priority queue: a real change is reconciled before 10,000 initial-list keys", () =>
    Effect.gen(function*() {
      const order = yield* restart("priority")
      assert.isAtMost(order.length, 8)
      // the reconcile in flight at 50 ms ends at 60 ms; the two real changes come next, in arrival order
      assert.deepStrictEqual(order.slice(-2), [`obj-${N - 1}`, "new"])
      assert.isTrue(order.slice(0, -2).every((name) => /^obj-\d$/.test(name)), order.join(","))
    }))

  it.effect("FIFO queue (for contrast): the real changes wait behind the whole initial list", () =>
    Effect.gen(function*() {
      const order = yield* restart("fifo")
      assert.notInclude(order, "new")
      yield* advance(N * 10)
      assert.strictEqual(order.length, N + 1)
      assert.strictEqual(order[N - 1], `obj-${N - 1}`, "the changed object keeps its place in the list")
      assert.strictEqual(order[N], "new", "the new object is reconciled last")
    }))
})

describe("priorities from handlers and sources", () => {
  it.effect("Handler.withPriority and Source.withPriority order the queue; a handler's rule comes first", () =>
    Effect.gen(function*() {
      const { a, b, log } = yield* startRecording(
        { queue: Workqueue.priority, maxConcurrentReconciles: 1 },
        (name) => name === "block" ? Effect.sleep("1 second") : Effect.void,
        (a, b) => [
          // `a`: the source says 5, the handler says 10 for names starting with "h" and has no opinion otherwise
          Controller.watch(
            Source.withPriority(a, 5),
            Handler.withPriority(
              Handler.forObject<Versioned>,
              (e) => e.object.metadata.name.startsWith("h") ? 10 : undefined
            )
          ),
          Controller.watch(b, Handler.forObject)
        ]
      )
      yield* b.offer(Event.create(versioned("block", "1")))
      yield* settle // `block` runs until t=1 s; meanwhile the queue fills
      yield* b.offer(Event.create(versioned("listed", "1"), { initial: true }))
      yield* b.offer(Event.create(versioned("plain", "1")))
      yield* a.offer(Event.create(versioned("source", "1")))
      yield* a.offer(Event.create(versioned("h-handler", "1"), { initial: true }))
      yield* settle
      yield* advance(1_000)
      assert.deepStrictEqual(log, ["block@0", "h-handler@1000", "source@1000", "plain@1000", "listed@1000"])
    }))

  it.effect("a FIFO queue ignores priorities", () =>
    Effect.gen(function*() {
      const { b, log } = yield* startRecording(
        { maxConcurrentReconciles: 1 },
        (name) => name === "block" ? Effect.sleep("1 second") : Effect.void
      )
      yield* b.offer(Event.create(versioned("block", "1")))
      yield* settle
      yield* b.offer(Event.create(versioned("listed", "1"), { initial: true }))
      yield* b.offer(Event.create(versioned("plain", "1")))
      yield* settle
      yield* advance(1_000)
      assert.deepStrictEqual(log, ["block@0", "listed@1000", "plain@1000"])
    }))

  it.effect("a key keeps its priority through rate-limited retries and requeueAfter", () =>
    Effect.gen(function*() {
      const attempts = new Map<string, number>()
      const { a, log } = yield* startRecording(
        { queue: Workqueue.priority, maxConcurrentReconciles: 1, rateLimiter: slowLimiter },
        (name) => {
          const n = attempts.get(name) ?? 0
          attempts.set(name, n + 1)
          if (name === "busy") return n === 0 ? Effect.sleep("3 seconds") : Effect.void
          if (n > 0) return Effect.void
          return name === "low-retry" ? Reconcile.retryable("once") : Reconcile.requeueAfter("1 second")
        }
      )
      // t=0: two objects of the initial list (low priority) fail once / requeue: both due again at t=1 s
      yield* a.offer(Event.create(versioned("low-retry", "1"), { initial: true }))
      yield* a.offer(Event.create(versioned("low-requeue", "1"), { initial: true }))
      yield* settle
      yield* advance(100)
      // t=0.1 s: a real change keeps the only worker busy until t=3.1 s; t=0.2 s: another real change waits
      yield* a.offer(Event.create(versioned("busy", "1")))
      yield* settle
      yield* advance(100)
      yield* a.offer(Event.create(versioned("real", "1")))
      yield* settle
      yield* advance(3_000)
      // queued first, but at low priority still: `real` (priority 0) goes before them
      assert.deepStrictEqual(log, [
        "low-retry@0",
        "low-requeue@0",
        "busy@100",
        "real@3100",
        "low-retry@3100",
        "low-requeue@3100"
      ])
    }))
})

describe("the 19 s scenario: an always-failing key, exponential 1 s → 100 s, an extra event at 19 s", () => {
  // count, FIFO: the failure at 19 s counts (32 s → 51 s) but the retry scheduled for 31 s still fires; 31 s → 64 s.
  // count, priority: the event at 19 s consumes the retry at 31 s (the queue merges adds); 19 s → 32 s → 51 s.
  // ignore, both: the failure at 19 s does not call the limiter; the retry at 31 s stands (the priority queue gets it
  // back), then 32 s → 63 s, 64 s → 127 s, 100 s (max) → 227 s, 327 s.
  const expected: Record<Queue, Record<OutOfBand, ReadonlyArray<number>>> = {
    fifo: {
      count: [0, 1, 3, 7, 15, 19, 31, 95, 195, 295, 395],
      ignore: [0, 1, 3, 7, 15, 19, 31, 63, 127, 227, 327]
    },
    priority: {
      count: [0, 1, 3, 7, 15, 19, 51, 115, 215, 315],
      ignore: [0, 1, 3, 7, 15, 19, 31, 63, 127, 227, 327]
    }
  }
  for (const [queue, outOfBandFailures] of combinations) {
    it.effect(`queue: ${queue}, outOfBandFailures: ${outOfBandFailures} — retries never stop`, () =>
      Effect.gen(function*() {
        const attempts: Array<number> = []
        const { send } = yield* start(
          () =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              attempts.push(now / 1_000)
              return Reconcile.retryable("still failing")
            }),
          { queue: Workqueue[queue], outOfBandFailures, rateLimiter: slowLimiter }
        )
        yield* send("k")
        yield* advance(19_000)
        yield* send("k")
        yield* advance(381_000)
        assert.deepStrictEqual(attempts, expected[queue][outOfBandFailures])
      }))
  }
})

describe("outOfBandFailures: \"ignore\" when the queue no longer holds the scheduled retry", () => {
  it.effect("FIFO: an older delayed entry of the key fired first and consumed it; the retry is added again", () =>
    Effect.gen(function*() {
      const attempts: Array<number> = []
      const { send } = yield* start(
        () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            attempts.push(now)
            return attempts.length === 2 ? Effect.void : Reconcile.retryable("failing")
          }),
        { outOfBandFailures: "ignore", rateLimiter: slowLimiter }
      )
      yield* send("k") // t=0 fails → retry at 1 s
      yield* send("k") // t=0 succeeds: the backoff is forgotten, the queue's delayed entry for 1 s stays
      yield* advance(1)
      yield* send("k") // t=1 ms fails → retry at 1.001 s, which the queue folds into its entry for 1 s
      yield* advance(999) // t=1 s the old entry fires, fails while the retry at 1.001 s is scheduled: no limiter call
      yield* advance(10_000) // t=1.001 s the retry runs, fails → 2 s → 3.001 s → 4 s → 7.001 s
      assert.deepStrictEqual(attempts, [0, 0, 1, 1_000, 1_001, 3_001, 7_001])
    }))
})

const integer = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const scenario = Arbitrary.all({
  setting: constantFrom(...combinations),
  events: Arbitrary.array(
    Arbitrary.all({ after: integer(0, 6_000), key: constantFrom("a", "b", "c") }),
    { minLength: 1, maxLength: 20 }
  ),
  // whether each attempt fails (mostly) or succeeds
  fails: Arbitrary.array(constantFrom(true, true, true, false), { minLength: 1, maxLength: 30 })
})

interface Run {
  readonly key: string
  readonly at: number
  failed: boolean
  /** When the retry of this failed run is due at the latest: what the limiter said. */
  deadline?: number | undefined
  limiterCalled: boolean
}

describe("liveness of retries (property)", () => {
  it.effect.prop(
    "every failing key has a retry scheduled no later than the limiter says (both queues, both settings)",
    [scenario],
    ([{ events, fails, setting: [queue, outOfBandFailures] }]) =>
      Effect.gen(function*() {
        const runs: Array<Run> = []
        const lastRun = new Map<string, Run>()
        let attempt = 0
        const recordingLimiter = Effect.map(
          RateLimiter.exponential({ base: "1 second", max: "16 seconds" }),
          (limiter): RateLimiter.RateLimiter => ({
            ...limiter,
            when: (key) =>
              Effect.tap(limiter.when(key), (delay) =>
                Effect.sync(() => {
                  const run = lastRun.get(key.slice("default/".length))!
                  run.limiterCalled = true
                  run.deadline = run.at + Duration.toMillis(delay)
                }))
          })
        )
        const { channel } = yield* start(
          (req) =>
            Effect.gen(function*() {
              const run: Run = {
                key: req.name,
                at: yield* Clock.currentTimeMillis,
                failed: false,
                limiterCalled: false
              }
              runs.push(run)
              lastRun.set(req.name, run)
              run.failed = fails[attempt++ % fails.length]!
              if (run.failed) return yield* Reconcile.retryable("random failure")
            }),
          { queue: Workqueue[queue], outOfBandFailures, rateLimiter: recordingLimiter, maxConcurrentReconciles: 2 }
        )
        for (const e of events) {
          yield* advance(e.after)
          yield* channel.offer(Event.create(obj(e.key)))
          yield* settle
        }
        for (let i = 0; i < 8; i++) yield* advance(10_000)
        const end = yield* Clock.currentTimeMillis

        for (const key of ["a", "b", "c"]) {
          const keyRuns = runs.filter((r) => r.key === key)
          let pending: number | undefined
          keyRuns.forEach((run, i) => {
            if (!run.failed) {
              pending = undefined
              return
            }
            if (!run.limiterCalled) {
              // Only "ignore" may skip the limiter, and only while a retry is scheduled after this failure.
              assert.strictEqual(outOfBandFailures, "ignore", `${key}@${run.at}: the limiter was not asked`)
              assert.isTrue(pending !== undefined && pending > run.at, `${key}@${run.at}: no retry was scheduled`)
              run.deadline = pending
            }
            pending = run.deadline
            if (run.deadline! > end) return
            const next = keyRuns[i + 1]
            assert.isDefined(next, `${key}: the failure at ${run.at} was never retried (due by ${run.deadline})`)
            assert.isAtMost(next!.at, run.deadline!, `${key}: the retry after ${run.at} came late`)
          })
        }
      }),
    { timeout: 120_000, arbitrary: { runs: 150, size: 30 } }
  )
})
