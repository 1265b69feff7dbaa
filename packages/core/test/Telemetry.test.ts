// Telemetry: the OTLP exporter against an in-process OTLP/HTTP receiver (node:http on 127.0.0.1, JSON bodies), a
// receiver that answers 503 and one that never answers; and the OTEL_* environment.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Logger, Metric, References, Stream } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Controller from "../src/Controller.js"
import * as Logging from "../src/Logging.js"
import * as Reconcile from "../src/Reconcile.js"
import * as Request from "../src/Request.js"
import * as Telemetry from "../src/Telemetry.js"
import { uniqueName } from "./harness.js"

// --- an OTLP/HTTP receiver ----------------------------------------------------------------------------------------

type Mode = "ok" | "unavailable" | "stall"

interface Received {
  readonly path: string
  readonly body: any
}

/** A receiver on 127.0.0.1 answering every export as `mode` says, keeping the bodies it could parse. */
const receiver = (mode: Mode) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly received: Array<Received>; readonly server: http.Server }>(
      (resume) => {
        const received: Array<Received> = []
        const server = http.createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString() || "{}") })
            if (mode === "stall") return // never answers
            res.writeHead(mode === "ok" ? 200 : 503, { "content-type": "application/json" })
            res.end("{}")
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, received, server }))
        })
      }
    ),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const spansOf = (received: ReadonlyArray<Received>) =>
  received.filter((r) => r.path === "/v1/traces").flatMap((r) =>
    (r.body.resourceSpans as Array<any>).flatMap((rs) =>
      (rs.scopeSpans as Array<any>).flatMap((ss) =>
        (ss.spans as Array<any>).map((span) => ({ span, resource: rs.resource }))
      )
    )
  )

const logsOf = (received: ReadonlyArray<Received>) =>
  received.filter((r) => r.path === "/v1/logs").flatMap((r) =>
    (r.body.resourceLogs as Array<any>).flatMap((rl) =>
      (rl.scopeLogs as Array<any>).flatMap((sl) => sl.logRecords as Array<any>)
    )
  )

const metricNamesOf = (received: ReadonlyArray<Received>) =>
  new Set(
    received.filter((r) => r.path === "/v1/metrics").flatMap((r) =>
      (r.body.resourceMetrics as Array<any>).flatMap((rm) =>
        (rm.scopeMetrics as Array<any>).flatMap((sm) => (sm.metrics as Array<any>).map((m) => m.name as string))
      )
    )
  )

const attributes = (list: ReadonlyArray<{ key: string; value: Record<string, unknown> }> | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]))

/** Polls (real time) until `check` holds. */
const eventually = (what: string, check: () => boolean, seconds = 15) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      if (check()) return
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

const droppedTotal = Effect.map(Metric.snapshot, (snapshots) => {
  let total = 0
  for (const s of snapshots) {
    if (s.id === Telemetry.droppedMetricName && s.type === "Counter") total += Number(s.state.count)
  }
  return total
})

/** Log lines the test keeps (logfmt, every level). */
const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.map(Logging.formatLogfmt, (line) => {
    lines.push(line)
  })
  return { lines, layer: Layer.mergeAll(Logger.layer([logger]), Layer.succeed(References.MinimumLogLevel, "All")) }
}

/** `n` distinct keys through a no-op controller (one `Effect.logInfo` per reconcile); resolves when all are done. */
const reconcileMany = (n: number, fail?: (name: string) => boolean) =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<void>()
    let count = 0
    const running = yield* Controller.run({
      name: uniqueName("telemetry"),
      requests: Stream.fromIterable(Array.from({ length: n }, (_, i) => Request.make(`object-${i}`, "default"))),
      reconcile: (request) =>
        Effect.gen(function*() {
          yield* Effect.logInfo("reconciling")
          if (++count === n) yield* Deferred.succeed(done, undefined)
          if (fail?.(request.name) === true) return yield* Reconcile.terminal("invalid")
        }),
      options: { maxConcurrentReconciles: 2 }
    }).pipe(Effect.forkChild)
    yield* Deferred.await(done)
    yield* Fiber.interrupt(running)
    return count
  })

