/**
 * Controller benchmark (issues 3 and 15).
 *
 * (a) Throughput: no-op reconciles of 100,000 distinct keys from an in-memory
 *     source through a predicate, a handler and the queue, 4 workers, metrics
 *     and log annotations on, as users run it:
 *     - without a tracer (effect's default: no span objects are built),
 *     - with a tracer installed (a span per reconcile, ended and handed to the
 *       tracer as an exporter would receive it),
 *     - and the same-run baseline: what a TypeScript author writes without
 *       Reconcile (a plain-JS dedup queue, 4 async workers, no metrics, logs or
 *       spans).
 *     Runs are interleaved (untraced, traced, plain) three times after a
 *     warm-up; the figures are the medians. Each run also reports its CPU
 *     time per reconcile (process.cpuUsage), which other load on the machine
 *     moves much less than the wall-clock rate.
 * (b) Latency: 5,000 events per second for 10 seconds (real time) through a
 *     channel source; p50/p99 of the time from offering the event to the start
 *     of its reconcile.
 *
 * Writes bench/results/controller.json. Run with `npm run bench:controller`.
 */
import { Controller, Event, Handler, Predicates, Source } from "@reconcile/core"
import { Duration, Effect, Tracer } from "effect"
import * as os from "node:os"
import { performance } from "node:perf_hooks"
import * as controllerRun from "./support/controllerRun.js"

const { obj } = controllerRun
type Obj = controllerRun.Obj

const N = Number(process.env.BENCH_KEYS ?? 100_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const WORKERS = 4
const RATE = 5_000
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)

/** A tracer as an exporter sees it: every reconcile span is made, ended, and handed over (here: counted). */
let spansEnded = 0
const tracer = Tracer.make({
  span: (options) => {
    const span = new Tracer.NativeSpan(options)
    const end = span.end.bind(span)
    span.end = (endTime, exit) => {
      end(endTime, exit)
      spansEnded++
    }
    return span
  }
})

const throughput = (run: string, traced: boolean) =>
  controllerRun.throughput({
    name: `bench-throughput-${run}`,
    keys: N,
    workers: WORKERS,
    predicates: [Predicates.generationChanged],
    around: traced ? Effect.withTracer(tracer) : undefined
  })

/** CPU time (user + system, every thread of the process) per reconcile since `since`, in µs. */
const cpuMicrosPer = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / N
}

/**
 * The baseline: the same work without Reconcile — a plain-JS dedup queue (client-go's dirty/processing rules), the
 * events filtered by the same predicate and turned into keys, 4 async workers awaiting a no-op reconcile.
 */
const plainThroughput = async (): Promise<{ readonly perSec: number; readonly cpuMicros: number }> => {
  const events = Array.from({ length: N }, (_, i) => Event.create(obj(`object-${i}`), { initial: true }))
  const ready: Array<string> = []
  let head = 0
  const dirty = new Set<string>()
  const processing = new Set<string>()
  const waiting: Array<(key: string) => void> = []
  const add = (key: string) => {
    if (dirty.has(key)) return
    dirty.add(key)
    if (processing.has(key)) return
    const taker = waiting.shift()
    if (taker !== undefined) {
      dirty.delete(key)
      processing.add(key)
      taker(key)
    } else ready.push(key)
  }
  const take = (): string | Promise<string> => {
    if (head < ready.length) {
      const key = ready[head++]!
      dirty.delete(key)
      processing.add(key)
      return key
    }
    return new Promise((resolve) => waiting.push(resolve))
  }
  const done = (key: string) => {
    processing.delete(key)
    if (dirty.has(key)) {
      dirty.delete(key)
      add(key)
    }
  }
  const reconcile = async (_request: { namespace: string; name: string }) => {}
  let count = 0
  const start = performance.now()
  const cpu = process.cpuUsage()
  let finish!: () => void
  const finished = new Promise<void>((resolve) => finish = resolve)
  for (let w = 0; w < WORKERS; w++) {
    void (async () => {
      while (count < N) {
        const key = await take()
        const slash = key.indexOf("/")
        await reconcile({ namespace: key.slice(0, slash), name: key.slice(slash + 1) })
        done(key)
        if (++count === N) finish()
      }
    })()
  }
  // The source: events in batches, yielding to the workers between batches as a stream would.
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (Predicates.generationChanged(event)) add(`${event.object.metadata.namespace}/${event.object.metadata.name}`)
    if (i % 4096 === 4095) await new Promise((resolve) => setImmediate(resolve))
  }
  await finished
  return { perSec: N / ((performance.now() - start) / 1000), cpuMicros: cpuMicrosPer(cpu) }
}

