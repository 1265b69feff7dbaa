/**
 * Embedded-cluster benchmark: the testkit's API server as `npm start` runs it (`TestApiServer.layerWithCluster`,
 * HTTPS on a free port, its controller manager with the scheduler and kubelet stand-in, Pods Ready 1 s after they
 * start, on the real clock) under a burst of Deployments.
 *
 * A run, in a process of its own (a fresh heap per size): a warm-up burst of 50 on a cluster of its own, then a
 * fresh cluster; N Deployments of 2 replicas are server-side applied at once into one namespace (in-process, no
 * HTTP: the work measured is the server's), and the clock runs until every one of them is Available (an in-process
 * watch of the Deployments, opened before the burst). Figures per run: seconds from the first apply until all are
 * Available (`readySeconds`; 1 s of it is the Pods' readiness delay), the process's CPU time in that window
 * (`process.cpuUsage`: the controller manager, the store and the applies) and per Deployment, peak RSS.
 *
 * The same-run ratio: `cpuGrowth100To1000`, CPU per Deployment at 1,000 ÷ at 100 (1 when the cost per Deployment
 * does not grow with the namespace; it was quadratic while the controllers scanned the namespace per sync).
 *
 * Writes bench/results/testkit.json (`burst1000ReadySeconds` among the figures). `npm run bench:testkit`. Knobs:
 * BENCH_TESTKIT_SIZES (100,300,1000), BENCH_TESTKIT_TIMEOUT (seconds per run, 300: a run that has not converged by
 * then reports how many were Available).
 */
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Deferred, Duration, Effect, Stream } from "effect"
import { fork } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"

const SIZES = (process.env.BENCH_TESTKIT_SIZES ?? "100,300,1000").split(",").map(Number)
const TIMEOUT_SECONDS = Number(process.env.BENCH_TESTKIT_TIMEOUT ?? 300)
const REPLICAS = 2
const WARMUP = 50
const NAMESPACE = "bench"

interface Run {
  readonly deployments: number
  /** Every Deployment was Available before the timeout. */
  readonly converged: boolean
  readonly available: number
  /** From the first apply until every Deployment is Available (or the timeout). */
  readonly readySeconds: number
  /** How long the applies of the burst took (the controller manager runs between them). */
  readonly applySeconds: number
  readonly cpuSeconds: number
  readonly cpuMsPerDeployment: number
  readonly peakRssMiB: number
}

const deployment = (name: string) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: NAMESPACE },
  spec: {
    replicas: REPLICAS,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "web", image: "nginx:1.27", ports: [{ containerPort: 8080 }] }] }
    }
  }
})

const isAvailable = (object: any): boolean =>
  (object.status?.conditions ?? []).some((c: any) => c?.type === "Available" && c.status === "True")

/** One burst of `count` on a fresh embedded cluster. */
const burst = (count: number) =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster.TestCluster
    yield* Effect.orDie(cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }))
    const available = new Set<string>()
    const done = yield* Deferred.make<void>()
    yield* cluster.watch({ apiVersion: "apps/v1", kind: "Deployment", namespace: NAMESPACE }).pipe(
      Stream.runForEach((event: any) => {
        if (event.type !== "ADDED" && event.type !== "MODIFIED") return Effect.void
        if (isAvailable(event.object)) available.add(event.object.metadata.name)
        return available.size === count ? Deferred.succeed(done, undefined) : Effect.void
      }),
      Effect.orDie,
      Effect.forkScoped({ startImmediately: true })
    )
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    for (let i = 0; i < count; i++) {
      yield* Effect.orDie(
        cluster.apply(deployment(`web-${String(i).padStart(5, "0")}`), { fieldManager: "bench", force: true })
      )
    }
    const applySeconds = (performance.now() - t0) / 1000
    const converged = yield* Deferred.await(done).pipe(
      Effect.timeoutOption(Duration.seconds(TIMEOUT_SECONDS)),
      Effect.map((o) => o._tag === "Some")
    )
    const readySeconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const cpuSeconds = (cpu.user + cpu.system) / 1e6
    return {
      deployments: count,
      converged,
      available: available.size,
      readySeconds: round(readySeconds, 3),
      applySeconds: round(applySeconds, 3),
      cpuSeconds: round(cpuSeconds, 3),
      cpuMsPerDeployment: round((cpuSeconds * 1000) / count, 3),
      peakRssMiB: round(process.resourceUsage().maxRSS / 1024, 1)
    } satisfies Run
  }).pipe(Effect.scoped, Effect.provide(TestApiServer.layerWithCluster({ port: 0 })))

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits

const child = async (count: number): Promise<void> => {
  await Effect.runPromise(burst(WARMUP))
  const run = await Effect.runPromise(burst(count))
  await new Promise<void>((resolve) => process.send!(run, () => resolve()))
}

const parent = async (): Promise<void> => {
  const runs: Array<Run> = []
  for (const size of SIZES) {
    const run = await new Promise<Run>((resolve, reject) => {
      const proc = fork(fileURLToPath(import.meta.url), [], {
        execArgv: ["--import", "tsx"],
        env: { ...process.env, BENCH_TESTKIT_CHILD: String(size) },
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
      let result: Run | undefined
      proc.on("message", (m: Run) => {
        result = m
      })
      proc.on(
        "exit",
        (code, signal) =>
          result !== undefined ? resolve(result) : reject(new Error(`the run of ${size} exited (${signal ?? code})`))
      )
    })
    console.log(
      `${String(size).padStart(5)} Deployments: ${run.converged ? "all" : `${run.available} of them`} Available in ${
        run.readySeconds.toFixed(2)
      } s (applied in ${run.applySeconds.toFixed(2)} s), ${run.cpuSeconds.toFixed(2)} CPU s = ${
        run.cpuMsPerDeployment.toFixed(2)
      } ms per Deployment, peak RSS ${run.peakRssMiB} MiB`
    )
    runs.push(run)
  }
  const bySize = (n: number) => runs.find((r) => r.deployments === n)
  const growth = (from: number, to: number): number | null => {
    const a = bySize(from)
    const b = bySize(to)
    return a?.converged === true && b?.converged === true ? round(b.cpuMsPerDeployment / a.cpuMsPerDeployment, 3) : null
  }
  const burst1000 = bySize(1000)
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    replicas: REPLICAS,
    podReadyDelaySeconds: 1,
    timeoutSeconds: TIMEOUT_SECONDS,
    burst1000ReadySeconds: burst1000?.converged === true ? burst1000.readySeconds : null,
    cpuMsPerDeployment: Object.fromEntries(runs.map((r) => [r.deployments, r.converged ? r.cpuMsPerDeployment : null])),
    cpuGrowth100To1000: growth(100, 1000),
    cpuGrowth100To300: growth(100, 300),
    runs
  }
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "testkit.json")
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  console.log(`burst1000ReadySeconds ${result.burst1000ReadySeconds}, cpuGrowth100To1000 ${result.cpuGrowth100To1000}`)
}

const size = process.env.BENCH_TESTKIT_CHILD
;(size === undefined ? parent() : child(Number(size))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
