/**
 * The main job (`npm start`): the WebApp operator.
 *
 * - No cluster configured: starts the embedded TestApiServer (HTTPS on
 *   127.0.0.1) with the Deployment status simulator, installs the WebApp CRD,
 *   runs the operator under the Manager (metrics and health on loopback),
 *   applies a sample WebApp and shows each reconcile until Ctrl-C.
 * - `--kubeconfig PATH` or `KUBECONFIG`: the same operator against that
 *   cluster (`--install-crd` installs the CRD first).
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Manager from "@reconcile/core/Manager"
import { Cache, Kube, KubeClient, Resource, type Undecodable } from "@reconcile/kube"
import { Simulators, TestApiServer } from "@reconcile/testkit"
import { WorkqueueMetrics } from "@reconcile/workqueue"
import type { Exit } from "effect"
import { Console, Data, Effect, Layer, Logger, Metric, Option, References } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Controller from "./controller.js"
import { fieldManager } from "./reconcile.js"
import { WebApp } from "./WebApp.js"

const usage = `Usage: npm start -- [options]

Runs the WebApp operator (examples/webapp).

Without a cluster it starts an embedded Kubernetes API server (in memory, HTTPS on
127.0.0.1), installs the WebApp CRD, applies a sample WebApp and shows every reconcile.

Options:
  --kubeconfig PATH   run against the cluster of this kubeconfig (KUBECONFIG works too)
  --install-crd       install (or update) the WebApp CRD in that cluster first
  --namespace NS      where the embedded sample goes (default "default")
  --metrics-port N    port of /metrics, /healthz and /readyz on 127.0.0.1 (default: a free port)
  --help              this text
`

class StartError extends Data.TaggedError("StartError")<{ readonly message: string }> {}

interface Args {
  readonly help: boolean
  readonly kubeconfig: string | undefined
  readonly installCrd: boolean
  readonly namespace: string
  readonly metricsPort: number
}

const parseArgs = (argv: ReadonlyArray<string>): Effect.Effect<Args, StartError> =>
  Effect.suspend(() => {
    let help = false
    let kubeconfig = process.env.KUBECONFIG !== undefined && process.env.KUBECONFIG !== ""
      ? process.env.KUBECONFIG
      : undefined
    let installCrd = false
    let namespace = "default"
    let metricsPort = 0
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i]!
      const value = () => {
        const v = argv[++i]
        if (v === undefined) throw new StartError({ message: `${arg} needs a value` })
        return v
      }
      try {
        if (arg === "--help" || arg === "-h") help = true
        else if (arg === "--kubeconfig") kubeconfig = value()
        else if (arg.startsWith("--kubeconfig=")) kubeconfig = arg.slice("--kubeconfig=".length)
        else if (arg === "--install-crd") installCrd = true
        else if (arg === "--namespace") namespace = value()
        else if (arg === "--metrics-port") metricsPort = Number(value())
        else return Effect.fail(new StartError({ message: `unknown option ${arg}\n\n${usage}` }))
      } catch (e) {
        return Effect.fail(e as StartError)
      }
    }
    if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) {
      return Effect.fail(new StartError({ message: `--metrics-port must be a port number` }))
    }
    return Effect.succeed({ help, kubeconfig, installCrd, namespace, metricsPort })
  })

/** Prints each reconcile with its outcome and the queue depth, and when an app becomes Ready. */
const depth = Metric.value(WorkqueueMetrics.forQueue(fieldManager).depth)
const readyShown = new Set<string>()
const onOutcome = (app: WebApp | Undecodable.Undecodable, exit: Exit.Exit<void, unknown>) =>
  Effect.gen(function*() {
    const key = `${app.metadata.namespace}/${app.metadata.name}`
    const queueDepth = (yield* depth).value
    const deleting = app.metadata.deletionTimestamp !== undefined ? " (deleting)" : ""
    yield* Console.log(
      `  ${new Date().toISOString().slice(11, 23)} reconcile ${key} gen=${app.metadata.generation}${deleting} → ${
        Controller.describeExit(exit as never)
      }  [queue depth ${queueDepth}]`
    )
  })

/** Installs (or updates) the CRD. */
const installCrd = Effect.gen(function*() {
  const crd = Resource.crdManifest(WebApp)
  yield* KubeClient.patch(Resource.CustomResourceDefinition, crd.metadata!.name!, crd, {
    type: "apply",
    fieldManager,
    force: true
  })
})

/** Fails with a readable error when the cluster is unreachable or the CRD is missing. */
const preflight = (args: Args) =>
  Effect.gen(function*() {
    yield* KubeClient.list(Resource.Namespace, { limit: 1 }).pipe(
      Effect.mapError((e) => new StartError({ message: `cannot reach the cluster: ${e.message}` }))
    )
    if (args.installCrd) {
      yield* installCrd.pipe(
        Effect.mapError((e) => new StartError({ message: `cannot install the CRD: ${e.message}` }))
      )
      return
    }
    yield* KubeClient.list(WebApp, { limit: 1 }).pipe(
      Effect.catchTag("NotFound", () =>
        Effect.fail(
          new StartError({
            message: "the WebApp CRD is not installed in this cluster: run with --install-crd, or " +
              "kubectl apply -f examples/webapp/config/crd.yaml"
          })
        )),
      Effect.mapError((e) => e._tag === "StartError" ? e : new StartError({ message: e.message }))
    )
  })

const sample = (namespace: string) => ({
  apiVersion: WebApp.apiVersion,
  kind: WebApp.kind,
  metadata: { name: "sample", namespace },
  spec: { image: "nginx:1.27", replicas: 2, port: 8080 }
})

