/**
 * What the controller benchmarks share (bench/controller.ts, bench/telemetry.ts, bench/inspector.ts): the throughput
 * run of no-op reconciles, the Manager they run under, and writing a results file.
 */
import { Controller, Event, Handler, LeaderElection, Manager, type Predicates, Source } from "@reconcile/core"
import { Deferred, Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { performance } from "node:perf_hooks"

/** The objects of the benchmarks: a name and a generation, in namespace `bench`. */
export interface Obj {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly generation: number }
}

/** The object `name`, generation 1. */
export const obj = (name: string): Obj => ({ metadata: { name, namespace: "bench", generation: 1 } })

/** Reconciles per second, and CPU µs per reconcile. */
export interface Throughput {
  readonly perSec: number
  readonly cpuMicros: number
}

/**
 * No-op reconciles of `keys` distinct objects (one initial create event each) through a stream source, the
 * predicates given, `Handler.forObject` and the queue, `workers` at a time: reconciles per second from the first
 * event to the last reconcile, and CPU time (user + system, every thread) per reconcile in µs. `around` gives the
 * run its context (a tracer, an inspector, an exporter); what it adds is set up inside the measured time, and its
 * finalizers run after it.
 */
export const throughput = (options: {
  readonly name: string
  readonly keys: number
  readonly workers: number
  readonly predicates?: ReadonlyArray<Predicates.Predicate<Obj>> | undefined
  readonly around?:
    | ((effect: Effect.Effect<Throughput, never, Manager.Manager>) => Effect.Effect<
      Throughput,
      never,
      Manager.Manager
    >)
    | undefined
}): Effect.Effect<Throughput, never, Manager.Manager> =>
  Effect.gen(function*() {
    const { keys } = options
    const events = Array.from({ length: keys }, (_, i) => Event.create(obj(`object-${i}`), { initial: true }))
    const finished = yield* Deferred.make<void>()
    let count = 0
    const start = performance.now()
    const cpu = process.cpuUsage()
    const measured = Effect.gen(function*() {
      yield* Controller.make({
        name: options.name,
        watches: [
          Controller.watch(
            Source.fromStream("objects", Stream.fromIterable(events)),
            Handler.forObject,
            ...(options.predicates ?? [])
          )
        ],
        reconcile: () => ++count === keys ? Deferred.succeed(finished, undefined) : Effect.void,
        options: { maxConcurrentReconciles: options.workers }
      })
      yield* Deferred.await(finished)
      const seconds = (performance.now() - start) / 1000
      const used = process.cpuUsage(cpu)
      return { perSec: keys / seconds, cpuMicros: (used.user + used.system) / keys }
    }).pipe(Effect.scoped)
    return yield* (options.around === undefined ? measured : options.around(measured))
  })

/** The Manager the benchmarks' controllers run under: no endpoints, always the leader. */
export const BenchManager = Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader))

/** Writes `bench/results/<name>.json` and prints it. */
export const writeResults = (name: string, result: unknown): void => {
  const file = path.join(import.meta.dirname, "..", "results", `${name}.json`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  console.log(JSON.stringify(result, null, 2))
}
