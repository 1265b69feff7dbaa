/**
 * Workqueue benchmark (issues 2 and 15): add → take → done cycles over 10,000
 * distinct keys where half of the adds are duplicates, measured in one
 * process against a minimal plain-JavaScript dedup queue and the floor of any
 * Effect-wrapped queue (the same calls as `Effect.sync` no-ops), three
 * interleaved runs, medians.
 *
 * Writes bench/results/workqueue.json. Run with `npm run bench:workqueue`.
 *
 * What bounds `ratio` (issue 15; CPU profile of the FIFO cycle on one fiber, bundled, ~1.5 M cycles/s): effect's
 * run loop and `Effect.sync` primitives 35 % of samples and the generator driving them 12 % (together: the floor,
 * itself 0.45–0.9× the baseline in the same run), `Date.now` through `Clock` 17 % (three reads per cycle: the add,
 * take and done times behind client-go's queue and work duration histograms), the queue's own code 22 % (one map
 * lookup per add, ring, in-flight slot, metrics, its `Effect.sync` thunks), GC 7 %. At 0.5× the baseline a cycle
 * may cost at most 2 × floorToBaseline times the floor (0.9–1.8× it; less than the floor itself whenever the floor is
 * under 0.5× the baseline), and the three clock reads alone cost ~35 % of the floor.
 */
import { PriorityWorkqueue, Workqueue } from "@reconcile/workqueue"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const KEYS = 10_000
const keys = Array.from({ length: KEYS }, (_, i) => `default/object-${i}`)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50)
const WARMUP_ROUNDS = 10

/** The baseline: a plain JavaScript dedup queue (Set + array ring buffer) with client-go's dirty/processing rules. */
class PlainQueue {
  private ring: Array<string | undefined> = new Array(1 << 14)
  private head = 0
  private size = 0
  private dirty = new Set<string>()
  private processing = new Set<string>()
  add(key: string) {
    if (this.dirty.has(key)) return
    this.dirty.add(key)
    if (this.processing.has(key)) return
    if (this.size === this.ring.length) this.grow()
    this.ring[(this.head + this.size++) & (this.ring.length - 1)] = key
  }
  take(): string | undefined {
    if (this.size === 0) return undefined
    const key = this.ring[this.head]!
    this.ring[this.head] = undefined
    this.head = (this.head + 1) & (this.ring.length - 1)
    this.size--
    this.dirty.delete(key)
    this.processing.add(key)
    return key
  }
  done(key: string) {
    this.processing.delete(key)
    if (this.dirty.has(key)) this.add(key)
  }
  private grow() {
    const next = new Array<string | undefined>(this.ring.length * 2)
    for (let i = 0; i < this.size; i++) next[i] = this.ring[(this.head + i) & (this.ring.length - 1)]
    this.ring = next
    this.head = 0
  }
}

const perSecond = (cycles: number, nanos: bigint) => cycles / (Number(nanos) / 1e9)

const measure = (rounds: number, round: () => void): number => {
  for (let i = 0; i < WARMUP_ROUNDS; i++) round()
  const start = process.hrtime.bigint()
  for (let i = 0; i < rounds; i++) round()
  return perSecond(rounds * KEYS, process.hrtime.bigint() - start)
}

const measureEffect = <E>(rounds: number, round: Effect.Effect<void, E>): Effect.Effect<number, E> =>
  Effect.gen(function*() {
    for (let i = 0; i < WARMUP_ROUNDS; i++) yield* round
    const start = process.hrtime.bigint()
    for (let i = 0; i < rounds; i++) yield* round
    return perSecond(rounds * KEYS, process.hrtime.bigint() - start)
  })

/** One round on one fiber: every key added twice (the second add collapses), then taken and done. */
const singleFiberRound = (queue: Workqueue.Workqueue.Service) =>
  Effect.gen(function*() {
    for (const key of keys) {
      yield* queue.add(key)
      yield* queue.add(key)
    }
    for (let i = 0; i < KEYS; i++) {
      const key = yield* queue.take
      yield* queue.done(key)
    }
  })

