/**
 * Controller benchmark (issue 3).
 *
 * (a) Throughput: no-op reconciles of 100,000 distinct keys from an in-memory
 *     source through a predicate, a handler and the queue, 4 workers, metrics
 *     on. Reports reconciles per second and the runtime's overhead per
 *     reconcile in microseconds (wall time / reconciles: the reconcile itself
 *     does nothing).
 * (b) Latency: 5,000 events per second for 10 seconds (real time) through a
 *     channel source; p50/p99 of the time from offering the event to the start
 *     of its reconcile.
 *
 * Writes bench/results/controller.json. Run with `npm run bench:controller`.
 */
import { Controller, Event, Handler, Predicates, Source } from "@reconcile/core"
import { Deferred, Duration, Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"

interface Obj {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly generation: number }
}
const obj = (name: string): Obj => ({ metadata: { name, namespace: "bench", generation: 1 } })

const N = Number(process.env.BENCH_KEYS ?? 100_000)
const RATE = 5_000
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)

const throughput = (run: number) =>
  Effect.gen(function*() {
    const events = Array.from({ length: N }, (_, i) => Event.create(obj(`object-${i}`), { initial: true }))
    const finished = yield* Deferred.make<void>()
    let count = 0
    const start = performance.now()
    yield* Controller.make({
      name: `bench-throughput-${run}`,
      watches: [
        Controller.watch(
          Source.fromStream("objects", Stream.fromIterable(events)),
          Handler.forObject,
          Predicates.generationChanged
        )
      ],
      reconcile: () => ++count === N ? Deferred.succeed(finished, undefined) : Effect.void,
      options: { maxConcurrentReconciles: 4 }
    })
    yield* Deferred.await(finished)
    const seconds = (performance.now() - start) / 1000
    return N / seconds
  }).pipe(Effect.scoped)

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
    options: { maxConcurrentReconciles: 4 }
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

const program = Effect.gen(function*() {
  yield* throughput(0) // warm-up
  const runs = [yield* throughput(1), yield* throughput(2), yield* throughput(3)]
  const reconcilesPerSec = Math.max(...runs)
  const lat = yield* latency
  const result = {
    benchmark: "controller",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    keys: N,
    workers: 4,
    reconcilesPerSec: Math.round(reconcilesPerSec),
    reconcilesPerSecRuns: runs.map(Math.round),
    overheadMicros: Number((1e6 / reconcilesPerSec).toFixed(2)),
    eventsPerSec: RATE,
    seconds: SECONDS,
    p50LatencyMs: Number(lat.p50.toFixed(3)),
    p99LatencyMs: Number(lat.p99.toFixed(3)),
    maxLatencyMs: Number(lat.max.toFixed(3)),
    latencySamples: lat.samples,
    eventsSent: lat.sent,
    notes: "reconcilesPerSec: best of 3 runs after a warm-up; overheadMicros = 1e6 / reconcilesPerSec with a no-op " +
      "reconcile (source → predicate → handler → queue → worker → decide, metrics on). Latency: event offered to the " +
      "channel source → reconcile start, real time."
  }
  const file = path.join(import.meta.dirname, "results", "controller.json")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  console.log(JSON.stringify(result, null, 2))
})

Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exit(1)
})