const latency = Effect.gen(function*() {
  const channel = yield* Source.channel<Obj>("events")
  const sentAt = new Map<string, number>()
  const latencies: Array<number> = []
  yield* Controller.make({
    name: "bench-latency",
    watches: [Controller.watch(channel.source, Handler.forObject)],
    reconcile: (req) =>
      Effect.sync(() => {
        const sent = sentAt.get(req.name)
        if (sent !== undefined) latencies.push(performance.now() - sent)
      }),
    options: { maxConcurrentReconciles: WORKERS }
  })
  // 5,000 events per second as batches of 5 every millisecond-ish, paced against the wall clock.
  const total = RATE * SECONDS
  const begin = performance.now()
  let sent = 0
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - begin) / 1000) * RATE))
    while (sent < due) {
      const name = `event-${sent++}`
      sentAt.set(name, performance.now())
      yield* channel.offer(Event.create(obj(name)))
    }
    yield* Effect.sleep(Duration.millis(1))
  }
  yield* Effect.sleep(Duration.millis(200))
  latencies.sort((a, b) => a - b)
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { p50: pick(0.5), p99: pick(0.99), max: latencies[latencies.length - 1]!, samples: latencies.length, sent }
}).pipe(Effect.scoped)

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const program = Effect.gen(function*() {
  // Warm-up of every variant, then interleaved runs so that the machine's drift hits all of them alike.
  yield* throughput("warmup", false)
  yield* throughput("warmup-traced", true)
  yield* Effect.promise(plainThroughput)
  const untraced: Array<number> = []
  const traced: Array<number> = []
  const plain: Array<number> = []
  const cpuUntraced: Array<number> = []
  const cpuTraced: Array<number> = []
  const cpuPlain: Array<number> = []
  spansEnded = 0
  for (let run = 0; run < RUNS; run++) {
    const u = yield* throughput(`${run}`, false)
    const t = yield* throughput(`traced-${run}`, true)
    const p = yield* Effect.promise(plainThroughput)
    untraced.push(u.perSec)
    traced.push(t.perSec)
    plain.push(p.perSec)
    cpuUntraced.push(u.cpuMicros)
    cpuTraced.push(t.cpuMicros)
    cpuPlain.push(p.cpuMicros)
  }
  if (spansEnded !== RUNS * N) throw new Error(`expected ${RUNS * N} reconcile spans, got ${spansEnded}`)
  const reconcilesPerSec = median(untraced)
  const reconcilesPerSecTraced = median(traced)
  const baselinePlainReconcilesPerSec = median(plain)
  const lat = yield* latency
  const result = {
    benchmark: "controller",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
    keys: N,
    workers: WORKERS,
    runs: RUNS,
    reconcilesPerSec: Math.round(reconcilesPerSec),
    reconcilesPerSecTraced: Math.round(reconcilesPerSecTraced),
    baselinePlainReconcilesPerSec: Math.round(baselinePlainReconcilesPerSec),
    ratioToPlain: Number(median(untraced.map((r, i) => r / plain[i]!)).toFixed(3)),
    tracedRatio: Number(median(traced.map((r, i) => r / untraced[i]!)).toFixed(3)),
    reconcilesPerSecRuns: untraced.map(Math.round),
    reconcilesPerSecTracedRuns: traced.map(Math.round),
    baselinePlainRuns: plain.map(Math.round),
    overheadMicros: Number((1e6 / reconcilesPerSec).toFixed(2)),
    overheadMicrosTraced: Number((1e6 / reconcilesPerSecTraced).toFixed(2)),
    cpuMicrosPerReconcile: Number(median(cpuUntraced).toFixed(2)),
    cpuMicrosPerReconcileTraced: Number(median(cpuTraced).toFixed(2)),
    baselinePlainCpuMicrosPerReconcile: Number(median(cpuPlain).toFixed(2)),
    cpuMicrosPerReconcileRuns: cpuUntraced.map((x) => Number(x.toFixed(2))),
    cpuMicrosPerReconcileTracedRuns: cpuTraced.map((x) => Number(x.toFixed(2))),
    eventsPerSec: RATE,
    seconds: SECONDS,
    p50LatencyMs: Number(lat.p50.toFixed(3)),
    p99LatencyMs: Number(lat.p99.toFixed(3)),
    maxLatencyMs: Number(lat.max.toFixed(3)),
    latencySamples: lat.samples,
    eventsSent: lat.sent,
    notes:
      "reconcilesPerSec (no tracer: no span objects) and reconcilesPerSecTraced (a tracer installed: one span per " +
      "reconcile, ended and handed to it): medians of interleaved runs after a warm-up, no-op reconcile through " +
      "source → predicate → handler → queue → worker → decide, controller and workqueue metrics and the four log " +
      "annotations on. baselinePlain: a plain-JS dedup queue with 4 async workers and no metrics, logs or spans, " +
      "same events and predicate, same run. overheadMicros = 1e6 / reconcilesPerSec. cpuMicrosPerReconcile*: CPU " +
      "time (user + system, all threads, GC included) per reconcile, medians of the same runs: less sensitive to " +
      "other load on the machine than the wall-clock rates. Latency: event offered to the channel source → " +
      "reconcile start, real time."
  }
  controllerRun.writeResults("controller", result)
})

Effect.runPromise(program.pipe(Effect.provide(controllerRun.BenchManager))).catch((error) => {
  console.error(error)
  process.exit(1)
})
