// @effect/vitest 4: `it.effect` runs scoped (with TestClock), so it replaces `it.scoped`.
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import {
  Cause,
  Clock,
  Context,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  References,
  Scope,
  Stream,
  Tracer
} from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as LeaderElection from "../src/LeaderElection.js"
import * as Predicates from "../src/Predicates.js"
import * as Reconcile from "../src/Reconcile.js"
import * as Source from "../src/Source.js"
import {
  advance,
  counterValue,
  gaugeValue,
  type Obj,
  obj,
  settle,
  start,
  startElected,
  TestManager,
  uniqueName
} from "./harness.js"

/** A reconcile that records the virtual time of every attempt and ends as `outcome(attempt)` says. */
const recording = (outcome: (attempt: number) => Effect.Effect<void, Reconcile.Outcome>) => {
  const attempts: Array<number> = []
  const reconcile = () =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      attempts.push(now)
      return outcome(attempts.length - 1)
    })
  return { attempts, reconcile }
}

const slowLimiter = RateLimiter.exponential({ base: "1 second", max: "100 seconds" })

describe("Controller decision table", () => {
  it.effect("success: forget the key, result=success", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = recording(() => Effect.void)
      const { controller, name, send } = yield* start(reconcile, { rateLimiter: slowLimiter })
      yield* controller.queue.addRateLimited("default/a") // some backoff history
      yield* send("a")
      assert.deepStrictEqual(attempts, [0])
      assert.strictEqual(yield* controller.queue.numRequeues("default/a"), 0, "success forgets the backoff")
      assert.strictEqual(yield* counterValue(name, (m) => m.total.success), 1)
      yield* advance(10_000)
      assert.strictEqual(attempts.length, 2, "only the earlier scheduled retry fires, once")
    }))

  it.effect("RequeueAfter(d): forget, then add after d; result=requeue_after", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = recording((n) => n === 0 ? Reconcile.requeueAfter("30 seconds") : Effect.void)
      const { controller, name, send } = yield* start(reconcile, { rateLimiter: slowLimiter })
      yield* send("a")
      assert.strictEqual(yield* controller.queue.numRequeues("default/a"), 0)
      yield* advance(29_999)
      assert.deepStrictEqual(attempts, [0])
      yield* advance(1)
      assert.deepStrictEqual(attempts, [0, 30_000])
      assert.strictEqual(yield* counterValue(name, (m) => m.total.requeue_after), 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.total.success), 1)
    }))

  it.effect("Retryable: rate-limited retries with growing backoff; result=error, errors_total", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = recording((n) => n < 3 ? Reconcile.retryable("boom") : Effect.void)
      const { name, send } = yield* start(reconcile, { rateLimiter: slowLimiter })
      yield* send("a")
      yield* advance(10_000)
      assert.deepStrictEqual(attempts, [0, 1_000, 3_000, 7_000], "retry delays follow the limiter: 1 s, 2 s, 4 s")
      assert.strictEqual(yield* counterValue(name, (m) => m.total.error), 3)
      assert.strictEqual(yield* counterValue(name, (m) => m.errors), 3)
      assert.strictEqual(yield* counterValue(name, (m) => m.total.success), 1)
    }))

  it.effect("Terminal: no requeue until the next event; terminal_errors_total", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = recording(() => Reconcile.terminal("invalid spec"))
      const { name, send } = yield* start(reconcile, { rateLimiter: slowLimiter })
      yield* send("a")
      yield* advance(3_600_000)
      assert.deepStrictEqual(attempts, [0], "a terminal error is never retried by itself")
      assert.strictEqual(yield* counterValue(name, (m) => m.terminalErrors), 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.errors), 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.total.error), 1)
      yield* send("a")
      assert.strictEqual(attempts.length, 2, "the next change runs it again")
    }))

  it.effect("a thrown exception is recovered as Retryable; panics_total", () =>
    Effect.gen(function*() {
      let calls = 0
      const { name, send } = yield* start(() => {
        calls++
        if (calls === 1) throw new Error("thrown outside any Effect")
        return Effect.void
      }, { rateLimiter: slowLimiter })
      yield* send("a")
      assert.strictEqual(calls, 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.panics), 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.total.error), 1)
      yield* advance(1_000)
      assert.strictEqual(calls, 2, "retried after the limiter's delay")
    }))

  it.effect("Effect.die is recovered as Retryable; panics_total", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = recording((n) => n === 0 ? Effect.die("defect") : Effect.void)
      const { name, send } = yield* start(reconcile, { rateLimiter: slowLimiter })
      yield* send("a")
      yield* advance(1_000)
      assert.deepStrictEqual(attempts, [0, 1_000])
      assert.strictEqual(yield* counterValue(name, (m) => m.panics), 1)
    }))

  it.effect("recoverPanics: false fails the controller with the defect", () =>
    Effect.gen(function*() {
      const { controller, send } = yield* start(() => Effect.die("fatal"), { recoverPanics: false })
      yield* send("a")
      const exit = yield* Effect.exit(controller.await)
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    }))

  it.effect("reconcileTimeout: the reconcile is interrupted and retried; timeouts_total", () =>
    Effect.gen(function*() {
      let interrupted = 0
      const { attempts, reconcile } = recording((n) =>
        n === 0 ? Effect.onInterrupt(Effect.never, () => Effect.sync(() => interrupted++)) : Effect.void
      )
      const { name, send } = yield* start(reconcile, { rateLimiter: slowLimiter, reconcileTimeout: "10 seconds" })
      yield* send("a")
      yield* advance(10_000)
      assert.strictEqual(interrupted, 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.timeouts), 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.total.error), 1)
      yield* advance(1_000)
      assert.deepStrictEqual(attempts, [0, 11_000])
    }))
})

