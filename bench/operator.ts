/**
 * End-to-end operator benchmark (issue 15): the same operator — for each WebApp, read it from the cache, server-side
 * apply one Deployment and one Service owned by it, patch its status — written three ways, each in its own process
 * against the testkit's TestApiServer in another process:
 *
 * - `reconcile`: Reconcile (`KubeController` + `Cache` + `KubeClient`, with a `Manager`), bench/operator/reconcile.ts;
 * - `client-node`: `@kubernetes/client-node`'s `makeInformer` and a plain deduplicating queue,
 *   bench/operator/clientNode.ts;
 * - `fluent`: kubernetes-fluent-client's `K8s(...).Watch` / `Apply` / `PatchStatus`, bench/operator/fluent.ts.
 *
 * A run: a fresh server; the operator starts; one warm-up WebApp must converge (the operator is up and synced);
 * then N WebApps are created at once in the server (in-process, no HTTP) and the clock runs until every one has
 * converged (status.observedGeneration = generation, Deployment and Service exist, controlled by it) or the
 * timeout. Figures per run: seconds to converge, operator CPU seconds in that window (`process.cpuUsage`, reported
 * by the operator), peak RSS (the process's maxRSS) and peak heap (sampled every 100 ms), and requests the server
 * answered in the window (its request log). With faults, 5 % of the operator's requests (get/list/watch/patch)
 * answer 500 from the moment the warm-up object converged.
 *
 * The cap keeps the run within `npm run bench`'s 10 minutes: without faults, ours runs first, and the others stop at
 * 4 × our time (at least 30 s) if they have not converged by then (they take about 3 × here, so they normally
 * converge and every figure is exact). Such a run is reported as "at the cap", with how many objects had
 * converged; its time and CPU seconds are lower bounds, so the ratios against it are upper bounds (a time ratio ≤
 * 0.25 with the default cap). Runs with faults are never capped: each must converge within the timeout, or the
 * table says it did not.
 *
 * The real kube-apiserver (issue 25): `reconcile` against `controller-runtime` — the same operator written with
 * controller-runtime v0.24 in Go (bench/operator/controller-runtime, built with Go into a cache outside the
 * repository by buildControllerRuntime.ts; without Go its rows are skipped with a note) — each run on a fresh etcd +
 * kube-apiserver from Envtest with no controller manager (operator/realServer.ts: same protocol as server.ts; the
 * WebApps created through the API by 32 writers; convergence from three watches). Same 8 workers, no client-side
 * rate limit on either side (ours: KubeClient without `rateLimit`; theirs: rest.Config QPS -1); CPU seconds and
 * peak RSS from getrusage for both (Node's `process.cpuUsage` / `maxRSS`, Go's `syscall.Getrusage`); the
 * kube-apiserver's and etcd's CPU seconds from /proc. No cap: each runs until it converges or
 * BENCH_OPERATOR_REAL_TIMEOUT (600 s). Figures: `convergeRatioVsControllerRuntime`, `cpuRatioVsControllerRuntime`,
 * `rssRatioVsControllerRuntime` (at 10,000), `comparisonsReal` per size, `real.runs`. BENCH_OPERATOR_REAL=0 skips
 * it, =only runs it alone and merges it into the last operator.json; BENCH_OPERATOR_REAL_SIZES (1000,10000),
 * BENCH_OPERATOR_REAL_ROUNDS (1; the order alternates round by round and size by size, medians are compared),
 * BENCH_OPERATOR_REAL_ONLY (reconcile,controller-runtime; client-node works too). `controller-runtime` can run on
 * the TestApiServer too (BENCH_OPERATOR_ONLY=...,controller-runtime).
 *
 * Writes bench/results/operator.json. `npm run bench:operator`. Sizes: BENCH_OPERATOR_SIZES (1000,10000),
 * BENCH_OPERATOR_FAULT_SIZE (500), BENCH_OPERATOR_TIMEOUT (seconds per run, 180), BENCH_OPERATOR_CAP (4; 0 runs
 * every implementation until it converges), BENCH_OPERATOR_ONLY
 * (a comma-separated subset of reconcile,client-node,fluent), BENCH_OPERATOR_PROFILE (a directory: each operator
 * writes a `--cpu-prof` profile there), BENCH_OPERATOR_REQUEST_LOG (a file: the server appends every request).
 */
