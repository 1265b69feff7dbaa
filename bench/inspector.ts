/**
 * Inspector benchmark (issue 27): what recording costs.
 *
 * (a) Memory: 10,000 keys, each reconciled 20 times (the default `historyPerKey`) through a channel source, so
 *     every key holds a full history of reconciles and events (every other round ends `Terminal` with an error
 *     message, the others succeed). Heap after full GCs with the controller running, minus the lower of the heap
 *     before and after it stopped; the same run without the inspector is subtracted (the lower of 2 runs each): bytes
 *     retained per key by the inspector alone.
 * (b) Throughput: bench/controller.ts's run (no-op reconciles of 100,000 distinct keys from an in-memory source
 *     through a predicate, a handler and the queue, 4 workers, metrics and log annotations on), without and with
 *     the inspector (default options: its 10,000-key bound drops records all along), interleaved after a warm-up;
 *     medians of the wall-clock rate and of the CPU time per reconcile.
 *
 * Writes bench/results/inspector.json. Run with `npm run bench:inspector` (node with `--expose-gc`).
 */
import { Controller, Event, Handler, Inspector, Predicates, Reconcile, Source } from "@reconcile/core"
import { Deferred, Effect } from "effect"
import * as os from "node:os"
import * as controllerRun from "./support/controllerRun.js"
import { heapUsed, median, perObject, settle } from "./support/heap.js"

const { obj } = controllerRun
type Obj = controllerRun.Obj

