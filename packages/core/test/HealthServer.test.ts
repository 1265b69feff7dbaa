// @effect/vitest 4: `it.live` runs scoped with live services, so it replaces `it.scopedLive`.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric, Option, Ref } from "effect"
import * as HealthServer from "../src/HealthServer.js"
import * as Prometheus from "../src/Prometheus.js"

interface Reply {
  readonly status: number
  readonly contentType: string | null
  readonly body: string
}

const get = (address: HealthServer.Address, path: string, method = "GET") =>
  Effect.promise(async (): Promise<Reply> => {
    const response = await fetch(`http://${address.host}:${address.port}${path}`, { method })
    return { status: response.status, contentType: response.headers.get("content-type"), body: await response.text() }
  })

const ready = Effect.succeed(true)

describe("HealthServer", () => {
  it.live("binds 127.0.0.1 on a free port by default", () =>
    Effect.gen(function*() {
      const address = yield* HealthServer.serve({ ready })
      assert.strictEqual(address.host, "127.0.0.1")
      assert.isAbove(address.port, 0)
    }))

  it.live("GET /metrics answers the Prometheus exposition of Effect's metrics", () =>
    Effect.gen(function*() {
      const adds = Metric.counter("workqueue_adds_total", { description: "Total number of adds handled by workqueue" })
      yield* Metric.update(Metric.withAttributes(adds, { name: "q", controller: "c" }), 2)
      const address = yield* HealthServer.serve({ ready })
      const reply = yield* get(address, "/metrics")
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.contentType, Prometheus.contentType)
      assert.include(reply.body, "# TYPE workqueue_adds_total counter\n")
      assert.include(reply.body, "\nworkqueue_adds_total{name=\"q\",controller=\"c\"} 2\n")
    }))

  it.live("metrics: false leaves /metrics out", () =>
    Effect.gen(function*() {
      const address = yield* HealthServer.serve({ ready, metrics: false })
      assert.strictEqual((yield* get(address, "/metrics")).status, 404)
      assert.strictEqual((yield* get(address, "/readyz")).status, 200)
    }))

  it.live("GET /readyz answers 503 until ready yields true, then 200", () =>
    Effect.gen(function*() {
      const synced = yield* Ref.make(false)
      const address = yield* HealthServer.serve({ ready: Ref.get(synced) })
      const before = yield* get(address, "/readyz")
      assert.strictEqual(before.status, 503)
      assert.include(before.body, "not ready")
      yield* Ref.set(synced, true)
      assert.deepStrictEqual(yield* get(address, "/readyz"), {
        status: 200,
        contentType: "text/plain",
        body: "ok"
      })
    }))

  it.live("GET /healthz answers 200 by default, 500 when healthy yields false", () =>
    Effect.gen(function*() {
      const alive = yield* Ref.make(true)
      const byDefault = yield* HealthServer.serve({ ready: Effect.succeed(false) })
      assert.deepStrictEqual(yield* get(byDefault, "/healthz"), { status: 200, contentType: "text/plain", body: "ok" })
      const address = yield* HealthServer.serve({ ready, healthy: Ref.get(alive) })
      assert.strictEqual((yield* get(address, "/healthz")).status, 200)
      yield* Ref.set(alive, false)
      assert.strictEqual((yield* get(address, "/healthz")).status, 500)
    }))

  it.live("anything else is 404", () =>
    Effect.gen(function*() {
      const address = yield* HealthServer.serve({ ready })
      assert.strictEqual((yield* get(address, "/")).status, 404)
      assert.strictEqual((yield* get(address, "/healthz/extra")).status, 404)
      assert.strictEqual((yield* get(address, "/readyz", "POST")).status, 404)
    }))

  it.live("requests are not traced", () =>
    Effect.gen(function*() {
      const untraced = Effect.map(Effect.option(Effect.currentSpan), Option.isNone)
      const address = yield* HealthServer.serve({ ready: untraced })
      assert.strictEqual((yield* get(address, "/readyz")).status, 200)
    }))

  it.live("a port in use fails with HealthServerError", () =>
    Effect.gen(function*() {
      const { port } = yield* HealthServer.serve({ ready })
      const error = yield* Effect.flip(HealthServer.serve({ port, ready }))
      assert.strictEqual(error._tag, "HealthServerError")
      assert.strictEqual(error.host, "127.0.0.1")
      assert.strictEqual(error.port, port)
      assert.include(error.reason, "EADDRINUSE")
      assert.include(error.message, `127.0.0.1:${port}`)
    }))

  it.live("an invalid port fails with HealthServerError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(HealthServer.serve({ port: 70000, ready }))
      assert.strictEqual(error._tag, "HealthServerError")
      assert.strictEqual(error.port, 70000)
    }))

  it.live("the server stops when its scope closes", () =>
    Effect.gen(function*() {
      const address = yield* Effect.scoped(
        Effect.gen(function*() {
          const address = yield* HealthServer.serve({ ready })
          assert.strictEqual((yield* get(address, "/healthz")).status, 200)
          return address
        })
      )
      const after = yield* Effect.result(Effect.tryPromise(() => fetch(`http://127.0.0.1:${address.port}/healthz`)))
      assert.isTrue(after._tag === "Failure", "a request after the scope closed fails")
    }))
})
