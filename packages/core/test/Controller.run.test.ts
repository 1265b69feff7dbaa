// `Controller.run`: the worker loop alone (kube-rs's applier) — a stream of requests, a queue and workers with the
// controller's decision table, and nothing else: no sources, no Manager, no leader election, no Kubernetes.
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import { Clock, Deferred, Effect, Exit, Fiber, Queue, Stream } from "effect"
import * as Controller from "../src/Controller.js"
import * as Reconcile from "../src/Reconcile.js"
import * as Request from "../src/Request.js"
import { advance, counterValue, settle, uniqueName } from "./harness.js"

describe("Controller.run", () => {
  it.effect("reconciles each request of a stream with the decision table, without a Manager", () =>
    Effect.gen(function*() {
      const attempts: Record<string, Array<number>> = { ok: [], flaky: [], later: [], invalid: [] }
      const name = uniqueName("run")
      const running = yield* Controller.run({
        name,
        requests: Stream.fromIterable(["ok", "flaky", "later", "invalid"].map((n) => Request.make(n, "default"))),
        reconcile: (request) =>
          Effect.gen(function*() {
            const seen = attempts[request.name]!
            seen.push(yield* Clock.currentTimeMillis)
            switch (request.name) {
              case "flaky":
                if (seen.length <= 2) return yield* Reconcile.retryable("not yet")
                return
              case "later":
                if (seen.length === 1) return yield* Reconcile.requeueAfter("5 seconds")
                return
              case "invalid":
                return yield* Reconcile.terminal("never valid")
            }
          }),
        options: { rateLimiter: RateLimiter.exponential({ base: "1 second", max: "100 seconds" }) }
      }).pipe(Effect.forkChild)
      yield* settle
      yield* advance(60_000)
      assert.deepStrictEqual(attempts, {
        ok: [0],
        flaky: [0, 1_000, 3_000], // Retryable: rate-limited retries, the backoff doubling
        later: [0, 5_000], // RequeueAfter: again after its delay
        invalid: [0] // Terminal: no retry
      })
      assert.strictEqual(yield* counterValue(name, (m) => m.total.success), 3)
      assert.strictEqual(yield* counterValue(name, (m) => m.total.requeue_after), 1)
      assert.strictEqual(yield* counterValue(name, (m) => m.terminalErrors), 1)
      assert.isUndefined(running.pollUnsafe(), "the end of the stream stops nothing: it runs until interrupted")
      yield* Fiber.interrupt(running)
    }))

  it.effect("never two reconciles of one key at once: a request of a key in flight runs once after it", () =>
    Effect.gen(function*() {
      const requests = yield* Queue.unbounded<Request.Request>()
      const release = yield* Deferred.make<void>()
      let active = 0
      let maxActive = 0
      let runs = 0
      const running = yield* Controller.run({
        name: uniqueName("run-dedup"),
        requests: Stream.fromQueue(requests),
        reconcile: () =>
          Effect.gen(function*() {
            active++
            runs++
            maxActive = Math.max(maxActive, active)
            yield* Deferred.await(release)
            active--
          }),
        options: { maxConcurrentReconciles: 4 }
      }).pipe(Effect.forkChild)
      yield* Queue.offer(requests, Request.make("a", "default"))
      yield* settle
      yield* Queue.offerAll(requests, [Request.make("a", "default"), Request.make("a", "default")])
      yield* settle
      assert.strictEqual(runs, 1, "the adds while `a` runs mark it dirty, once")
      yield* Deferred.succeed(release, undefined)
      yield* settle
      assert.strictEqual(runs, 2)
      assert.strictEqual(maxActive, 1)
      yield* Fiber.interrupt(running)
    }))

  it.effect("a failed stream fails run, once the reconciles in flight have finished", () =>
    Effect.gen(function*() {
      const finished: Array<string> = []
      const running = yield* Controller.run({
        name: uniqueName("run-failing"),
        // `a`, then, a second later, a failure: the reconcile of `a` has started (none starts once shutdown began)
        requests: Stream.concat(
          Stream.make(Request.make("a", "default")),
          Stream.fromEffect(Effect.andThen(Effect.sleep("1 second"), Effect.fail("watch broke")))
        ),
        reconcile: (request) =>
          Effect.andThen(Effect.sleep("2 seconds"), Effect.sync(() => finished.push(request.name)))
      }).pipe(Effect.forkChild)
      yield* settle
      yield* advance(1_500)
      assert.isUndefined(running.pollUnsafe(), "shutting down: the reconcile of a is in flight")
      yield* advance(500)
      const exit = yield* Fiber.await(running)
      assert.deepStrictEqual(exit, Exit.fail("watch broke"))
      assert.deepStrictEqual(finished, ["a"], "drained within gracefulShutdownTimeout")
    }))

  it.effect("interruption lets a reconcile in flight finish within gracefulShutdownTimeout, then interrupts it", () =>
    Effect.gen(function*() {
      let interrupted = false
      const running = yield* Controller.run({
        name: uniqueName("run-shutdown"),
        requests: Stream.make(Request.make("slow", "default")),
        reconcile: () =>
          Effect.sleep("1 hour").pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true)))),
        options: { gracefulShutdownTimeout: "5 seconds" }
      }).pipe(Effect.forkChild)
      yield* settle
      const stopping = yield* Effect.forkChild(Fiber.interrupt(running))
      yield* advance(4_999)
      assert.isFalse(interrupted)
      yield* advance(1)
      yield* Fiber.join(stopping)
      assert.isTrue(interrupted)
    }))
})