describe("Controller backoff and out-of-band events", () => {
  const alwaysFail = () => recording(() => Reconcile.retryable("still failing"))

  it.effect("controller-runtime: an out-of-band failure counts, the scheduled retry still fires on time", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = alwaysFail()
      const { send } = yield* start(reconcile, { rateLimiter: slowLimiter })
      yield* send("k") // t=0 fails (#0) → retry at 1
      yield* advance(1_000) // t=1 fails (#1) → retry at 3
      yield* advance(1_000)
      yield* send("k") // t=2 out of band, fails (#2) → 4 s, the retry at 3 is earlier and kept
      yield* advance(1_000) // t=3 the scheduled retry, fails (#3) → 8 s → retry at 11 (not 7)
      yield* advance(8_000)
      assert.deepStrictEqual(attempts, [0, 1_000, 2_000, 3_000, 11_000])
    }))

  it.effect("outOfBandFailures: \"ignore\": the out-of-band failure does not grow the backoff", () =>
    Effect.gen(function*() {
      const { attempts, reconcile } = alwaysFail()
      const { send } = yield* start(reconcile, { rateLimiter: slowLimiter, outOfBandFailures: "ignore" })
      yield* send("k") // t=0 fails (#0) → retry at 1
      yield* advance(1_000) // t=1 fails (#1) → retry at 3
      yield* advance(1_000)
      yield* send("k") // t=2 out of band: fails, but a retry is scheduled at 3: no limiter call
      yield* advance(1_000) // t=3 the scheduled retry fails (#2) → 4 s → retry at 7
      yield* advance(4_000)
      assert.deepStrictEqual(attempts, [0, 1_000, 2_000, 3_000, 7_000])
    }))

  it.effect("each controller has its own backoff for the same key", () =>
    Effect.gen(function*() {
      const one = alwaysFail()
      const two = recording(() => Effect.void)
      const a = yield* start(one.reconcile, { rateLimiter: slowLimiter })
      const b = yield* start(two.reconcile, { rateLimiter: slowLimiter })
      yield* a.send("k")
      yield* b.send("k")
      assert.strictEqual(yield* a.controller.queue.numRequeues("default/k"), 1)
      assert.strictEqual(yield* b.controller.queue.numRequeues("default/k"), 0)
    }))
})

