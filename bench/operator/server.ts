/**
 * The API server of the end-to-end benchmark, in its own process: the testkit's `TestApiServer` (HTTPS, bearer
 * token; no controller manager, so Deployments stay as the operator writes them) over an in-memory `TestCluster`.
 *
 * Driven by IPC from `bench/operator.ts` (as is its real twin, realServer.ts, with the same messages): it installs
 * the WebApp CRD and the namespace, creates WebApps in-process (no HTTP: the requests it counts are the
 * operator's), turns 5 % request failures on and off (testkit `Faults`), and reports when every WebApp has
 * converged: `status.observedGeneration` equals its generation and its Deployment and Service exist, controlled by
 * it. Convergence is tracked from in-process watches opened before any fault rule (faults apply to requests, not to
 * open watches), so it costs the operator nothing.
 */
import * as Resource from "@reconcile/kube/Resource"
import * as Faults from "@reconcile/testkit/Faults"
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Effect, Fiber, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { makeTracker } from "./convergence.js"
import { GROUP, KIND, NAMESPACE, WebApp, webApp } from "./shared.js"

/** Driver → server. */
export type ToServer =
  | { readonly op: "create"; readonly prefix: string; readonly count: number }
  | { readonly op: "faults"; readonly probability: number }
  | { readonly op: "requests" }

/** Server → driver. */
export type FromServer =
  | {
    readonly op: "ready"
    readonly kubeconfigPath: string
    readonly url: string
    /** The real server's version (realServer.ts). */
    readonly version?: string
  }
  | { readonly op: "created"; readonly prefix: string; readonly millis: number }
  | { readonly op: "converged"; readonly prefix: string; readonly millis: number }
  | {
    readonly op: "requests"
    readonly requests: number
    readonly failed: number
    readonly cpuSeconds: number
    /** The real server's etcd CPU seconds (realServer.ts). */
    readonly etcdCpuSeconds?: number
    /** How many objects of the `app` batch have converged so far. */
    readonly converged: number
  }

const send = (message: FromServer) => process.send!(message)
const cpuSeconds = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

let requests = 0
let failed = 0
const requestLog = process.env.BENCH_OPERATOR_REQUEST_LOG
const log = (line: string) => {
  // `${method} ${url} ${status} ${ms}ms`, written when the response finished
  if (requestLog !== undefined) fs.appendFileSync(requestLog, `${(performance.now() / 1000).toFixed(3)} ${line}\n`)
  requests++
  const status = line.split(" ")[2]
  if (status !== undefined && status.startsWith("5")) failed++
}

const program = Effect.gen(function*() {
  const server = yield* TestApiServer.TestApiServer
  const cluster = yield* TestCluster.TestCluster
  const faults = yield* Faults.Faults
  const ok = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)
  yield* ok(cluster.create(Resource.crdManifest(WebApp) as any))
  yield* ok(cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }))

  // convergence, from in-process watches of the three kinds
  const tracker = makeTracker(send)
  /** The figures so far: requests (failed ones too), the server's CPU seconds, the objects converged. */
  const sendRequests = () =>
    send({ op: "requests", requests, failed, cpuSeconds: cpuSeconds(), converged: tracker.converged("app") })
  const follow = (apiVersion: string, kind: string, onObject: (object: any, deleted: boolean) => void) =>
    cluster.watch({ apiVersion, kind, namespace: NAMESPACE } as any).pipe(
      Stream.runForEach((event: any) =>
        Effect.sync(() => {
          if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED") {
            onObject(event.object, event.type === "DELETED")
          }
        })
      ),
      Effect.forkScoped
    )
  const fibers = [
    yield* follow(`${GROUP}/v1`, KIND, tracker.webApp),
    yield* follow("apps/v1", "Deployment", tracker.deployment),
    yield* follow("v1", "Service", tracker.service)
  ]

  const run = Effect.runForkWith(yield* Effect.context<never>())
  let faultRule: Faults.RuleId | undefined
  process.on("message", (message: ToServer) => {
    switch (message.op) {
      case "create":
        run(Effect.gen(function*() {
          const started = performance.now()
          tracker.expect(message.prefix, message.count, started)
          for (let i = 0; i < message.count; i++) {
            yield* ok(cluster.create(webApp(`${message.prefix}-${String(i).padStart(5, "0")}`)))
          }
          send({ op: "created", prefix: message.prefix, millis: performance.now() - started })
        }))
        break
      case "faults":
        run(Effect.gen(function*() {
          if (faultRule !== undefined) yield* faults.removeRule(faultRule)
          faultRule = undefined
          if (message.probability > 0) {
            // every request of the operator may fail (the in-process creates are not requests of these verbs)
            faultRule = yield* faults.failRequests({
              verbs: ["get", "list", "watch", "patch", "update"],
              probability: message.probability,
              code: 500,
              message: "injected by the benchmark"
            })
          }
          sendRequests()
        }))
        break
      case "requests":
        sendRequests()
        break
    }
  })
  send({ op: "ready", kubeconfigPath: server.kubeconfigPath, url: server.url })
  // the kubeconfig (a token) and the state directory (the CA key) go with the server
  const exit = () => {
    fs.rmSync(dir, { recursive: true, force: true })
    process.exit(0)
  }
  process.on("disconnect", exit)
  process.on("SIGTERM", exit)
  yield* Fiber.joinAll(fibers)
})

const dir = path.join(os.tmpdir(), `reconcile-bench-operator-${process.pid}`)
const ServerLive = TestApiServer.layer({
  kubeconfigPath: path.join(dir, "kubeconfig"),
  stateDir: path.join(dir, "state"),
  log,
  controllers: false
}).pipe(Layer.provideMerge(Faults.layer), Layer.provideMerge(TestCluster.layer))

Effect.runPromise(Effect.scoped(Effect.provide(program, ServerLive))).catch((e) => {
  console.error(e)
  process.exit(1)
})
