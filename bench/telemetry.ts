/**
 * Telemetry benchmark (issue 26): what OTLP export costs a controller, and that a collector that is down or stalled
 * does not slow reconciles.
 *
 * No-op reconciles of N distinct keys through a source, a handler and the queue, 4 workers, metrics and log
 * annotations on (bench/controller.ts's throughput setup), under four configurations, interleaved in one run after a
 * warm-up:
 * - none: no endpoint, no tracer (no span objects are built);
 * - live: `Telemetry.layer` exporting to an OTLP/HTTP receiver in this process (node:http on 127.0.0.1, answering
 *   200 after reading the body): a span per reconcile, serialized and sent;
 * - dead: `Telemetry.layer` to a port nothing listens on (connection refused);
 * - stalled: `Telemetry.layer` to a receiver that reads the request and never answers.
 * The figures are the medians of the runs; ratios are against `none` of the same run. Also reported: the spans the
 * live receiver got and the telemetry dropped per configuration (`telemetry_export_dropped_total`).
 *
 * Writes bench/results/telemetry.json. Run with `npm run bench:telemetry` (BENCH_KEYS, BENCH_RUNS).
 */
import { Telemetry } from "@reconcile/core"
import { Effect, Metric } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as controllerRun from "./support/controllerRun.js"

const N = Number(process.env.BENCH_KEYS ?? 50_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const WORKERS = 4

/** A receiver on 127.0.0.1: `ok` answers 200 once the body is read (counting spans), `stall` never answers. */
const receiver = (mode: "ok" | "stall") =>
  new Promise<{ readonly url: string; readonly spans: () => number; readonly close: () => void }>((resolve) => {
    let spans = 0
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        if (mode === "stall") return
        if (req.url === "/v1/traces") {
          const body = JSON.parse(Buffer.concat(chunks).toString())
          for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans += ss.spans.length
        }
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans: () => spans,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      }))
  })

/** A port nothing listens on: one a server had, closed again. */
const closedPort = () =>
  new Promise<string>((resolve) => {
    const server = http.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(`http://127.0.0.1:${port}`))
    })
  })

const droppedTotal = Effect.map(Metric.snapshot, (snapshots) => {
  let total = 0
  for (const s of snapshots) {
    if (s.id === Telemetry.droppedMetricName && s.type === "Counter") total += Number(s.state.count)
  }
  return total
})

const throughput = (run: string, endpoint: string | undefined) =>
  Effect.gen(function*() {
    const dropped = yield* droppedTotal
    const result = yield* controllerRun.throughput({
      name: `bench-telemetry-${run}`,
      keys: N,
      workers: WORKERS,
      around: endpoint === undefined ? undefined : Effect.provide(Telemetry.layer({
        endpoint,
        serviceName: "bench-telemetry",
        exportTimeout: "2 seconds",
        shutdownTimeout: "200 millis",
        signals: { metrics: false }
      }))
    })
    return { ...result, dropped: (yield* droppedTotal) - dropped }
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const program = Effect.gen(function*() {
  const live = yield* Effect.promise(() => receiver("ok"))
  const stalled = yield* Effect.promise(() => receiver("stall"))
  const dead = yield* Effect.promise(closedPort)
  const configs = { none: undefined, live: live.url, dead, stalled: stalled.url } as const
  type Name = keyof typeof configs
  const names = Object.keys(configs) as Array<Name>
  for (const name of names) yield* throughput(`warmup-${name}`, configs[name])
  const rates: Record<Name, Array<number>> = { none: [], live: [], dead: [], stalled: [] }
  const cpus: Record<Name, Array<number>> = { none: [], live: [], dead: [], stalled: [] }
  const dropped: Record<Name, number> = { none: 0, live: 0, dead: 0, stalled: 0 }
  const spansBefore = live.spans()
  for (let run = 0; run < RUNS; run++) {
    for (const name of names) {
      const r = yield* throughput(`${name}-${run}`, configs[name])
      rates[name].push(r.perSec)
      cpus[name].push(r.cpuMicros)
      dropped[name] += r.dropped
    }
  }
  live.close()
  stalled.close()
  const ratio = (name: Name) => Number(median(rates[name].map((r, i) => r / rates.none[i]!)).toFixed(3))
  const result = {
    benchmark: "telemetry",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
    keys: N,
    workers: WORKERS,
    runs: RUNS,
    reconcilesPerSecNoTracer: Math.round(median(rates.none)),
    reconcilesPerSecLiveCollector: Math.round(median(rates.live)),
    reconcilesPerSecDeadCollector: Math.round(median(rates.dead)),
    reconcilesPerSecStalledCollector: Math.round(median(rates.stalled)),
    liveRatio: ratio("live"),
    deadRatio: ratio("dead"),
    stalledRatio: ratio("stalled"),
    cpuMicrosPerReconcile: Object.fromEntries(names.map((n) => [n, Number(median(cpus[n]).toFixed(2))])),
    runsPerSec: Object.fromEntries(names.map((n) => [n, rates[n].map(Math.round)])),
    spansReceivedLive: live.spans() - spansBefore,
    spansExpectedLive: RUNS * N,
    droppedItems: dropped,
    notes: "No-op reconciles of N distinct keys, 4 workers, controller and workqueue metrics and log annotations on. " +
      "none: no tracer (no span objects). live: Telemetry.layer to an OTLP/HTTP JSON receiver in this process (it " +
      "parses every body, on the same event loop). dead: connection refused. stalled: the receiver never answers " +
      "(each export request times out after 2 s; batches arriving meanwhile are dropped). Ratios: medians of the " +
      "per-run ratios to `none` of the same run. droppedItems: telemetry_export_dropped_total over the measured runs."
  }
  controllerRun.writeResults("telemetry", result)
})

Effect.runPromise(program.pipe(Effect.provide(controllerRun.BenchManager))).catch((error) => {
  console.error(error)
  process.exit(1)
})
