// @effect/vitest 4: `it.live` runs scoped with live services, so it replaces `it.scopedLive`.
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Stream } from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as LeaderElection from "../src/LeaderElection.js"
import * as Manager from "../src/Manager.js"
import * as Source from "../src/Source.js"
import { type Obj, obj, uniqueName } from "./harness.js"

const get = (port: number, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`)
    return { status: response.status, body: await response.text(), type: response.headers.get("content-type") }
  })

describe("Manager", () => {
  it.live("serves /metrics, /healthz and /readyz on 127.0.0.1; /readyz flips when the controller's sources sync", () =>
    Effect.gen(function*() {
      const synced = yield* Deferred.make<void>()
      const channel = yield* Source.channel<Obj>("objects")
      const reconciled = yield* Deferred.make<void>()
      const name = uniqueName("managed")
      const app = Controller.layer({
        name,
        watches: [Controller.watch({ ...channel.source, synced: Deferred.await(synced) }, Handler.forObject)],
        reconcile: () => Deferred.succeed(reconciled, undefined)
      }).pipe(
        Layer.provideMerge(Manager.layer({ metricsPort: 0, healthPort: 0 })),
        Layer.provide(LeaderElection.layerAlwaysLeader)
      )
      const context = yield* Layer.build(app)
      const manager = Context.get(context, Manager.Manager)
      const port = manager.healthAddress!.port
      assert.strictEqual(manager.metricsAddress!.port, port, "one server when both ports are equal")
      assert.strictEqual(manager.healthAddress!.host, "127.0.0.1")

      assert.strictEqual((yield* get(port, "/healthz")).status, 200)
      assert.strictEqual((yield* get(port, "/readyz")).status, 503, "not ready before the sources sync")
      yield* Deferred.succeed(synced, undefined)
      yield* channel.offer(Event.create(obj("web")))
      yield* Deferred.await(reconciled)
      assert.strictEqual((yield* get(port, "/readyz")).status, 200)

      const metrics = yield* get(port, "/metrics")
      assert.strictEqual(metrics.status, 200)
      assert.include(metrics.type ?? "", "text/plain")
      for (
        const line of [
          `controller_runtime_max_concurrent_reconciles{controller="${name}"} 1`,
          `controller_runtime_reconcile_total{controller="${name}",result="error"} 0`,
          `controller_runtime_reconcile_total{controller="${name}",result="requeue_after"} 0`,
          `controller_runtime_active_workers{controller="${name}"}`,
          `controller_runtime_reconcile_time_seconds_bucket{controller="${name}",le="0.005"}`,
          `workqueue_adds_total{controller="${name}",name="${name}"} 1`,
          `workqueue_depth{controller="${name}",name="${name}"}`,
          `workqueue_queue_duration_seconds_count{controller="${name}",name="${name}"} 1`,
          `workqueue_retries_total{controller="${name}",name="${name}"}`,
          `workqueue_unfinished_work_seconds{controller="${name}",name="${name}"}`,
          `workqueue_longest_running_processor_seconds{controller="${name}",name="${name}"}`,
          `workqueue_work_duration_seconds_bucket{controller="${name}",name="${name}",le="+Inf"}`
        ]
      ) assert.include(metrics.body, line)
      // The success is counted right after the reconcile returns; poll the text briefly for it.
      let body = metrics.body
      for (let i = 0; i < 50 && !body.includes(`result="success"} 1`); i++) body = (yield* get(port, "/metrics")).body
      assert.include(body, `controller_runtime_reconcile_total{controller="${name}",result="success"} 1`)
    }))

  it.live("a metrics port without a health port serves metrics only", () =>
    Effect.gen(function*() {
      const manager = yield* Manager.make({ metricsPort: 0 }).pipe(Effect.provide(LeaderElection.layerAlwaysLeader))
      assert.isDefined(manager.metricsAddress)
      assert.isUndefined(manager.healthAddress)
      assert.strictEqual((yield* get(manager.metricsAddress!.port, "/metrics")).status, 200)
    }))

  it.effect("launch ends with a ManagerError naming the controller when a controller fails", () =>
    Effect.gen(function*() {
      const name = uniqueName("failing")
      const app = Controller.layer({
        name,
        watches: [
          Controller.watch(Source.fromStream<Obj, string>("broken-watch", Stream.fail("boom")), Handler.forObject)
        ],
        reconcile: () => Effect.void
      }).pipe(Layer.provideMerge(Manager.layer()), Layer.provide(LeaderElection.layerAlwaysLeader))
      const error = yield* Effect.flip(Manager.launch(app))
      assert.strictEqual(error._tag, "ManagerError")
      assert.strictEqual(error._tag === "ManagerError" && error.runnable, name)
      assert.include(error.message, name)
    }))

  it.effect("a Manager with no runnables is ready; launch runs until interrupted", () =>
    Effect.gen(function*() {
      const manager = yield* Effect.scoped(Manager.make()).pipe(Effect.provide(LeaderElection.layerAlwaysLeader))
      assert.isTrue(yield* manager.ready)
      const running = yield* Effect.forkChild(
        Manager.launch(Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader)))
      )
      yield* Effect.yieldNow
      assert.isUndefined(running.pollUnsafe()) // effect 4: a running fiber polls as undefined (effect 3: null)
      yield* Fiber.interrupt(running)
    }))
})