describe("Controller lifecycle", () => {
  it.effect("workers start only after every source has synced", () =>
    Effect.gen(function*() {
      const synced = yield* Deferred.make<void>()
      const channel = yield* Source.channel<Obj>("late")
      const calls: Array<string> = []
      const controller = yield* Controller.make({
        name: uniqueName("sync"),
        watches: [
          Controller.watch({ ...channel.source, synced: Deferred.await(synced) }, Handler.forObject)
        ],
        reconcile: (req) => Effect.sync(() => void calls.push(req.name))
      }).pipe(Effect.provide(TestManager))
      yield* channel.offer(Event.create(obj("a"), { initial: true }))
      yield* advance(60_000)
      assert.deepStrictEqual(calls, [])
      assert.isFalse(yield* controller.started)
      assert.isFalse(yield* controller.synced)
      yield* Deferred.succeed(synced, undefined)
      yield* settle
      assert.isTrue(yield* controller.synced)
      assert.isTrue(yield* controller.started)
      assert.deepStrictEqual(calls, ["a"], "events queued before sync are not lost")
    }))

  it.effect(
    "readiness: ready once synced; not ready while a source has been disconnected longer than " +
      "sourceDisconnectLimit (60 s); ready again when it reconnects",
    () =>
      Effect.gen(function*() {
        let health: Source.Health = Source.connected
        const synced = yield* Deferred.make<void>()
        const channel = yield* Source.channel<Obj>("objects")
        const watched = Source.make({
          name: "watched",
          events: channel.source.events,
          synced: Deferred.await(synced),
          health: Effect.sync(() => health)
        })
        const other = yield* Source.channel<Obj>("no-connection")
        const controller = yield* Controller.make({
          name: uniqueName("ready"),
          watches: [Controller.watch(watched, Handler.forObject), Controller.watch(other.source, Handler.forObject)],
          reconcile: () => Effect.void
        }).pipe(Effect.provide(TestManager))
        assert.isFalse(yield* controller.ready, "not ready before the sources sync")
        yield* Deferred.succeed(synced, undefined)
        yield* settle
        assert.isTrue(yield* controller.ready)

        // the server was last heard from at 10 s; the connection failed later
        yield* advance(10_000)
        health = Source.Health.Disconnected({ since: 10_000, reason: "Transport" })
        yield* advance(60_000) // 60 s since: exactly the limit
        assert.isTrue(yield* controller.ready, "a disconnection of 60 s is tolerated")
        yield* advance(1)
        assert.isFalse(yield* controller.ready, "past 60 s: not ready")
        assert.isTrue(yield* controller.synced, "still synced: the cache is there, only stale")
        health = Source.connected
        assert.isTrue(yield* controller.ready, "ready again as soon as it reconnects")
      })
  )

  it.effect("readiness: sourceDisconnectLimit is configurable", () =>
    Effect.gen(function*() {
      let health: Source.Health = Source.connected
      const channel = yield* Source.channel<Obj>("objects")
      const controller = yield* Controller.make({
        name: uniqueName("ready-limit"),
        watches: [Controller.watch({ ...channel.source, health: Effect.sync(() => health) }, Handler.forObject)],
        reconcile: () => Effect.void,
        options: { sourceDisconnectLimit: "5 seconds" }
      }).pipe(Effect.provide(TestManager))
      yield* settle
      health = Source.Health.Disconnected({ since: 0, reason: "idle" })
      yield* advance(5_000)
      assert.isTrue(yield* controller.ready)
      yield* advance(1)
      assert.isFalse(yield* controller.ready)
      // a predicate-filtered source keeps its health
      const filtered = Source.filter(channel.source, () => true)
      assert.isUndefined(filtered.health)
      const withHealth = Source.filter({ ...channel.source, health: Effect.sync(() => health) }, () => true)
      assert.strictEqual((yield* withHealth.health!)._tag, "Disconnected")
    }))

  it.effect("cacheSyncTimeout fails the controller with an error naming the unsynced source", () =>
    Effect.gen(function*() {
      const fast = Source.fromStream<Obj>("fast-source", Stream.empty)
      const stuck = Source.make<Obj>({ name: "stuck-source", events: Stream.never, synced: Effect.never })
      const controller = yield* Controller.make({
        name: uniqueName("timeout"),
        watches: [Controller.watch(fast, Handler.forObject), Controller.watch(stuck, Handler.forObject)],
        reconcile: () => Effect.void,
        options: { cacheSyncTimeout: "30 seconds" }
      }).pipe(Effect.provide(TestManager))
      const fiber = yield* Effect.forkChild(Effect.flip(controller.await))
      yield* advance(29_999)
      assert.isUndefined(fiber.pollUnsafe()) // effect 4: a running fiber polls as undefined (effect 3: null)
      yield* advance(1)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CacheSyncTimeout")
      assert.deepStrictEqual(error._tag === "CacheSyncTimeout" && error.sources, ["stuck-source"])
      assert.include(error.message, "stuck-source")
    }))

  it.effect("a failing source fails the controller with SourceFailed", () =>
    Effect.gen(function*() {
      const broken = Source.fromStream<Obj, string>("broken", Stream.fail("watch error"))
      const controller = yield* Controller.make({
        name: uniqueName("broken"),
        watches: [Controller.watch(broken, Handler.forObject)],
        reconcile: () => Effect.void
      }).pipe(Effect.provide(TestManager))
      const error = yield* Effect.flip(controller.await)
      assert.strictEqual(error._tag, "SourceFailed")
      assert.deepStrictEqual(error._tag === "SourceFailed" && [error.source, error.cause], ["broken", "watch error"])
    }))

  it.effect("predicates filter events before the handler", () =>
    Effect.gen(function*() {
      const channel = yield* Source.channel<Obj>("filtered")
      const calls: Array<string> = []
      yield* Controller.make({
        name: uniqueName("predicates"),
        watches: [
          Controller.watch(
            channel.source,
            Handler.forObject,
            Predicates.funcs({ create: (e) => e.object.metadata.name !== "skip" })
          )
        ],
        reconcile: (req) => Effect.sync(() => void calls.push(req.name))
      }).pipe(Effect.provide(TestManager))
      yield* channel.offer(Event.create(obj("skip")))
      yield* channel.offer(Event.create(obj("keep")))
      yield* settle
      assert.deepStrictEqual(calls, ["keep"])
    }))

  it.effect("shutdown: in-flight reconciles finish within the grace period; none starts after shutdown begins", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const release = yield* Deferred.make<void>()
      const finished: Array<string> = []
      const startedNames: Array<string> = []
      const { controller, send } = yield* start(
        (req) =>
          Effect.gen(function*() {
            startedNames.push(req.name)
            yield* Deferred.await(release)
            finished.push(req.name)
          }),
        { maxConcurrentReconciles: 1, gracefulShutdownTimeout: "30 seconds" }
      ).pipe(Scope.provide(scope))
      yield* send("a")
      yield* send("b") // waits behind a (one worker)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* settle
      assert.isUndefined(closing.pollUnsafe(), "shutdown waits for the in-flight reconcile")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(closing)
      assert.deepStrictEqual(startedNames, ["a"], "b never starts once shutdown has begun")
      assert.deepStrictEqual(finished, ["a"])
      assert.isTrue(yield* controller.queue.isShuttingDown)
    }))

  it.effect("shutdown: reconciles still running after gracefulShutdownTimeout are interrupted", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      let interrupted = false
      const { send } = yield* start(
        () => Effect.onInterrupt(Effect.never, () => Effect.sync(() => void (interrupted = true))),
        { gracefulShutdownTimeout: "5 seconds" }
      ).pipe(Scope.provide(scope))
      yield* send("a")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* advance(4_999)
      assert.isFalse(interrupted)
      yield* advance(1)
      yield* Fiber.join(closing)
      assert.isTrue(interrupted)
    }))

  it.effect("workers start only when leader; losing leadership stops them and fails with LeadershipLost", () =>
    Effect.gen(function*() {
      const { elect, election, lose } = yield* LeaderElection.manual("replica-1")
      const calls: Array<string> = []
      const { controller, send } = yield* startElected(
        election,
        (req) => Effect.sync(() => void calls.push(req.name)),
        {
          warmup: true
        }
      )
      yield* send("a")
      assert.deepStrictEqual(calls, [], "not leader yet: the source warms up (warmup: true), no reconcile")
      assert.isTrue(yield* controller.synced)
      yield* elect
      yield* settle
      assert.deepStrictEqual(calls, ["a"])
      yield* lose("lease expired")
      yield* settle
      const error = yield* Effect.flip(controller.await)
      assert.strictEqual(error._tag, "LeadershipLost")
      yield* send("b")
      assert.deepStrictEqual(calls, ["a"], "no reconcile after leadership is lost")
    }))

  // A tracer is installed: effect 4's default native tracer makes no reconcile span (see the next test).
  it.effect("each reconcile runs in a span with log annotations controller, namespace, name, reconcileID", () =>
    Effect.gen(function*() {
      const seen: Array<{ span: string; annotations: Record<string, unknown>; attributes: Map<string, unknown> }> = []
      const name = uniqueName("annotated")
      const tracer = Tracer.make({ span: (options) => new Tracer.NativeSpan(options) })
      const { send } = yield* start(
        () =>
          Effect.gen(function*() {
            const span = yield* Effect.currentSpan
            const annotations = yield* References.CurrentLogAnnotations
            seen.push({
              span: span.name,
              annotations: { ...annotations },
              attributes: (span as Tracer.NativeSpan).attributes
            })
          }).pipe(Effect.orDie),
        {},
        name
      ).pipe(Effect.withTracer(tracer))
      yield* send("web")
      yield* send("web")
      assert.strictEqual(seen.length, 2)
      assert.strictEqual(seen[0]!.span, "reconcile")
      assert.strictEqual(seen[0]!.annotations.controller, name)
      assert.strictEqual(seen[0]!.annotations.namespace, "default")
      assert.strictEqual(seen[0]!.annotations.name, "web")
      assert.isString(seen[0]!.annotations.reconcileID)
      assert.notStrictEqual(seen[0]!.annotations.reconcileID, seen[1]!.annotations.reconcileID)
      // the span's attributes: the annotations, the attempt, the time the key waited in the queue (no time passed)
      assert.strictEqual(seen[0]!.attributes.get("controller"), name)
      assert.strictEqual(seen[0]!.attributes.get("attempt"), 1)
      assert.strictEqual(seen[0]!.attributes.get("queue.wait_ms"), 0)
    }))

  it.effect("without a tracer (effect's default in-memory one) a reconcile makes no span, and keeps its annotations", () =>
    Effect.gen(function*() {
      const seen: Array<{ span: Option.Option<Tracer.Span>; annotations: Record<string, unknown> }> = []
      const { send } = yield* start(() =>
        Effect.gen(function*() {
          const span = yield* Effect.option(Effect.currentSpan)
          const annotations = yield* References.CurrentLogAnnotations
          seen.push({ span, annotations: { ...annotations } })
        })
      )
      yield* send("web")
      assert.strictEqual(seen.length, 1)
      assert.isTrue(Option.isNone(seen[0]!.span), "no span object is made")
      assert.strictEqual(seen[0]!.annotations.name, "web")
      // Tracing disabled: no span either, even with a tracer installed.
      const recorded: Array<string> = []
      const tracer = Tracer.make({ span: (options) => (recorded.push(options.name), new Tracer.NativeSpan(options)) })
      const disabled = yield* start(() => Effect.void).pipe(
        Effect.withTracer(tracer),
        Effect.provideService(References.TracerEnabled, false)
      )
      yield* disabled.send("web")
      assert.deepStrictEqual(recorded, [])
    }))

  it.effect("the reconcile's requirements flow into the controller's", () =>
    Effect.gen(function*() {
      class Greeting extends Context.Service<Greeting, string>()("Greeting") {}
      const calls: Array<string> = []
      const program = start(() => Effect.flatMap(Greeting, (g) => Effect.sync(() => void calls.push(g))))
      // @ts-expect-error: Greeting is required and not provided
      const _missing: Effect.Effect<unknown, unknown, Scope.Scope> = program
      const { send } = yield* Effect.provideService(program, Greeting, "hello")
      yield* send("a")
      assert.deepStrictEqual(calls, ["hello"])
    }))

  it.effect("metrics: max_concurrent_reconciles and active_workers", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const { name, send } = yield* start(() => Deferred.await(release), { maxConcurrentReconciles: 4 })
      assert.strictEqual(yield* gaugeValue(name, (m) => m.maxConcurrent), 4)
      yield* send("a")
      yield* send("b")
      assert.strictEqual(yield* gaugeValue(name, (m) => m.activeWorkers), 2)
      yield* Deferred.succeed(release, undefined)
      yield* settle
      assert.strictEqual(yield* gaugeValue(name, (m) => m.activeWorkers), 0)
    }))

  it.effect("Controller.layer runs the controller for the Layer's lifetime", () =>
    Effect.gen(function*() {
      const channel = yield* Source.channel<Obj>("layer")
      const calls: Array<string> = []
      const layer = Controller.layer({
        name: uniqueName("layer"),
        watches: [Controller.watch(channel.source, Handler.forObject)],
        reconcile: (req) => Effect.sync(() => void calls.push(req.name))
      })
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(layer.pipe(Layer.provide(TestManager)))
        yield* channel.offer(Event.create(obj("a")))
        yield* settle
      }))
      assert.deepStrictEqual(calls, ["a"])
      yield* channel.offer(Event.create(obj("b")))
      yield* settle
      assert.deepStrictEqual(calls, ["a"], "stopped with its scope")
    }))
})