/** One round with 8 workers taking concurrently while the main fiber adds. */
const concurrentRound = (queue: Workqueue.Workqueue.Service, workers: number) => {
  const stopKeys = Array.from({ length: workers }, (_, i) => `stop-${i}`)
  return Effect.gen(function*() {
    let remaining = KEYS
    const worker = Effect.gen(function*() {
      while (remaining > 0) {
        const key = yield* queue.take
        remaining--
        yield* queue.done(key)
        // Wake every worker still blocked in take (one distinct key each: how many are blocked depends on scheduling).
        if (remaining === 0) { for (const key of stopKeys) yield* queue.add(key) }
      }
    })
    const fibers = yield* Effect.forEach(Array.from({ length: workers }), () => Effect.forkChild(worker))
    for (const key of keys) {
      yield* queue.add(key)
      yield* queue.add(key)
    }
    yield* Fiber.joinAll(fibers)
    while ((yield* queue.len) > 0) yield* Effect.flatMap(queue.take, queue.done)
  })
}

const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const program = Effect.gen(function*() {
  const plain = new PlainQueue()
  const plainRound = () => {
    for (const key of keys) {
      plain.add(key)
      plain.add(key)
    }
    for (let i = 0; i < KEYS; i++) plain.done(plain.take()!)
  }

  // The floor of any Effect-based queue: the same four calls per cycle as Effect.sync no-ops.
  const noop = (key: string) => Effect.sync(() => void key)
  const floorRound = Effect.gen(function*() {
    for (const key of keys) {
      yield* noop(key)
      yield* noop(key)
    }
    for (let i = 0; i < KEYS; i++) {
      yield* noop(keys[i]!)
      yield* noop(keys[i]!)
    }
  })

  const fifo = yield* Workqueue.make({ name: "bench-fifo" })
  const concurrent = yield* Workqueue.make({ name: "bench-concurrent" })
  const priority = yield* PriorityWorkqueue.make({ name: "bench-priority" })

  // RUNS interleaved runs of every variant (the machine's drift hits them alike); each figure is a median, and the
  // ratios are medians of the per-run ratios.
  const runs = {
    baseline: [] as Array<number>,
    floor: [] as Array<number>,
    fifo: [] as Array<number>,
    concurrent: [] as Array<number>,
    priority: [] as Array<number>
  }
  for (let run = 0; run < RUNS; run++) {
    runs.baseline.push(measure(ROUNDS, plainRound))
    runs.floor.push(yield* measureEffect(ROUNDS, floorRound))
    runs.fifo.push(yield* measureEffect(ROUNDS, singleFiberRound(fifo)))
    runs.concurrent.push(yield* measureEffect(ROUNDS, concurrentRound(concurrent, 8)))
    runs.priority.push(yield* measureEffect(ROUNDS, singleFiberRound(priority)))
  }
  const cyclesPerSec = median(runs.fifo)
  const baselineCyclesPerSec = median(runs.baseline)
  const effectFloorCyclesPerSec = median(runs.floor)
  const concurrentCyclesPerSec = median(runs.concurrent)
  const priorityCyclesPerSec = median(runs.priority)
  const perRun = (of: Array<number>, to: Array<number>) => median(of.map((x, i) => x / to[i]!))

  const round = (n: number) => Math.round(n)
  const result = {
    benchmark: "workqueue",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
    keys: KEYS,
    rounds: ROUNDS,
    runs: RUNS,
    cyclesPerSec: round(cyclesPerSec),
    baselineCyclesPerSec: round(baselineCyclesPerSec),
    ratio: Number(perRun(runs.fifo, runs.baseline).toFixed(3)),
    effectFloorCyclesPerSec: round(effectFloorCyclesPerSec),
    floorToBaseline: Number(perRun(runs.floor, runs.baseline).toFixed(3)),
    floorRatio: Number(perRun(runs.fifo, runs.floor).toFixed(3)),
    concurrentCyclesPerSec: round(concurrentCyclesPerSec),
    priorityCyclesPerSec: round(priorityCyclesPerSec),
    priorityRatio: Number(perRun(runs.priority, runs.baseline).toFixed(3)),
    runsCyclesPerSec: Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, values.map(round)])),
    notes: "cycle = one take+done of a key that was added twice (the second add collapses). " +
      "cyclesPerSec: Workqueue on one fiber; concurrentCyclesPerSec: 8 worker fibers; " +
      "priorityCyclesPerSec: PriorityWorkqueue on one fiber; baseline: plain JS Set + ring buffer queue, same rules; " +
      "effectFloor: the same four calls per cycle as Effect.sync no-ops (what any Effect-wrapped queue pays before " +
      "doing work). Figures are medians of interleaved runs; ratios are medians of per-run ratios " +
      "(ratio = cyclesPerSec / baseline, floorToBaseline = effectFloor / baseline, floorRatio = cyclesPerSec / floor)."
  }
  const file = path.join(import.meta.dirname, "results", "workqueue.json")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  console.log(JSON.stringify(result, null, 2))
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exit(1)
})