describe("Telemetry: export to an OTLP/HTTP receiver", () => {
  it.live(
    "spans, logs with their trace and span IDs, metrics, and the resource's attributes arrive",
    () =>
      Effect.gen(function*() {
        const { received, url } = yield* receiver("ok")
        const { layer, lines } = capture()
        yield* reconcileMany(20, (name) => name === "object-3").pipe(
          Effect.andThen(eventually("20 reconcile spans", () => spansOf(received).length >= 20)),
          Effect.andThen(
            eventually("metrics", () => metricNamesOf(received).has("controller_runtime_reconcile_total"))
          ),
          Effect.andThen(eventually("logs", () => logsOf(received).length >= 20)),
          Effect.provide(Telemetry.layer({
            endpoint: url,
            serviceName: "test-operator",
            resourceAttributes: { "deployment.environment": "test", "k8s.pod.name": "op-0" },
            exportInterval: "50 millis",
            metricsExportInterval: "50 millis"
          })),
          Effect.provide(layer)
        )
        const spans = spansOf(received)
        const reconciles = spans.filter(({ span }) => span.name === "reconcile")
        assert.strictEqual(reconciles.length, 20)
        const resource = attributes(reconciles[0]!.resource.attributes)
        assert.strictEqual(resource["service.name"], "test-operator")
        assert.strictEqual(resource["deployment.environment"], "test")
        assert.strictEqual(resource["k8s.pod.name"], "op-0")
        const byName = new Map(reconciles.map(({ span }) => [attributes(span.attributes).name, span]))
        const ok = attributes(byName.get("object-0").attributes)
        assert.strictEqual(ok.namespace, "default")
        assert.strictEqual(ok.outcome, "success")
        assert.strictEqual(ok.attempt, 1)
        assert.match(String(ok.reconcileID), /^[0-9a-f-]{36}$/)
        assert.isTrue(String(ok.controller).startsWith("telemetry-"))
        assert.notStrictEqual(byName.get("object-0").status?.code, 2, "a success is not an error")
        const failed = byName.get("object-3")
        assert.strictEqual(attributes(failed.attributes).outcome, "terminal")
        assert.strictEqual(failed.status.code, 2, "a failed reconcile's span has status error")

        // each log record written in a reconcile carries that reconcile's trace and span
        const records = logsOf(received).filter((r) => r.body.stringValue === "reconciling")
        assert.strictEqual(records.length, 20)
        for (const record of records) {
          const span = byName.get(attributes(record.attributes).name)
          assert.strictEqual(record.traceId, span.traceId)
          assert.strictEqual(record.spanId, span.spanId)
        }
        // and so do the process's own lines
        const line = lines.find((l) => l.includes("msg=reconciling") && l.includes("name=object-0 "))!
        assert.include(line, `trace_id=${byName.get("object-0").traceId}`)
        assert.include(line, `span_id=${byName.get("object-0").spanId}`)
        // the controller's own line of the outcome too, written once the reconcile is over
        const outcome = lines.find((l) => l.includes("Terminal reconciler error"))!
        assert.include(outcome, `span_id=${failed.spanId}`)
        assert.isTrue(metricNamesOf(received).has(Telemetry.droppedMetricName))
        assert.strictEqual(yield* droppedTotal, 0)
      }),
    { timeout: 30_000 }
  )

  it.live("no endpoint, no tracer: a reconcile's lines carry no trace fields", () =>
    Effect.gen(function*() {
      const { layer, lines } = capture()
      yield* reconcileMany(3).pipe(Effect.provide(layer))
      const reconciling = lines.filter((l) => l.includes("msg=reconciling"))
      assert.strictEqual(reconciling.length, 3)
      for (const l of reconciling) assert.notInclude(l, "trace_id=")
    }))
})

describe("Telemetry: a collector that fails never holds reconciles back", () => {
  for (const mode of ["unavailable", "stall"] as const) {
    it.live(
      `${mode === "unavailable" ? "503 answers" : "no answer"}: every reconcile completes, the drops are counted, ` +
        "the outage is logged once per signal",
      () =>
        Effect.gen(function*() {
          const { received, url } = yield* receiver(mode)
          const { layer, lines } = capture()
          const before = yield* droppedTotal
          const count = yield* Effect.gen(function*() {
            const first = yield* reconcileMany(2000)
            yield* eventually("exports tried", () => received.some((r) => r.path === "/v1/traces"))
            // a second wave while the collector still fails
            const second = yield* reconcileMany(2000)
            while ((yield* droppedTotal) === before) yield* Effect.sleep("20 millis")
            return first + second
          }).pipe(
            Effect.provide(Telemetry.layer({
              endpoint: url,
              exportInterval: "20 millis",
              metricsExportInterval: "20 millis",
              maxQueueSize: 100,
              exportTimeout: "200 millis",
              shutdownTimeout: "100 millis"
            })),
            Effect.provide(layer)
          )
          assert.strictEqual(count, 4000, "every reconcile completed")
          assert.isAbove((yield* droppedTotal) - before, 0, "telemetry_export_dropped_total grew")
          const failing = lines.filter((l) => l.includes("OTLP export failing"))
          const signals = failing.map((l) => /signal=(\w+)/.exec(l)?.[1])
          assert.isAbove(failing.length, 0)
          assert.strictEqual(new Set(signals).size, signals.length, `once per signal: ${failing.join("\n")}`)
          assert.isFalse(lines.some((l) => l.includes("OTLP export recovered")))
        }),
      { timeout: 30_000 }
    )
  }

  it.live("a collector that comes back: the recovery is logged once", () =>
    Effect.gen(function*() {
      let answer = 503
      const server = http.createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          res.writeHead(answer)
          res.end()
        })
      })
      yield* Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void)))
      yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const { layer, lines } = capture()
      yield* Effect.gen(function*() {
        yield* reconcileMany(50)
        yield* eventually("the outage logged", () => lines.some((l) => l.includes("OTLP export failing")))
        answer = 200
        // reconciles go on (an export is tried again at most every `retryInterval`)
        const recovered = () => lines.some((l) => l.includes("OTLP export recovered"))
        const deadline = Date.now() + 10_000
        while (!recovered() && Date.now() < deadline) yield* reconcileMany(5)
      }).pipe(
        Effect.provide(Telemetry.layer({
          endpoint: url,
          exportInterval: "20 millis",
          retryInterval: "50 millis",
          signals: { metrics: false }
        })),
        Effect.provide(layer)
      )
      const traces = lines.filter((l) => l.includes("signal=traces"))
      assert.strictEqual(traces.filter((l) => l.includes("OTLP export failing")).length, 1)
      assert.strictEqual(traces.filter((l) => l.includes("OTLP export recovered")).length, 1)
    }), { timeout: 30_000 })
})

