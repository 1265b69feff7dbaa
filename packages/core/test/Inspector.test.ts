// @effect/vitest 4: `it.effect` runs scoped with TestClock — the inspector's answers at exact virtual times.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Option, Schema } from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as Inspector from "../src/Inspector.js"
import type { Predicate } from "../src/Predicates.js"
import * as Reconcile from "../src/Reconcile.js"
import type * as Request from "../src/Request.js"
import * as Source from "../src/Source.js"
import { advance, type Obj, obj, settle, start, TestManager, uniqueName } from "./harness.js"

/** A controller watching a channel of `Obj`s, made with `inspector` in its context. */
const startInspected = (
  inspector: Inspector.Inspector.Service,
  reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome>,
  options: Controller.Options = {}
) => start(reconcile, options).pipe(Effect.provideService(Inspector.Inspector, inspector))

/** `GET …/keys/:key`'s answer, checked against its Schema. */
const keyOf = (inspector: Inspector.Inspector.Service, controller: string, key: string) =>
  Effect.map(inspector.key(controller, key), (found) => {
    assert.isTrue(Option.isSome(found), `the inspector knows ${key}`)
    return Schema.decodeUnknownSync(Inspector.Api.Key)(Option.getOrThrow(found))
  })

const keysOf = (inspector: Inspector.Inspector.Service, controller: string, query?: Inspector.Api.KeysQuery) =>
  Effect.map(
    inspector.keys(controller, query),
    (found) => Schema.decodeUnknownSync(Inspector.Api.Keys)(Option.getOrThrow(found))
  )