import * as Envtest from "@reconcile/testkit/Envtest"
import { Effect, Result } from "effect"
import { type ChildProcess, fork, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { build, type Built } from "./operator/buildControllerRuntime.js"
import type { FromServer, ToServer } from "./operator/server.js"
import { CONCURRENCY, type FromOperator, type ToOperator } from "./operator/shared.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const SIZES = (process.env.BENCH_OPERATOR_SIZES ?? "1000,10000").split(",").map(Number)
const FAULT_SIZE = Number(process.env.BENCH_OPERATOR_FAULT_SIZE ?? 500)
const TIMEOUT_MS = Number(process.env.BENCH_OPERATOR_TIMEOUT ?? 180) * 1000
/** Without faults, the others stop at this multiple of our time at the same size (0: run until they converge). */
const CAP = Number(process.env.BENCH_OPERATOR_CAP ?? 4)
const FAULT_PROBABILITY = 0.05

const implementations = {
  reconcile: "operator/reconcile.ts",
  "client-node": "operator/clientNode.ts",
  fluent: "operator/fluent.ts",
  /** The Go program bench/operator/controller-runtime, built into a cache (buildControllerRuntime.ts). */
  "controller-runtime": "controller-runtime"
} as const
type Implementation = keyof typeof implementations
const selected = (process.env.BENCH_OPERATOR_ONLY?.split(",") ?? ["reconcile", "client-node", "fluent"]) as Array<
  Implementation
>
/** The real kube-apiserver race (BENCH_OPERATOR_REAL=0 skips it). */
const REAL = process.env.BENCH_OPERATOR_REAL !== "0"
const REAL_SIZES = (process.env.BENCH_OPERATOR_REAL_SIZES ?? "1000,10000").split(",").map(Number)
const REAL_ROUNDS = Number(process.env.BENCH_OPERATOR_REAL_ROUNDS ?? 1)
const REAL_TIMEOUT_MS = Number(process.env.BENCH_OPERATOR_REAL_TIMEOUT ?? 600) * 1000
const realSelected = (process.env.BENCH_OPERATOR_REAL_ONLY?.split(",") ?? ["reconcile", "controller-runtime"]) as Array<
  Implementation
>
type Mode = "memory" | "real"

interface Run {
  readonly implementation: Implementation
  /** `memory`: the TestApiServer; `real`: etcd + kube-apiserver (Envtest). */
  readonly server: Mode
  readonly objects: number
  readonly faults: number
  /** Every object converged before the timeout (or the cap). */
  readonly converged: boolean
  /** Stopped at the cap, before converging: `seconds` and `cpuSeconds` are lower bounds of what it needs. */
  readonly capped: boolean
  /** Seconds from the create of the first object until all converged (else until the cap or timeout). */
  readonly seconds: number
  /** How many of the objects had converged when the run ended. */
  readonly convergedObjects: number
  /** At the cap: `seconds` and `cpuSeconds` scaled by objects ÷ convergedObjects (a linear projection, no more). */
  readonly projectedSeconds?: number
  readonly projectedCpuSeconds?: number
  readonly cpuSeconds: number
  readonly cpuSecondsTotal: number
  readonly peakRssMiB: number
  readonly peakHeapMiB: number
  readonly requests: number
  readonly failedRequests: number
  readonly requestsPerObject: number
  /** The API server's CPU seconds in the same window (its process). */
  readonly serverCpuSeconds: number
  /** Real server: etcd's CPU seconds in the window. */
  readonly etcdCpuSeconds?: number
  /** Real server: seconds until every create was answered (API creates, or etcd puts). */
  readonly createSeconds?: number
  /** Real server: CPU seconds per second of the window, of the operator, kube-apiserver, etcd and the machine. */
  readonly coresUsed?: {
    readonly operator: number
    readonly kubeApiserver: number
    readonly etcd: number
    readonly machine: number
    readonly machineCores: number
  }
  readonly startupSeconds: number
  readonly error?: string
}

/** A child process: a TypeScript file forked with IPC, or a binary speaking the same messages as JSON lines. */
type Program = { readonly file: string } | { readonly binary: string; readonly args: ReadonlyArray<string> }

/** A child: `next(op)` waits for the first matching message. */
const child = <In, Out extends { readonly op: string }>(program: Program, env: Record<string, string>) => {
  const name = "file" in program ? program.file : path.basename(path.dirname(program.binary))
  const process_ = "file" in program
    ? fork(path.join(here, program.file), [], {
      execArgv: [
        "--import",
        "tsx",
        ...(process.env.BENCH_OPERATOR_PROFILE !== undefined && !program.file.includes("erver.ts")
          ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_OPERATOR_PROFILE}`]
          : [])
      ],
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe", "ipc"]
    })
    : spawn(program.binary, program.args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  process_.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const waiters: Array<{ test: (m: Out) => boolean; resolve: (m: Out) => void }> = []
  const backlog: Array<Out> = []
  const receive = (m: Out) => {
    const i = waiters.findIndex((w) => w.test(m))
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m)
    else backlog.push(m)
  }
  if ("file" in program) {
    process_.on("message", receive)
  } else {
    let buffer = ""
    process_.stdout!.setEncoding("utf8")
    process_.stdout!.on("data", (chunk: string) => {
      buffer += chunk
      let newline: number
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        if (line.trim().length > 0) receive(JSON.parse(line) as Out)
      }
    })
    process_.stdin!.on("error", () => {}) // a child gone before a write: its exit says so
  }
  let exited: string | undefined
  const failures: Array<() => void> = []
  process_.on("exit", (code, signal) => {
    exited = `exited (${signal ?? code})`
    // nothing more will come: every wait fails now
    for (const fail of failures.splice(0)) fail()
  })
  return {
    process: process_ as ChildProcess,
    send: (m: In) => {
      if ("file" in program) process_.send(m as any)
      else process_.stdin!.write(JSON.stringify(m) + "\n")
    },
    next: <O extends Out["op"]>(op: O, timeoutMs: number, test: (m: Extract<Out, { op: O }>) => boolean = () => true) =>
      new Promise<Extract<Out, { op: O }>>((resolve, reject) => {
        const match = (m: Out) => m.op === op && test(m as any)
        const i = backlog.findIndex(match)
        if (i >= 0) return resolve(backlog.splice(i, 1)[0] as any)
        const fail = () => {
          clearTimeout(timer)
          const w = waiters.findIndex((x) => x.resolve === done)
          if (w >= 0) waiters.splice(w, 1)
          reject(new Error(`${name}: no ${op} within ${timeoutMs} ms${exited ? `; ${exited}` : ""}\n${stderr}`))
        }
        const timer = setTimeout(fail, timeoutMs)
        const done = (m: Out) => {
          clearTimeout(timer)
          resolve(m as any)
        }
        waiters.push({ test: match, resolve: done })
        if (exited !== undefined) fail()
        else failures.push(fail)
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (process_.exitCode !== null || process_.signalCode !== null) return resolve()
        // the real server stops etcd and kube-apiserver first
        const kill = setTimeout(() => process_.kill("SIGKILL"), 10_000)
        process_.once("exit", () => {
          clearTimeout(kill)
          resolve()
        })
        process_.kill("SIGTERM")
      }),
    stderr: () => stderr
  }
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024 * 10) / 10
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits

/** The machine's busy and total CPU seconds (all cores) from /proc/stat, or undefined off Linux. */
const machineCpu = () => {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    const total = fields.reduce((a, b) => a + b, 0) / 100
    const idle = (fields[3]! + fields[4]!) / 100 // idle + iowait
    return { busy: total - idle, total }
  } catch {
    return undefined
  }
}

/** The controller-runtime binary (built on first use), or why there is none. */
let controllerRuntime: Promise<Built> | undefined
const controllerRuntimeBinary = () => (controllerRuntime ??= build())

const programOf = async (implementation: Implementation): Promise<Program> => {
  if (implementation !== "controller-runtime") return { file: implementations[implementation] }
  const built = await controllerRuntimeBinary()
  if ("skipped" in built) throw new Error(built.skipped)
  // the same workers as ours; no client-side rate limit, as our KubeClient (no `rateLimit`)
  // BENCH_OPERATOR_CR_CONTENT_TYPE (e.g. application/json): controller-runtime's REST clients ask for it instead of
  // their default (protobuf for client-go's kinds), to see what the server's encoding costs
  const contentType = process.env.BENCH_OPERATOR_CR_CONTENT_TYPE
  return {
    binary: built.binary,
    args: [`-workers=${CONCURRENCY}`, "-qps=-1", ...(contentType ? [`-content-type=${contentType}`] : [])]
  }
}

const runOne = async (
  implementation: Implementation,
  objects: number,
  faults: number,
  capMs: number | undefined,
  mode: Mode = "memory"
): Promise<Run> => {
  const real = mode === "real"
  const timeoutMs = real ? REAL_TIMEOUT_MS : TIMEOUT_MS
  const server = child<ToServer, FromServer>({ file: real ? "operator/realServer.ts" : "operator/server.ts" }, {})
  let operator: ReturnType<typeof child<ToOperator, FromOperator>> | undefined
  try {
    const ready = await server.next("ready", real ? 120_000 : 60_000)
    const started = performance.now()
    operator = child<ToOperator, FromOperator>(await programOf(implementation), {
      BENCH_KUBECONFIG: ready.kubeconfigPath,
      KUBECONFIG: ready.kubeconfigPath
    })
    await operator.next("started", 60_000)
    server.send({ op: "create", prefix: "warmup", count: 1 })
    await server.next("converged", 60_000, (m) => m.prefix === "warmup")
    const startupSeconds = (performance.now() - started) / 1000
    server.send({ op: "faults", probability: faults })
    const before = await server.next("requests", 10_000)
    operator.send({ op: "mark" })
    const machineBefore = machineCpu()
    server.send({ op: "create", prefix: "app", count: objects })
    let converged = true
    const limitMs = capMs === undefined ? timeoutMs : Math.min(capMs, timeoutMs)
    let seconds = limitMs / 1000
    let error: string | undefined
    try {
      const done = await server.next("converged", limitMs, (m) => m.prefix === "app")
      seconds = done.millis / 1000
    } catch {
      converged = false
      if (limitMs === timeoutMs) error = `not converged within the timeout (${timeoutMs / 1000} s)`
    }
    const machineAfter = machineCpu()
    operator.send({ op: "report" })
    const report = await operator.next("report", 10_000)
    server.send({ op: "requests" })
    const after = await server.next("requests", 10_000)
    const created = real
      ? await server.next("created", 1_000, (m) => m.prefix === "app").catch(() => undefined)
      : undefined
    // real: the server's own count holds the driver's creates and the scrape before the window; not the operator's
    const requests = after.requests - before.requests -
      (real ? 1 + objects : 0)
    const perSecond = (x: number) => round(x / seconds, 2)
    return {
      implementation,
      server: mode,
      objects,
      faults,
      converged,
      capped: !converged && error === undefined,
      seconds: round(seconds, 3),
      convergedObjects: converged ? objects : after.converged,
      ...(!converged && error === undefined && after.converged > 0
        ? {
          projectedSeconds: round(seconds * objects / after.converged, 1),
          projectedCpuSeconds: round(report.cpuSeconds * objects / after.converged, 1)
        }
        : {}),
      cpuSeconds: round(report.cpuSeconds, 3),
      cpuSecondsTotal: round(report.cpuSecondsTotal, 3),
      peakRssMiB: mib(report.peakRssBytes),
      peakHeapMiB: mib(report.peakHeapBytes),
      requests,
      failedRequests: after.failed - before.failed,
      requestsPerObject: round(requests / objects, 2),
      serverCpuSeconds: round(after.cpuSeconds - before.cpuSeconds, 3),
      ...(real
        ? {
          etcdCpuSeconds: round((after.etcdCpuSeconds ?? NaN) - (before.etcdCpuSeconds ?? NaN), 3),
          ...(created === undefined ? {} : { createSeconds: round(created.millis / 1000, 3) }),
          coresUsed: {
            operator: perSecond(report.cpuSeconds),
            kubeApiserver: perSecond(after.cpuSeconds - before.cpuSeconds),
            etcd: perSecond((after.etcdCpuSeconds ?? NaN) - (before.etcdCpuSeconds ?? NaN)),
            machine: machineBefore !== undefined && machineAfter !== undefined
              ? perSecond(machineAfter.busy - machineBefore.busy)
              : NaN,
            machineCores: os.cpus().length
          }
        }
        : {}),
      startupSeconds: round(startupSeconds, 2),
      ...(error === undefined ? {} : { error })
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    console.error(`${implementation} ${objects}: ${message}`)
    return {
      implementation,
      server: mode,
      objects,
      faults,
      converged: false,
      capped: false,
      seconds: timeoutMs / 1000,
      convergedObjects: 0,
      cpuSeconds: NaN,
      cpuSecondsTotal: NaN,
      peakRssMiB: NaN,
      peakHeapMiB: NaN,
      requests: NaN,
      failedRequests: NaN,
      requestsPerObject: NaN,
      serverCpuSeconds: NaN,
      startupSeconds: NaN,
      error: message.split("\n")[0]
    }
  } finally {
    await operator?.stop()
    await server.stop()
  }
}

const line = (r: Run) =>
  `${r.implementation.padEnd(12)} ${String(r.objects).padStart(6)} ${r.faults > 0 ? "5% faults" : "         "} ` +
  `${r.converged ? "converged " : r.capped ? "at the cap" : "NOT CONVERGED"} ${r.capped ? "≥" : " "}${
    r.seconds.toFixed(2).padStart(7)
  } s  cpu ${r.capped ? "≥" : " "}${r.cpuSeconds.toFixed(2).padStart(6)} s  rss ${
    String(r.peakRssMiB).padStart(6)
  } MiB  heap ${String(r.peakHeapMiB).padStart(6)} MiB  requests ${
    String(r.requests).padStart(6)
  } (${r.requestsPerObject}/object, ${r.failedRequests} failed)  server cpu ${r.serverCpuSeconds.toFixed(2)} s${
    r.etcdCpuSeconds === undefined ? "" : `  etcd cpu ${r.etcdCpuSeconds.toFixed(2)} s`
  }${r.createSeconds === undefined ? "" : `  created in ${r.createSeconds.toFixed(2)} s`}${
    r.converged ? "" : `  (${r.convergedObjects}/${r.objects} converged)`
  }${r.error === undefined ? "" : `  ${r.error}`}`

const runs: Array<Run> = []
const scenarios: Array<[number, number]> = [
  ...SIZES.map((n): [number, number] => [n, 0]),
  ...(FAULT_SIZE > 0 ? [[FAULT_SIZE, FAULT_PROBABILITY] as [number, number]] : [])
]
const startedAll = performance.now()
/** BENCH_OPERATOR_REAL=only: the real race alone, merged into the last operator.json (its other figures kept). */
const onlyReal = process.env.BENCH_OPERATOR_REAL === "only"
for (const [objects, faults] of onlyReal ? [] : scenarios) {
  // ours first: without faults, the others stop at CAP × our time (they have then lost by at least 1/CAP)
  let capMs: number | undefined
  for (const implementation of selected) {
    const run = await runOne(implementation, objects, faults, implementation === "reconcile" ? undefined : capMs)
    if (implementation === "reconcile" && run.converged && faults === 0 && CAP > 0) {
      capMs = Math.max(30_000, run.seconds * 1000 * CAP)
    }
    runs.push(run)
    console.log(line(run))
  }
}

/**
 * Ours ÷ the best other implementation (lowest time) that converged — or that was still converging when stopped at
 * the cap: its time and CPU seconds are then lower bounds, so the ratios are upper bounds (`bound: true`).
 */
const compare = (objects: number, faults = 0) => {
  const at = runs.filter((r) => r.objects === objects && r.faults === faults)
  const ours = at.find((r) => r.implementation === "reconcile")
  const others = at.filter((r) => r.implementation !== "reconcile" && (r.converged || r.capped))
  if (ours === undefined || !ours.converged || others.length === 0) return undefined
  const time = (r: Run) => r.projectedSeconds ?? r.seconds
  const best = others.reduce((a, b) => (time(b) < time(a) ? b : a))
  return {
    against: best.implementation,
    bound: best.capped,
    ...(best.projectedSeconds !== undefined && best.projectedCpuSeconds !== undefined
      ? {
        projectedConvergeRatio: round(ours.seconds / best.projectedSeconds, 3),
        projectedCpuRatio: round(ours.cpuSeconds / best.projectedCpuSeconds, 3)
      }
      : {}),
    convergeRatio: round(ours.seconds / best.seconds, 3),
    cpuRatio: round(ours.cpuSeconds / best.cpuSeconds, 3),
    peakRssRatio: round(ours.peakRssMiB / best.peakRssMiB, 3),
    requestsRatio: round(ours.requests / best.requests, 3)
  }
}

// -----------------------------------------------------------------------------------------------------------------
// the real kube-apiserver: ours against controller-runtime

const realRuns: Array<Run> = []
let realSkipped: string | undefined
if (!REAL) {
  realSkipped = "BENCH_OPERATOR_REAL=0"
} else {
  const built = realSelected.includes("controller-runtime") ? await controllerRuntimeBinary() : undefined
  const assets = await Effect.runPromise(Effect.result(Envtest.findAssets()))
  if (Result.isFailure(assets)) {
    realSkipped = `no control-plane binaries (${assets.failure.detail.split("\n")[0]})`
  } else {
    const contenders = realSelected.filter((i) =>
      i !== "controller-runtime" || (built !== undefined && "binary" in built)
    )
    if (built !== undefined && "skipped" in built) {
      console.log(`real kube-apiserver: the controller-runtime rows are skipped: ${built.skipped}`)
    } else if (built !== undefined && "binary" in built) {
      console.log(
        `controller-runtime peer: ${built.binary} (${built.built ? `built in ${built.seconds} s` : "cached"})`
      )
    }
    for (const objects of REAL_SIZES) {
      for (let round_ = 0; round_ < REAL_ROUNDS; round_++) {
        // alternate who goes first, round by round and size by size
        const order = (round_ + REAL_SIZES.indexOf(objects)) % 2 === 0 ? contenders : [...contenders].reverse()
        for (const implementation of order) {
          const run = await runOne(implementation, objects, 0, undefined, "real")
          realRuns.push(run)
          console.log(`real ${line(run)}`)
        }
      }
    }
  }
}
if (realSkipped !== undefined) console.log(`real kube-apiserver: skipped (${realSkipped})`)

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** What held a real run back, from the CPU each process used per second of the window. */
const boundBy = (r: Run): string => {
  const c = r.coresUsed
  if (c === undefined || !r.converged) return "unknown"
  const shares =
    `operator ${c.operator}, kube-apiserver ${c.kubeApiserver}, etcd ${c.etcd} of the machine's ${c.machine}`
  if (c.machine >= 0.9 * c.machineCores) {
    const [largest] = [["operator", c.operator], ["kube-apiserver", c.kubeApiserver], ["etcd", c.etcd]].sort((a, b) =>
      (b[1] as number) - (a[1] as number)
    )
    return `the machine's ${c.machineCores} cores, all busy, ${largest![0]} the largest user (${shares} cores)`
  }
  if (r.implementation !== "controller-runtime" && c.operator >= 0.85) {
    return `the operator's event loop (one thread: ${shares} cores)`
  }
  return `round trips: ${CONCURRENCY} workers waiting on the server (${shares} cores)`
}

/** Ours ÷ controller-runtime at one size on the real server (medians of the rounds). */
const compareReal = (objects: number) => {
  const of = (implementation: Implementation) =>
    realRuns.filter((r) => r.server === "real" && r.objects === objects && r.implementation === implementation)
  const ours = of("reconcile")
  const theirs = of("controller-runtime")
  if (ours.length === 0 || theirs.length === 0 || ![...ours, ...theirs].every((r) => r.converged)) return undefined
  const m = (rs: ReadonlyArray<Run>, f: (r: Run) => number) => median(rs.map(f))
  return {
    convergeRatio: round(m(ours, (r) => r.seconds) / m(theirs, (r) => r.seconds), 3),
    cpuRatio: round(m(ours, (r) => r.cpuSeconds) / m(theirs, (r) => r.cpuSeconds), 3),
    rssRatio: round(m(ours, (r) => r.peakRssMiB) / m(theirs, (r) => r.peakRssMiB), 3),
    requestsRatio: round(m(ours, (r) => r.requests) / m(theirs, (r) => r.requests), 3),
    seconds: { reconcile: m(ours, (r) => r.seconds), controllerRuntime: m(theirs, (r) => r.seconds) },
    cpuSeconds: { reconcile: m(ours, (r) => r.cpuSeconds), controllerRuntime: m(theirs, (r) => r.cpuSeconds) },
    peakRssMiB: { reconcile: m(ours, (r) => r.peakRssMiB), controllerRuntime: m(theirs, (r) => r.peakRssMiB) },
    kubeApiserverCpuSeconds: {
      reconcile: m(ours, (r) => r.serverCpuSeconds),
      controllerRuntime: m(theirs, (r) => r.serverCpuSeconds)
    },
    boundBy: { reconcile: boundBy(ours[0]!), controllerRuntime: boundBy(theirs[0]!) }
  }
}

const comparisonsReal = Object.fromEntries(REAL_SIZES.map((n) => [String(n), compareReal(n) ?? null]))
const realHeadline = REAL_SIZES.includes(10_000)
  ? comparisonsReal["10000"]
  : comparisonsReal[String(Math.max(...REAL_SIZES))]
const realFigures = {
  convergeRatioVsControllerRuntime: realHeadline?.convergeRatio ?? null,
  cpuRatioVsControllerRuntime: realHeadline?.cpuRatio ?? null,
  rssRatioVsControllerRuntime: realHeadline?.rssRatio ?? null,
  comparisonsReal,
  real: realSkipped !== undefined
    ? { skipped: realSkipped }
    : {
      date: new Date().toISOString(),
      server: "etcd + kube-apiserver v1.36 (Envtest, no kube-controller-manager: no ReplicaSets, Pods or garbage " +
        "collection), admin client certificate (exempt from API Priority and Fairness)",
      create: "through the API, 32 writers",
      objects: REAL_SIZES,
      rounds: REAL_ROUNDS,
      timeoutSeconds: REAL_TIMEOUT_MS / 1000,
      concurrency: CONCURRENCY,
      clientRateLimit:
        "none on either side (ours: KubeClient without rateLimit; controller-runtime: rest.Config QPS -1)",
      machineCores: os.cpus().length,
      runs: realRuns
    }
}

const largest = Math.max(...SIZES)
const headline = compare(largest)
const resultsFile = path.join(here, "results", "operator.json")
const result = onlyReal
  ? { ...(JSON.parse(fs.readFileSync(resultsFile, "utf8")) as Record<string, unknown>), ...realFigures }
  : {
    date: new Date().toISOString(),
    node: process.version,
    objects: largest,
    concurrency: CONCURRENCY,
    convergeRatio: headline?.convergeRatio ?? null,
    cpuRatio: headline?.cpuRatio ?? null,
    against: headline?.against ?? null,
    /** The ratios are upper bounds: the best other was stopped at the cap before converging. */
    ratiosAreUpperBounds: headline?.bound ?? null,
    cap: CAP,
    timeoutSeconds: TIMEOUT_MS / 1000,
    faultProbability: FAULT_PROBABILITY,
    comparisons: Object.fromEntries(
      scenarios.map(([n, f]) => [`${n}${f > 0 ? "-faults" : ""}`, compare(n, f) ?? null])
    ),
    runs,
    ...realFigures,
    totalSeconds: round((performance.now() - startedAll) / 1000, 1)
  }
if (!onlyReal) {
  console.log(
    `\n${largest} objects: convergeRatio ${headline?.convergeRatio ?? null} cpuRatio ${
      headline?.cpuRatio ?? null
    } (against ${headline?.against ?? null}${headline?.bound === true ? ", stopped at the cap: upper bounds" : ""})`
  )
}
for (const [n, c] of Object.entries(comparisonsReal)) {
  if (c === null) continue
  console.log(
    `real ${n} objects, ours ÷ controller-runtime: converge ${c.convergeRatio}, cpu ${c.cpuRatio}, rss ${c.rssRatio}` +
      `, requests ${c.requestsRatio}\n  ours bound by ${c.boundBy.reconcile}\n  controller-runtime bound by ${c.boundBy.controllerRuntime}`
  )
}
console.log(`the whole benchmark took ${round((performance.now() - startedAll) / 1000, 1)} s`)
fs.mkdirSync(path.join(here, "results"), { recursive: true })
fs.writeFileSync(resultsFile, JSON.stringify(result, null, 2) + "\n")
