/**
 * The client-side rate limit (token bucket, client-go semantics) and the rest_client_* metrics: TestClock timelines
 * of the bucket, a property test of its invariants, and HTTP tests against TestApiServer through `Kube`.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Prometheus } from "@reconcile/core"
import * as LeaderElection from "@reconcile/core/LeaderElection"
import * as Manager from "@reconcile/core/Manager"
import { Faults, TestApiServer } from "@reconcile/testkit"
import { Arbitrary, Clock, Context, Duration, Effect, Fiber, Layer, Metric, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Kube from "../src/Kube.js"
import * as RestClient from "../src/RestClient.js"
import { makeEnv, onRealCluster } from "./support/env.js"

/** Forks `count` takers in order; `times[i]` is when taker i got its token (ms on the Clock). */
const takers = (bucket: RestClient.TokenBucket, count: number) =>
  Effect.gen(function*() {
    const times: Array<number | undefined> = Array.from({ length: count }, () => undefined)
    const fibers: Array<Fiber.Fiber<void>> = []
    for (let i = 0; i < count; i++) {
      fibers.push(
        yield* Effect.forkChild(Effect.flatMap(bucket.take, () =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            times[i] = now
          })))
      )
    }
    return { times, fibers, done: () => times.filter((t) => t !== undefined).length }
  })

describe("RestClient.makeTokenBucket (TestClock)", () => {
  it.effect("100 requests at once with 20 QPS / burst 30: 30 at t=0, then one every 50 ms, in call order", () =>
    Effect.gen(function*() {
      const bucket = RestClient.makeTokenBucket({ qps: 20, burst: 30 })
      const { done, times } = yield* takers(bucket, 100)
      yield* TestClock.adjust(0)
      assert.strictEqual(done(), 30)
      for (let step = 1; step <= 70; step++) {
        yield* TestClock.adjust("49 millis")
        assert.strictEqual(done(), 29 + step, `1 ms before ${step * 50} ms`)
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(done(), 30 + step, `at ${step * 50} ms`)
      }
      assert.deepStrictEqual(times, Array.from({ length: 100 }, (_, i) => i < 30 ? 0 : (i - 29) * 50))
      // 3.5 s later: empty, refilling; after 1.5 s more it is full again
      assert.strictEqual(yield* bucket.available, 0)
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(yield* bucket.available, 30)
    }))

  it.effect("defaults: rateLimit {} is 20 QPS with a burst of 30", () =>
    Effect.sync(() => {
      const bucket = RestClient.makeTokenBucket({})
      assert.deepStrictEqual([bucket.qps, bucket.burst], [20, 30])
      assert.deepStrictEqual([RestClient.defaultQps, RestClient.defaultBurst], [20, 30])
      assert.throws(() => RestClient.makeTokenBucket({ qps: 0 }))
    }))

  it.effect("fair: a waiter that came first is served first, however many come after it", () =>
    Effect.gen(function*() {
      const bucket = RestClient.makeTokenBucket({ qps: 10, burst: 1 })
      yield* bucket.take // the bucket is empty now
      const early = yield* takers(bucket, 1)
      yield* TestClock.adjust("30 millis")
      const late = yield* takers(bucket, 20)
      yield* TestClock.adjust(0)
      assert.strictEqual(early.done() + late.done(), 0)
      yield* TestClock.adjust("70 millis")
      assert.deepStrictEqual(early.times, [100])
      assert.strictEqual(late.done(), 0)
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(late.times, Array.from({ length: 20 }, (_, i) => 200 + i * 100))
    }))

  it.effect("an interrupted waiter gives its token back: the next waiter does not wait for it", () =>
    Effect.gen(function*() {
      const bucket = RestClient.makeTokenBucket({ qps: 10, burst: 1 })
      yield* bucket.take
      const a = yield* takers(bucket, 1) // due at 100 ms
      const b = yield* takers(bucket, 1) // due at 200 ms
      yield* TestClock.adjust(0)
      yield* Fiber.interrupt(b.fibers[0]!)
      const c = yield* takers(bucket, 1) // takes b's place
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual([a.times, b.times, c.times], [[100], [undefined], [200]])
      // only the newest reservation can be handed back whole: cancelling `a` (with `c` after it) frees nothing
      const d = yield* takers(bucket, 1) // due at 300 ms
      const e = yield* takers(bucket, 1) // due at 400 ms
      yield* TestClock.adjust(0)
      yield* Fiber.interrupt(d.fibers[0]!)
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual([d.times, e.times], [[undefined], [400]])
    }))

  const integer = (minimum: number, maximum: number) =>
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

  it.effect.prop(
    "random arrivals: FIFO, never above burst + qps·t in any window, and no taker waits longer than it must",
    [
      Arbitrary.all({
        qps: integer(1, 50),
        burst: integer(1, 10),
        arrivals: Arbitrary.array(integer(0, 1_500), { minLength: 1, maxLength: 40 })
      })
    ],
    ([{ arrivals, burst, qps }]) =>
      Effect.gen(function*() {
        const bucket = RestClient.makeTokenBucket({ qps, burst })
        const sorted = [...arrivals].sort((a, b) => a - b)
        const granted: Array<number> = []
        const order: Array<number> = []
        for (const [i, at] of sorted.entries()) {
          yield* Effect.forkChild(
            Effect.sleep(Duration.millis(at)).pipe(
              Effect.andThen(bucket.take),
              Effect.andThen(Clock.currentTimeMillis),
              Effect.map((now) => {
                granted[i] = now
                order.push(i)
              })
            )
          )
        }
        const interval = 1000 / qps
        const end = sorted[sorted.length - 1]! + sorted.length * interval + 10
        for (let t = 0; t <= end; t += 5) yield* TestClock.adjust("5 millis")
        assert.strictEqual(order.length, sorted.length)
        const eps = 1e-6
        for (let i = 0; i < sorted.length; i++) {
          assert.isAtLeast(granted[i]!, sorted[i]!)
          if (i > 0) {
            // FIFO: in arrival order; work-conserving: at most one interval after the one before
            assert.isAtLeast(granted[i]!, granted[i - 1]!)
            assert.isAtMost(granted[i]!, Math.max(sorted[i]!, granted[i - 1]! + interval) + eps)
          } else {
            assert.strictEqual(granted[0], sorted[0])
          }
          // the first `burst` arrivals of a full bucket go at once
          if (i < burst) assert.strictEqual(granted[i], sorted[i])
        }
        // rate: at most burst + qps·(t2 − t1) grants in any window [t1, t2]
        for (let i = 0; i < granted.length; i++) {
          for (let j = i; j < granted.length; j++) {
            assert.isAtMost(j - i + 1, burst + (granted[j]! - granted[i]!) / interval + eps)
          }
        }
      }),
    { arbitrary: { runs: 40, size: 40 } }
  )
})