describe("Inspector", () => {
  it.effect(
    "a failing key: n failures and its next due time after the default limiter's backoff (5, 10, 20, 40 ms)",
    () =>
      Effect.gen(function*() {
        const inspector = yield* Inspector.make()
        const { name, send } = yield* startInspected(
          inspector,
          () => Effect.fail(Reconcile.retryable(new Error("the database is down")))
        )
        const t0 = yield* Clock.currentTimeMillis
        yield* send("a")
        // RateLimiter.controllerDefault: max(exponential 5 ms · 2ⁿ, a bucket of 100 that is not empty: 0)
        let at = t0
        for (const [n, delay] of [[1, 5], [2, 10], [3, 20], [4, 40]] as const) {
          const key = yield* keyOf(inspector, name, "default/a")
          assert.strictEqual(key.state, "failing")
          assert.strictEqual(key.reason, "backoff")
          assert.strictEqual(key.limiter.failures, n)
          assert.strictEqual(key.dueAt, at + delay, `failure ${n}: due ${delay} ms after it`)
          assert.strictEqual(key.reconciles.length, n)
          const last = key.reconciles[n - 1]!
          assert.strictEqual(last.attempt, n)
          assert.strictEqual(last.outcome, "error")
          assert.strictEqual(last.startedAt, at)
          assert.strictEqual(last.durationMs, 0)
          assert.include(last.message ?? "", "the database is down")
          const listed = yield* keysOf(inspector, name, { state: "failing" })
          assert.deepStrictEqual(listed.items.map((k) => [k.key, k.failures, k.dueAt]), [["default/a", n, at + delay]])
          yield* advance(delay)
          at += delay
        }
      })
  )

  it.effect("a RequeueAfter: its due time and reason, no failures", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make()
      const { name, send } = yield* startInspected(inspector, () => Reconcile.requeueAfter("30 seconds"))
      const t0 = yield* Clock.currentTimeMillis
      yield* send("a")
      const key = yield* keyOf(inspector, name, "default/a")
      assert.strictEqual(key.state, "delayed")
      assert.strictEqual(key.reason, "requeueAfter")
      assert.strictEqual(key.dueAt, t0 + 30_000)
      assert.strictEqual(key.limiter.failures, 0)
      assert.deepStrictEqual(key.reconciles.map((r) => [r.outcome, r.message]), [["requeueAfter", "requeue after 30s"]])
      const listed = yield* keysOf(inspector, name, { state: "delayed" })
      assert.deepStrictEqual(listed.items.map((k) => [k.key, k.reason, k.dueAt]), [[
        "default/a",
        "requeueAfter",
        t0 + 30_000
      ]])
      yield* advance(30_000)
      assert.strictEqual((yield* keyOf(inspector, name, "default/a")).reconciles.length, 2, "it ran again when due")
    }))

  it.effect("a Terminal key: its message, no retry", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make()
      const { name, send } = yield* startInspected(
        inspector,
        () => Effect.fail(Reconcile.terminal(new Error("spec.replicas must be positive")))
      )
      yield* send("a")
      // far past any backoff retry (5 ms after a failure), within the 15 minutes a key is kept
      yield* advance(10 * 60_000)
      const key = yield* keyOf(inspector, name, "default/a")
      assert.strictEqual(key.state, "terminal")
      assert.isUndefined(key.dueAt)
      assert.isUndefined(key.reason)
      assert.strictEqual(key.reconciles.length, 1, "no retry")
      assert.strictEqual(key.reconciles[0]!.outcome, "terminal")
      assert.include(key.reconciles[0]!.message ?? "", "spec.replicas must be positive")
      const listed = yield* keysOf(inspector, name, { state: "terminal" })
      assert.deepStrictEqual(listed.items.map((k) => [k.key, k.lastOutcome]), [["default/a", "terminal"]])
    }))

  it.effect("events: each predicate's verdict up to the first that fails, whether it was enqueued", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make()
      const channel = yield* Source.channel<Obj>("objects")
      function notDeleted(event: Event.Event<Obj>) {
        return event._tag !== "Delete"
      }
      const notSkipped: Predicate<Obj> = (event) => event.object.metadata.name !== "skipped"
      const name = uniqueName("inspector-events")
      yield* Controller.make({
        name,
        watches: [Controller.watch(channel.source, Handler.forObject, notDeleted, (e) => notSkipped(e))],
        reconcile: () => Effect.void
      }).pipe(Effect.provide(TestManager), Effect.provideService(Inspector.Inspector, inspector))
      const t0 = yield* Clock.currentTimeMillis
      yield* channel.offer(Event.create(obj("a")))
      yield* settle
      yield* advance(1_000)
      yield* channel.offer(Event.delete(obj("a")))
      yield* channel.offer(Event.create(obj("skipped")))
      yield* settle
      const a = yield* keyOf(inspector, name, "default/a")
      assert.deepStrictEqual(a.events, [
        {
          at: t0,
          source: "objects",
          type: "Create",
          predicates: [{ name: "notDeleted", passed: true }, { name: "predicate 2", passed: true }],
          enqueued: true
        },
        {
          at: t0 + 1_000,
          source: "objects",
          type: "Delete",
          predicates: [{ name: "notDeleted", passed: false }],
          enqueued: false
        }
      ])
      assert.strictEqual(a.reconciles.length, 1, "the dropped delete enqueued nothing")
      const skipped = yield* keyOf(inspector, name, "default/skipped")
      assert.strictEqual(skipped.state, "idle")
      assert.deepStrictEqual(skipped.reconciles, [])
      assert.deepStrictEqual(skipped.events.map((e) => [e.predicates, e.enqueued]), [[[
        { name: "notDeleted", passed: true },
        { name: "predicate 2", passed: false }
      ], false]])
    }))

  it.effect("controllers: workers busy and idle, the queue's counts, the sources; the timeline, newest last", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make()
      const { name, send } = yield* startInspected(
        inspector,
        (request) =>
          request.name === "slow"
            ? Effect.sleep("1 minute")
            : request.name === "later"
            ? Reconcile.requeueAfter("1 hour")
            : Effect.void,
        // the slow reconcile is still running when the test ends: no grace period on the TestClock
        { maxConcurrentReconciles: 2, gracefulShutdownTimeout: 0 }
      )
      yield* send("slow")
      yield* advance(1_000)
      yield* send("later")
      yield* send("done")
      const answer = Schema.decodeUnknownSync(Inspector.Api.Controllers)(yield* inspector.controllers)
      const mine = answer.controllers.find((c) => c.name === name)!
      assert.deepStrictEqual(mine.workers, { busy: 1, idle: 1 })
      assert.deepStrictEqual(mine.queue, { depth: 0, waiting: 0, delayed: 1, inFlight: 1 })
      assert.deepStrictEqual(mine.sources, [{ name: "objects", state: "connected" }])
      const slow = yield* keyOf(inspector, name, "default/slow")
      assert.strictEqual(slow.state, "inFlight")
      assert.strictEqual(slow.inFlightMs, 1_000)
      const timeline = Schema.decodeUnknownSync(Inspector.Api.Timeline)(yield* inspector.timeline())
      assert.deepStrictEqual(
        timeline.items.map((i) => [i.key, i.outcome]),
        [["default/slow", undefined], ["default/later", "requeueAfter"], ["default/done", "success"]]
      )
      const t = yield* Clock.currentTimeMillis
      const recent = yield* inspector.timeline({ since: t })
      assert.deepStrictEqual(
        recent.items.map((i) => i.key),
        ["default/slow", "default/later", "default/done"],
        "a reconcile in flight is still on the timeline since now; those that ended now too"
      )
      assert.deepStrictEqual((yield* inspector.timeline({ limit: 1 })).items.map((i) => i.key), ["default/done"])
      const searched = yield* keysOf(inspector, name, { search: "LATE" })
      assert.deepStrictEqual(searched.items.map((k) => [k.key, k.state]), [["default/later", "delayed"]])
      const page = yield* keysOf(inspector, name, { offset: 1, limit: 1 })
      assert.strictEqual(page.total, 3)
      assert.deepStrictEqual(page.items.map((k) => k.key), ["default/later"])
    }))

  it.effect("bounded: at most maxKeys records (least recently seen dropped), historyPerKey each, none past keyTtl", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make({ maxKeys: 3, historyPerKey: 2, eventsPerKey: 2, keyTtl: "1 minute" })
      const { name, send } = yield* startInspected(inspector, () => Effect.void)
      for (const n of ["a", "b", "c", "d", "e"]) {
        yield* send(n)
        yield* advance(1_000)
      }
      const listed = yield* keysOf(inspector, name)
      assert.deepStrictEqual(listed.items.map((k) => k.key), ["default/e", "default/d", "default/c"])
      assert.isTrue(Option.isNone(yield* inspector.key(name, "default/a")), "the least recently seen was dropped")
      for (let i = 0; i < 4; i++) {
        yield* send("c")
        yield* advance(1_000)
      }
      const c = yield* keyOf(inspector, name, "default/c")
      assert.strictEqual(c.reconciles.length, 2)
      assert.strictEqual(c.events.length, 2)
      assert.deepStrictEqual((yield* keysOf(inspector, name)).items.map((k) => k.key), [
        "default/c",
        "default/e",
        "default/d"
      ])
      yield* advance(61_000)
      assert.strictEqual((yield* keysOf(inspector, name)).total, 0, "none seen for keyTtl")
    }))

  it.effect("off: a controller made without the Inspector in its context records nothing", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make()
      const version = yield* inspector.version
      const { name, send } = yield* start(() => Effect.void)
      yield* send("a")
      assert.isTrue(Option.isNone(yield* inspector.keys(name)))
      assert.deepStrictEqual((yield* inspector.controllers).controllers, [])
      assert.strictEqual(yield* inspector.version, version)
    }))

  it.effect("a controller that stops is no longer listed", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.make()
      const name = yield* Effect.scoped(
        Effect.map(startInspected(inspector, () => Effect.void), ({ name }) => name)
      )
      assert.isTrue(Option.isNone(yield* inspector.keys(name)))
      assert.deepStrictEqual((yield* inspector.controllers).controllers, [])
    }))
})