const N = Number(process.env.BENCH_KEYS ?? 100_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const WORKERS = 4
const MEMORY_KEYS = Number(process.env.BENCH_INSPECTOR_KEYS ?? 10_000)
const ROUNDS = 20

/** `effect` with the inspector in its context, or without. */
const inspected = (inspector: Inspector.Inspector.Service | undefined) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  inspector === undefined ? effect : Effect.provideService(effect, Inspector.Inspector, inspector)

const throughput = (run: string, on: boolean) =>
  Effect.gen(function*() {
    const inspector = on ? yield* Inspector.make() : undefined
    const result = yield* controllerRun.throughput({
      name: `bench-inspector-${run}`,
      keys: N,
      workers: WORKERS,
      predicates: [Predicates.generationChanged],
      around: inspected(inspector)
    })
    if (inspector !== undefined) {
      const timeline = yield* inspector.timeline({ limit: 5_000 })
      if (timeline.items.length !== 1_000) throw new Error(`expected a full timeline, got ${timeline.items.length}`)
    }
    return result
  })

/**
 * Heap bytes per key of a controller whose `MEMORY_KEYS` keys were each reconciled `ROUNDS` times, with the
 * inspector or without: (heap while it runs − the lower of the heap before it and after it stopped) / keys.
 */
const memory = (on: boolean) =>
  Effect.gen(function*() {
    const before = yield* Effect.promise(settle)
    let after = 0
    let recorded = 0
    yield* Effect.scoped(Effect.gen(function*() {
      const inspector = on ? yield* Inspector.make() : undefined
      const channel = yield* Source.channel<Obj>("objects")
      let round = 0
      let count = 0
      let roundDone = yield* Deferred.make<void>()
      yield* Controller.make({
        name: `bench-inspector-memory-${on ? "on" : "off"}`,
        watches: [Controller.watch(channel.source, Handler.forObject)],
        reconcile: (request) => {
          const done = ++count === MEMORY_KEYS ? Deferred.succeed(roundDone, undefined) : Effect.void
          return round % 2 === 1
            ? Effect.andThen(
              done,
              Effect.fail(Reconcile.terminal(new Error(`spec.replicas of ${request.name} must be positive, not -1`)))
            )
            : done
        },
        options: { maxConcurrentReconciles: WORKERS }
      }).pipe(inspected(inspector))
      for (round = 0; round < ROUNDS; round++) {
        count = 0
        roundDone = yield* Deferred.make<void>()
        for (let i = 0; i < MEMORY_KEYS; i++) yield* channel.offer(Event.create(obj(`object-${i}`)))
        yield* Deferred.await(roundDone)
      }
      if (inspector !== undefined) {
        const keys = yield* inspector.keys(`bench-inspector-memory-on`, { limit: 0 })
        recorded = keys._tag === "Some" ? keys.value.total : 0
        const one = yield* inspector.key("bench-inspector-memory-on", "bench/object-0")
        if (one._tag === "None" || one.value.reconciles.length !== ROUNDS || one.value.events.length !== 10) {
          throw new Error("a key's history is not full")
        }
      }
      after = heapUsed()
    }))
    const released = yield* Effect.promise(settle)
    return { perKey: perObject(before, after, released, MEMORY_KEYS), recorded }
  })

const program = Effect.gen(function*() {
  // memory first, on a quiet heap
  const memOff: Array<number> = []
  const memOn: Array<number> = []
  let recorded = 0
  for (let run = 0; run < 2; run++) {
    memOff.push((yield* memory(false)).perKey)
    const on = yield* memory(true)
    memOn.push(on.perKey)
    recorded = on.recorded
  }
  // a heap measurement's noise (garbage a GC left, a grown table) only adds: the lower of each is the figure
  const bytesPerKey = Math.min(...memOn) - Math.min(...memOff)

  yield* throughput("warmup-off", false)
  yield* throughput("warmup-on", true)
  const off: Array<number> = []
  const on: Array<number> = []
  const cpuOff: Array<number> = []
  const cpuOn: Array<number> = []
  for (let run = 0; run < RUNS; run++) {
    const a = yield* throughput(`off-${run}`, false)
    const b = yield* throughput(`on-${run}`, true)
    off.push(a.perSec)
    on.push(b.perSec)
    cpuOff.push(a.cpuMicros)
    cpuOn.push(b.cpuMicros)
  }
  const result = {
    benchmark: "inspector",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
    memory: {
      keys: MEMORY_KEYS,
      reconcilesPerKey: ROUNDS,
      keysRecorded: recorded,
      bytesPerKey: Math.round(bytesPerKey),
      megabytesAtDefaultMaxKeys: Number((bytesPerKey * 10_000 / 1e6).toFixed(1)),
      heapPerKeyWithInspectorRuns: memOn.map(Math.round),
      heapPerKeyWithoutInspectorRuns: memOff.map(Math.round)
    },
    throughput: {
      keys: N,
      workers: WORKERS,
      runs: RUNS,
      reconcilesPerSecOff: Math.round(median(off)),
      reconcilesPerSecOn: Math.round(median(on)),
      onToOffRatio: Number(median(on.map((r, i) => r / off[i]!)).toFixed(3)),
      cpuMicrosPerReconcileOff: Number(median(cpuOff).toFixed(2)),
      cpuMicrosPerReconcileOn: Number(median(cpuOn).toFixed(2)),
      reconcilesPerSecOffRuns: off.map(Math.round),
      reconcilesPerSecOnRuns: on.map(Math.round),
      cpuMicrosPerReconcileOffRuns: cpuOff.map((x) => Number(x.toFixed(2))),
      cpuMicrosPerReconcileOnRuns: cpuOn.map((x) => Number(x.toFixed(2)))
    },
    notes: "memory.bytesPerKey: heap retained by the inspector per key holding a full history (20 reconciles, half " +
      "of them Terminal with a 60-character message, 10 events), after full GCs: the run with the inspector minus " +
      "the same run without it (the lower of 2 runs each). throughput: bench/controller.ts's untraced run without and " +
      "with Inspector.layer()'s defaults (100,000 distinct keys against a 10,000-key bound: records are dropped " +
      "throughout), interleaved after a warm-up of each; the inspector off is the controller's own code path " +
      "(nothing is looked up per reconcile)."
  }
  controllerRun.writeResults("inspector", result)
})

Effect.runPromise(program.pipe(Effect.provide(controllerRun.BenchManager))).catch((error) => {
  console.error(error)
  process.exit(1)
})