describe("Telemetry: the environment", () => {
  it.effect("reads OTEL_* as OpenTelemetry SDKs do", () =>
    Effect.gen(function*() {
      const env = yield* Telemetry.optionsFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://tempo:4318/v1/traces",
        OTEL_SERVICE_NAME: "webapp-operator",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod, k8s.pod.name=op%2D0,team=a%2Cb%3Dc",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%20def",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_METRIC_EXPORT_INTERVAL: "5000",
        OTEL_BSP_SCHEDULE_DELAY: "",
        OTEL_LOGS_EXPORTER: "none",
        OTEL_TRACES_EXPORTER: "otlp",
        UNRELATED: "x"
      })
      assert.deepStrictEqual(env, {
        endpoint: "http://collector:4318",
        tracesEndpoint: "http://tempo:4318/v1/traces",
        serviceName: "webapp-operator",
        resourceAttributes: { "deployment.environment": "prod", "k8s.pod.name": "op-0", team: "a,b=c" },
        headers: { "x-api-key": "abc def" },
        metricsExportInterval: 5000,
        signals: { logs: false },
        protocol: "http/protobuf"
      })
      assert.deepStrictEqual(yield* Telemetry.optionsFromEnv({}), {})
      assert.deepStrictEqual(
        yield* Telemetry.optionsFromEnv({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
        { disabled: true }
      )
    }))

  it.effect("refuses what it cannot read, naming the variable", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
        [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
        [{ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://c:4317" }, /http\(s\) URL/],
        [{ OTEL_RESOURCE_ATTRIBUTES: "a=1,broken" }, /OTEL_RESOURCE_ATTRIBUTES: "broken" is not key=value/],
        [{ OTEL_RESOURCE_ATTRIBUTES: "a=%E0%A4%A" }, /OTEL_RESOURCE_ATTRIBUTES/],
        [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /only http\/json and http\/protobuf/],
        [{ OTEL_METRIC_EXPORT_INTERVAL: "5s" }, /OTEL_METRIC_EXPORT_INTERVAL/],
        [{ OTEL_METRICS_EXPORTER: "prometheus" }, /OTEL_METRICS_EXPORTER "prometheus": only otlp and none/]
      ]
      for (const [env, message] of cases) {
        const error = yield* Effect.flip(Telemetry.optionsFromEnv(env))
        assert.strictEqual(error._tag, "TelemetryError")
        assert.match(error.message, message)
      }
    }))

  it.effect("resolve: a flag's endpoint wins; nothing without an endpoint; OTEL_SDK_DISABLED yields to a flag", () =>
    Effect.sync(() => {
      assert.isUndefined(Telemetry.resolve({}))
      assert.isUndefined(Telemetry.resolve({ serviceName: "x" }))
      assert.isUndefined(Telemetry.resolve({ disabled: true }))
      assert.deepStrictEqual(
        Telemetry.resolve({ endpoint: "http://env:4318", serviceName: "op" }, { endpoint: "http://flag:4318" }),
        { serviceName: "op", endpoint: "http://flag:4318" }
      )
      assert.deepStrictEqual(Telemetry.resolve({ endpoint: "http://env:4318", tracesEndpoint: "http://t/v1/traces" }), {
        endpoint: "http://env:4318",
        tracesEndpoint: "http://t/v1/traces"
      })
      assert.deepStrictEqual(Telemetry.resolve({ disabled: true }, { endpoint: "http://flag:4318" }), {
        endpoint: "http://flag:4318"
      })
    }))
})