/** Waits until the sample reports Ready, then prints it once. */
const watchSample = (namespace: string) =>
  Effect.gen(function*() {
    for (;;) {
      const app = yield* KubeClient.get(WebApp, "sample", { namespace }).pipe(Effect.option)
      const ready = Option.isSome(app) &&
        app.value.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
      if (ready && !readyShown.has("sample")) {
        readyShown.add("sample")
        yield* Console.log(
          `\n✓ ${namespace}/sample is Ready (${app.value.status?.readyReplicas}/${app.value.spec.replicas} replicas)\n`
        )
        return
      }
      yield* Effect.sleep("200 millis")
    }
  })

/** How to try the embedded mode by hand. */
const tryIt = (kubeconfig: string, metricsPort: number) =>
  Console.log(
    [
      `Try it (the server runs until Ctrl-C):`,
      `  export KUBECONFIG=${kubeconfig}`,
      `  kubectl get webapps,deployments,services -A`,
      `  kubectl patch webapp sample --type merge -p '{"spec":{"replicas":3}}'`,
      `  kubectl delete webapp sample`,
      `Metrics: http://127.0.0.1:${metricsPort}/metrics   Health: http://127.0.0.1:${metricsPort}/readyz`,
      ``
    ].join("\n")
  )

/**
 * The KubeClient of a kubeconfig file. It is always part of the Layer that
 * `Manager.launch` builds, below the operator (never `Effect.provide`d around
 * it): layers are released in reverse order, so on SIGTERM the controllers
 * drain first — their in-flight status writes still have a client — and the
 * client's connections close after them (`test/shutdown.test.ts`).
 */
const kubeClient = (kubeconfig: string) => KubeClient.layer.pipe(Layer.provide(Kube.layerFromFile(kubeconfig)))

/** The operator: the WebApp controller under the Manager (metrics and health on loopback), over a Cache. */
const operator = (metricsPort: number) =>
  Controller.layer({ onOutcome }).pipe(
    Layer.provideMerge(Manager.layer({ metricsPort, healthPort: metricsPort })),
    Layer.provide(Cache.layer())
  )

/** Where the embedded server's kubeconfig goes: a fresh temporary directory. */
const kubeconfigPath = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reconcile-webapp-")), "kubeconfig")

/**
 * Embedded mode: the TestApiServer (with the Deployment simulator) and the CRD
 * first, then the operator; once it runs, the sample is applied and followed
 * (in the background) until Ready.
 */
const embedded = (args: Args) => {
  const server = Simulators.layerDeploymentStatus({ delay: "1 second" }).pipe(
    Layer.provideMerge(TestApiServer.layerWithCluster({ port: 0, kubeconfigPath: kubeconfigPath() }))
  )
  const client = Layer.unwrap(Effect.map(TestApiServer.TestApiServer, (server) => kubeClient(server.kubeconfigPath)))
  const crdInstalled = Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* TestApiServer.TestApiServer
    yield* Console.log(`Embedded Kubernetes API server on ${server.url} (in memory)`)
    yield* installCrd
    yield* Console.log(`Installed CustomResourceDefinition ${WebApp.plural}.${WebApp.group}`)
  }))
  const demo = Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* TestApiServer.TestApiServer
    const manager = yield* Manager.Manager
    yield* KubeClient.patch(WebApp, "sample", sample(args.namespace), {
      type: "apply",
      namespace: args.namespace,
      fieldManager: "reconcile-demo"
    })
    yield* Console.log(`Applied WebApp ${args.namespace}/sample (nginx:1.27, 2 replicas, port 8080)\n`)
    yield* Effect.forkScoped(
      Effect.andThen(watchSample(args.namespace), tryIt(server.kubeconfigPath, manager.metricsAddress!.port))
    )
  }))
  return demo.pipe(
    Layer.provideMerge(operator(args.metricsPort)),
    Layer.provide(crdInstalled),
    Layer.provide(client),
    Layer.provide(server)
  )
}

/** Cluster mode: the preflight checks (and the CRD, with `--install-crd`), then the operator. */
const cluster = (args: Args, kubeconfig: string) => {
  const checked = Layer.effectDiscard(Effect.andThen(
    preflight(args),
    Console.log(`Running the WebApp operator against the cluster of ${kubeconfig}`)
  ))
  const started = Layer.effectDiscard(Effect.flatMap(
    Manager.Manager,
    (manager) => Console.log(`Metrics: http://127.0.0.1:${manager.metricsAddress!.port}/metrics\n`)
  ))
  return started.pipe(
    Layer.provideMerge(operator(args.metricsPort)),
    Layer.provide(checked),
    Layer.provide(kubeClient(kubeconfig))
  )
}

const main = Effect.gen(function*() {
  const args = yield* parseArgs(process.argv.slice(2))
  if (args.help) return yield* Console.log(usage)
  if (args.kubeconfig === undefined) return yield* Manager.launch(embedded(args))
  return yield* Manager.launch(cluster(args, args.kubeconfig))
}).pipe(
  Effect.catch((error) =>
    Effect.andThen(
      Console.error(`error: ${"message" in error ? error.message : String(error)}`),
      Effect.sync(() => {
        process.exitCode = 1
      })
    )
  ),
  Effect.provide(Logger.layer([Logger.consolePretty()])),
  Effect.provideService(References.MinimumLogLevel, "Info")
)

NodeRuntime.runMain(main, { teardown: Manager.teardown })