const env = makeEnv()

/** A Kube connection to the test server with `options`, for the test's duration. */
const withKube = <A, E, R>(
  options: Kube.Options,
  f: (kube: Kube.Kube.Service, server: TestApiServer.TestApiServer.Service) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | Kube.KubeConfigError, Exclude<R, Kube.Kube> | TestApiServer.TestApiServer> =>
  Effect.flatMap(TestApiServer.TestApiServer, (server) =>
    Effect.flatMap(Kube.Kube, (kube) => f(kube, server)).pipe(
      Effect.provide(Kube.layerFromFile(server.kubeconfigPath, options))
    ))

/** Waits (real time) until `count()` reaches `n`, then a little longer to see it does not pass `n`. */
const settleAt = (count: () => number, n: number): Effect.Effect<void> =>
  TestClock.withLive(Effect.gen(function*() {
    const deadline = Date.now() + 5_000
    while (count() < n && Date.now() < deadline) yield* Effect.sleep("5 millis")
    yield* Effect.sleep("50 millis")
    assert.strictEqual(count(), n)
  }))

const getMany = (kube: Kube.Kube.Service, count: number): Effect.Effect<() => number> =>
  Effect.gen(function*() {
    let done = 0
    for (let i = 0; i < count; i++) {
      yield* Effect.forkChild(
        Effect.map(kube.request({ method: "GET", path: "/api/v1/namespaces/default" }), () => {
          done++
        })
      )
    }
    return () => done
  })

layer(env.layer)("Kube rate limit over HTTP (TestApiServer)", (it) => {
  it.effect("20 QPS / burst 30: 40 GETs at once, 30 answered at t=0, then one per 50 ms of the Clock", () =>
    withKube({ rateLimit: { qps: 20, burst: 30 } }, (kube) =>
      Effect.gen(function*() {
        const done = yield* getMany(kube, 40)
        yield* settleAt(done, 30)
        for (let step = 1; step <= 10; step++) {
          yield* TestClock.adjust("50 millis")
          yield* settleAt(done, 30 + step)
        }
      })))

  it.effect("off by default, with false and with qps ≤ 0: 40 GETs at once go without the Clock moving", () =>
    Effect.gen(function*() {
      for (const options of [{}, { rateLimit: false as const }, { rateLimit: { qps: -1 } }]) {
        yield* withKube(options, (kube) => Effect.flatMap(getMany(kube, 40), (done) => settleAt(done, 40)))
      }
    }))

  it.effect("a watch takes no token: it opens while the bucket is empty", () =>
    withKube({ rateLimit: { qps: 0.001, burst: 1 } }, (kube) =>
      Effect.gen(function*() {
        yield* kube.request({ method: "GET", path: "/api/v1/namespaces/default" }) // the only token
        const waiting = yield* getMany(kube, 1)
        const bytes = yield* kube.stream({ method: "GET", path: "/api/v1/namespaces", query: { watch: true } }).pipe(
          Stream.take(1),
          Stream.runCollect
        )
        assert.isAbove(bytes.length, 0)
        yield* settleAt(waiting, 0)
      })))

  it.effect("the wait for a token does not count against the request timeout", () =>
    withKube(
      { rateLimit: { qps: 1, burst: 1 }, timeout: "100 millis", retry: { times: 0 } },
      (kube) =>
        Effect.gen(function*() {
          const done = yield* getMany(kube, 2)
          yield* settleAt(done, 1)
          yield* TestClock.adjust("999 millis")
          yield* settleAt(done, 1)
          yield* TestClock.adjust("1 millis") // the second GET has waited 1 s, ten times its timeout: it goes
          yield* settleAt(done, 2)
        })
    ))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)("every retry takes a token (client-go throttles each attempt)", () =>
    withKube(
      { rateLimit: { qps: 10, burst: 1 }, retry: { times: 3, base: "1 millis", max: "1 millis" } },
      (kube) =>
        Effect.gen(function*() {
          const faults = yield* Faults.Faults
          yield* faults.failRequests({ code: 503, verbs: ["get"], resources: ["namespaces"], count: 2 })
          const start = Date.now()
          yield* kube.request({ method: "GET", path: "/api/v1/namespaces/default" })
          // three attempts from a bucket of one at 10 QPS: the third goes 200 ms after the first
          assert.isAtLeast(Date.now() - start, 190)
        })
    ).pipe(TestClock.withLive))

  describe("rest_client metrics", () => {
    const series = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>, name: string, attrs: Record<string, string>) =>
      snapshots.find((s) =>
        s.id === name && Object.entries(attrs).every(([k, v]) => s.attributes?.[k] === v) &&
        Object.keys(s.attributes ?? {}).length === Object.keys(attrs).length
      )
    const count = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>, name: string, attrs: Record<string, string>) => {
      const s = series(snapshots, name, attrs)
      if (s === undefined) return 0
      if (s.type === "Counter") return Number(s.state.count)
      if (s.type === "Histogram") return s.state.count
      throw new Error(`unexpected ${s.type}`)
    }

    // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
    it.effect.skipIf(onRealCluster)(
      "rest_client_requests_total{code,method,host} per attempt; duration{verb,host} per request",
      () =>
        withKube({ retry: { times: 3, base: "1 millis", max: "2 millis" } }, (kube, server) =>
          Effect.gen(function*() {
            const host = `127.0.0.1:${server.port}`
            const faults = yield* Faults.Faults
            const name = `rl-${Date.now()}`
            yield* kube.request({ method: "GET", path: "/api/v1/namespaces/default" })
            yield* Effect.exit(kube.request({ method: "GET", path: "/api/v1/namespaces/default/configmaps/missing" }))
            const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" } }
            const path = "/api/v1/namespaces/default/configmaps"
            yield* kube.request({ method: "POST", path, body: cm })
            yield* Effect.exit(kube.request({ method: "POST", path, body: cm }))
            // two 503s then a 200: three attempts counted, one request timed
            yield* faults.failRequests({ code: 503, verbs: ["get"], resources: ["configmaps"], count: 2 })
            yield* kube.request({ method: "GET", path: `${path}/${name}` })
            // a watch: counted by its answer, not timed
            yield* kube.stream({ method: "GET", path: "/api/v1/namespaces", query: { watch: true } }).pipe(
              Stream.take(1),
              Stream.runDrain
            )
            const snapshots = yield* Metric.snapshot
            const total = (code: string, method: string) =>
              count(snapshots, "rest_client_requests_total", { code, method, host })
            assert.deepStrictEqual(
              [
                total("200", "GET"),
                total("404", "GET"),
                total("201", "POST"),
                total("409", "POST"),
                total("503", "GET")
              ],
              [3, 1, 1, 1, 2]
            )
            const timed = (verb: string) => count(snapshots, "rest_client_request_duration_seconds", { verb, host })
            assert.deepStrictEqual([timed("GET"), timed("POST")], [3, 2])

            // the exposition, as /metrics serves it
            const text = yield* Prometheus.format(snapshots)
            assert.include(text, "# TYPE rest_client_requests_total counter")
            assert.include(text, `rest_client_requests_total{code="503",method="GET",host="${host}"} 2`)
            assert.include(text, "# TYPE rest_client_request_duration_seconds histogram")
            const buckets = text.split("\n").filter((l) =>
              l.startsWith(`rest_client_request_duration_seconds_bucket{verb="POST",host="${host}"`)
            ).map((l) => /le="([^"]+)"/.exec(l)![1])
            assert.deepStrictEqual(buckets, [
              "0.005",
              "0.025",
              "0.1",
              "0.25",
              "0.5",
              "1",
              "2",
              "4",
              "8",
              "15",
              "30",
              "60",
              "+Inf"
            ])
            assert.include(text, `rest_client_request_duration_seconds_count{verb="POST",host="${host}"} 2`)
          })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), TestClock.withLive)
    )

    it.effect("the Manager's /metrics serves them", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const host = `127.0.0.1:${server.port}`
        const context = yield* Layer.build(
          Manager.layer({ metricsPort: 0 }).pipe(Layer.provide(LeaderElection.layerAlwaysLeader))
        )
        const port = Context.get(context, Manager.Manager).metricsAddress!.port
        yield* withKube({}, (kube) => kube.request({ method: "GET", path: "/api/v1/namespaces/kube-system" }))
        const body = yield* Effect.promise(async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
        const line = body.split("\n").find((l) =>
          l.startsWith(`rest_client_requests_total{code="200",method="GET",host="${host}"} `)
        )
        assert.isDefined(line, body)
        assert.isAtLeast(Number(line!.split(" ").pop()), 1)
        assert.include(body, `rest_client_request_duration_seconds_count{verb="GET",host="${host}"} `)
      }).pipe(TestClock.withLive))

    it.effect("no answer is code <error>, with the server's host", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        // a kubeconfig whose server port has nothing listening
        const yaml = server.kubeconfig.replace(`127.0.0.1:${server.port}`, "127.0.0.1:1")
        assert.notStrictEqual(yaml, server.kubeconfig)
        const exit = yield* Effect.exit(
          Effect.flatMap(Kube.Kube, (kube) => kube.request({ method: "GET", path: "/api/v1/namespaces" })).pipe(
            Effect.provide(Kube.layerFromString(yaml, { retry: { times: 1, base: "1 millis", max: "1 millis" } }))
          )
        )
        assert.strictEqual(exit._tag, "Failure")
        const snapshots = yield* Metric.snapshot
        assert.strictEqual(
          count(snapshots, "rest_client_requests_total", { code: "<error>", method: "GET", host: "127.0.0.1:1" }),
          2
        )
        assert.strictEqual(
          count(snapshots, "rest_client_request_duration_seconds", { verb: "GET", host: "127.0.0.1:1" }),
          1
        )
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), TestClock.withLive))
  })
})
