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
 * Writes bench/results/operator.json. `npm run bench:operator`. Sizes: BENCH_OPERATOR_SIZES (1000,10000),
 * BENCH_OPERATOR_FAULT_SIZE (500), BENCH_OPERATOR_TIMEOUT (seconds per run, 180), BENCH_OPERATOR_CAP (4; 0 runs
 * every implementation until it converges), BENCH_OPERATOR_ONLY
 * (a comma-separated subset of reconcile,client-node,fluent), BENCH_OPERATOR_PROFILE (a directory: each operator
 * writes a `--cpu-prof` profile there), BENCH_OPERATOR_REQUEST_LOG (a file: the server appends every request).
 */
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { FromServer, ToServer } from "./operator/server.js"
import type { FromOperator, ToOperator } from "./operator/shared.js"

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
  fluent: "operator/fluent.ts"
} as const
type Implementation = keyof typeof implementations
const selected = (process.env.BENCH_OPERATOR_ONLY?.split(",") ?? Object.keys(implementations)) as Array<
  Implementation
>

interface Run {
  readonly implementation: Implementation
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
  readonly startupSeconds: number
  readonly error?: string
}

/** A child with IPC: `next(predicate)` waits for the first matching message. */
const child = <In, Out extends { readonly op: string }>(file: string, env: Record<string, string>) => {
  const process_ = fork(path.join(here, file), [], {
    execArgv: [
      "--import",
      "tsx",
      ...(process.env.BENCH_OPERATOR_PROFILE !== undefined && file !== "operator/server.ts"
        ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_OPERATOR_PROFILE}`]
        : [])
    ],
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe", "ipc"]
  })
  let stderr = ""
  process_.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const waiters: Array<{ test: (m: Out) => boolean; resolve: (m: Out) => void }> = []
  const backlog: Array<Out> = []
  process_.on("message", (m: Out) => {
    const i = waiters.findIndex((w) => w.test(m))
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m)
    else backlog.push(m)
  })
  let exited: string | undefined
  process_.on("exit", (code, signal) => {
    exited = `exited (${signal ?? code})`
  })
  return {
    process: process_ as ChildProcess,
    send: (m: In) => process_.send(m as any),
    next: <O extends Out["op"]>(op: O, timeoutMs: number, test: (m: Extract<Out, { op: O }>) => boolean = () => true) =>
      new Promise<Extract<Out, { op: O }>>((resolve, reject) => {
        const match = (m: Out) => m.op === op && test(m as any)
        const i = backlog.findIndex(match)
        if (i >= 0) return resolve(backlog.splice(i, 1)[0] as any)
        const timer = setTimeout(() => {
          const w = waiters.findIndex((x) => x.resolve === done)
          if (w >= 0) waiters.splice(w, 1)
          reject(new Error(`${file}: no ${op} within ${timeoutMs} ms${exited ? `; ${exited}` : ""}\n${stderr}`))
        }, timeoutMs)
        const done = (m: Out) => {
          clearTimeout(timer)
          resolve(m as any)
        }
        waiters.push({ test: match, resolve: done })
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (process_.exitCode !== null || process_.signalCode !== null) return resolve()
        const kill = setTimeout(() => process_.kill("SIGKILL"), 3_000)
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

const runOne = async (
  implementation: Implementation,
  objects: number,
  faults: number,
  capMs: number | undefined
): Promise<Run> => {
  const server = child<ToServer, FromServer>("operator/server.ts", {})
  let operator: ReturnType<typeof child<ToOperator, FromOperator>> | undefined
  try {
    const ready = await server.next("ready", 60_000)
    const started = performance.now()
    operator = child<ToOperator, FromOperator>(implementations[implementation], {
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
    server.send({ op: "create", prefix: "app", count: objects })
    let converged = true
    const limitMs = capMs === undefined ? TIMEOUT_MS : Math.min(capMs, TIMEOUT_MS)
    let seconds = limitMs / 1000
    let error: string | undefined
    try {
      const done = await server.next("converged", limitMs, (m) => m.prefix === "app")
      seconds = done.millis / 1000
    } catch {
      converged = false
      if (limitMs === TIMEOUT_MS) error = `not converged within the timeout (${TIMEOUT_MS / 1000} s)`
    }
    operator.send({ op: "report" })
    const report = await operator.next("report", 10_000)
    server.send({ op: "requests" })
    const after = await server.next("requests", 10_000)
    const requests = after.requests - before.requests
    return {
      implementation,
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
      startupSeconds: round(startupSeconds, 2),
      ...(error === undefined ? {} : { error })
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    console.error(`${implementation} ${objects}: ${message}`)
    return {
      implementation,
      objects,
      faults,
      converged: false,
      capped: false,
      seconds: TIMEOUT_MS / 1000,
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
    r.converged ? "" : `  (${r.convergedObjects}/${r.objects} converged)`
  }${r.error === undefined ? "" : `  ${r.error}`}`

const runs: Array<Run> = []
const scenarios: Array<[number, number]> = [
  ...SIZES.map((n): [number, number] => [n, 0]),
  ...(FAULT_SIZE > 0 ? [[FAULT_SIZE, FAULT_PROBABILITY] as [number, number]] : [])
]
const startedAll = performance.now()
for (const [objects, faults] of scenarios) {
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

const largest = Math.max(...SIZES)
const headline = compare(largest)
const result = {
  date: new Date().toISOString(),
  node: process.version,
  objects: largest,
  concurrency: 8,
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
  totalSeconds: round((performance.now() - startedAll) / 1000, 1)
}
console.log(
  `\n${largest} objects: convergeRatio ${result.convergeRatio} cpuRatio ${result.cpuRatio} (against ${result.against}${
    result.ratiosAreUpperBounds === true ? ", stopped at the cap: upper bounds" : ""
  });` +
    ` the whole benchmark took ${result.totalSeconds} s`
)
fs.mkdirSync(path.join(here, "results"), { recursive: true })
fs.writeFileSync(path.join(here, "results", "operator.json"), JSON.stringify(result, null, 2) + "\n")
