/**
 * A reconcile sets the priority of its own requeue (controller-runtime v0.25's `reconcile.Result{Priority}`):
 * `Reconcile.requeueAfter(d, { priority })` and `Reconcile.withPriority(p)` (on `RequeueAfter` and `Retryable`
 * alike, as `Result.Priority` applies with an error too). Absent, the key keeps the priority it was taken at; a FIFO
 * queue ignores priorities.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter, Workqueue } from "@reconcile/workqueue"
import { Clock, Duration, Effect, Exit } from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as Reconcile from "../src/Reconcile.js"
import * as Source from "../src/Source.js"
import { advance, obj, settle, TestManager, uniqueName } from "./harness.js"

/** One worker over a channel; `outcome(name, attempt)` decides each reconcile; the log holds `name@ms`. */
const startRecording = (
  queue: "fifo" | "priority",
  outcome: (name: string, attempt: number) => Effect.Effect<void, Reconcile.Outcome>,
  priority?: Handler.Priority<ReturnType<typeof obj>>
) =>
  Effect.gen(function*() {
    const channel = yield* Source.channel<ReturnType<typeof obj>>("objects")
    const log: Array<string> = []
    const attempts = new Map<string, number>()
    yield* Controller.make({
      name: uniqueName(`requeue-priority-${queue}`),
      watches: [
        Controller.watch(
          channel.source,
          priority === undefined
            ? Handler.forObject
            : Handler.withPriority(Handler.forObject<ReturnType<typeof obj>>, priority)
        )
      ],
      reconcile: (req) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          log.push(`${req.name}@${now}`)
          const attempt = (attempts.get(req.name) ?? 0) + 1
          attempts.set(req.name, attempt)
          return outcome(req.name, attempt)
        }),
      options: {
        queue: Workqueue[queue],
        maxConcurrentReconciles: 1,
        rateLimiter: RateLimiter.exponential({ base: "1 second", max: "1 second" }),
        gracefulShutdownTimeout: 0
      }
    }).pipe(Effect.provide(TestManager))
    return { channel, log }
  })

/** `low` is reconciled first and asks for a low priority, `high` second and asks for a high one; both at +1 s. */
const twoRequeues = (queue: "fifo" | "priority") =>
  Effect.gen(function*() {
    const { channel, log } = yield* startRecording(queue, (name, attempt) => {
      if (attempt > 1) return Effect.void
      return name === "low"
        ? Reconcile.requeueAfter("1 second", { priority: Handler.LowPriority })
        : Reconcile.requeueAfter("1 second", { priority: 10 })
    })
    yield* channel.offer(Event.create(obj("low")))
    yield* channel.offer(Event.create(obj("high")))
    yield* settle
    yield* advance(1_000)
    return log
  })

describe("Reconcile.requeueAfter with a priority", () => {
  it("carries the priority; without it there is none", () => {
    const plain = Reconcile.requeueAfter("1 second")
    assert.isUndefined(plain.priority)
    assert.isFalse("priority" in plain)
    const low = Reconcile.requeueAfter("1 second", { priority: -100 })
    assert.strictEqual(low.priority, -100)
    assert.isTrue(Duration.equals(low.after, Duration.seconds(1)))
  })

  it.effect("priority queue: two keys requeued for the same time come back in priority order", () =>
    Effect.gen(function*() {
      const log = yield* twoRequeues("priority")
      assert.deepStrictEqual(log, ["low@0", "high@0", "high@1000", "low@1000"])
    }))

  it.effect("FIFO queue: the priority is ignored (the requeues come back in the order they were added)", () =>
    Effect.gen(function*() {
      const log = yield* twoRequeues("fifo")
      assert.deepStrictEqual(log, ["low@0", "high@0", "low@1000", "high@1000"])
    }))

  it.effect("the requeue's priority stays with the key through a later retry that names none", () =>
    Effect.gen(function*() {
      // `a` requeues itself at 10, then fails (Retryable, no priority): its retry keeps 10 and goes before `c`,
      // queued at 5 while a slow `blocker` holds the only worker (at the default 0, `c` would go first)
      const { channel, log } = yield* startRecording("priority", (name, attempt) => {
        if (name === "blocker") return Effect.sleep("1 second")
        if (name !== "a") return Effect.void
        if (attempt === 1) return Reconcile.requeueAfter("1 second", { priority: 10 })
        return attempt === 2 ? Reconcile.retryable("not yet") : Effect.void
      }, (e) => e.object.metadata.name === "c" ? 5 : undefined)
      yield* channel.offer(Event.create(obj("a")))
      yield* settle
      yield* advance(1_500) // a@1000 fails: its retry is due at 2000
      yield* channel.offer(Event.create(obj("blocker"))) // 1500 → 2500
      yield* settle
      yield* advance(100)
      yield* channel.offer(Event.create(obj("c")))
      yield* settle
      yield* advance(1_000)
      assert.deepStrictEqual(log, ["a@0", "a@1000", "blocker@1500", "a@2500", "c@2500"])
    }))
})

describe("Reconcile.withPriority", () => {
  it.effect("sets the priority of RequeueAfter and Retryable, keeps their fields, leaves Terminal alone", () =>
    Effect.gen(function*() {
      const requeue = yield* Effect.flip(Reconcile.withPriority(Reconcile.requeueAfter("2 seconds"), 7))
      assert.isTrue(Reconcile.isRequeueAfter(requeue))
      assert.strictEqual(requeue.priority, 7)
      const retry = yield* Effect.flip(Reconcile.retryable(new Error("boom")).pipe(Reconcile.withPriority(-3)))
      assert.isTrue(Reconcile.isRetryable(retry) && retry.message === "boom" && retry.priority === -3)
      const terminal = Reconcile.terminal("bad")
      assert.strictEqual(yield* Effect.flip(Reconcile.withPriority(terminal, 1)), terminal)
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(Reconcile.withPriority(Effect.void, 1))))
    }))

  it.effect("priority queue: retries of two failing keys come back in the priority their outcome gave", () =>
    Effect.gen(function*() {
      const { channel, log } = yield* startRecording("priority", (name, attempt) => {
        if (attempt > 1) return Effect.void
        const failed = Reconcile.retryable(`${name} failed`)
        return name === "urgent" ? Reconcile.withPriority(failed, 100) : failed
      })
      yield* channel.offer(Event.create(obj("normal")))
      yield* channel.offer(Event.create(obj("urgent")))
      yield* settle
      yield* advance(1_000)
      assert.deepStrictEqual(log, ["normal@0", "urgent@0", "urgent@1000", "normal@1000"])
    }))
})
