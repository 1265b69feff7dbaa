/**
 * The operator under test in `npm run chaos`: the webapp example's controller (`examples/webapp/src/controller.ts`,
 * the same Layer the main job runs in its `--kubeconfig` mode) under the Manager, over a Cache, with Lease leader
 * election so that several replicas can run, and one JSON line on stdout per successful cleanup:
 *
 *     {"chaos":"cleanup","namespace":"default","name":"app-3","uid":"…","resourceVersion":"…","at":1718000000000}
 *
 * `at` is this process's wall clock when the cleanup had succeeded (before the finalizer is released): the
 * harness compares it with the moment it saw the WebApp vanish. Each reconcile is logged (object, version,
 * outcome) for reading a failed run. The main job (`npm start -- --kubeconfig`)
 * exposes neither leader election nor a cleanup hook; `npm run chaos -- --operator main` runs it instead (one
 * replica, cleanups unobserved).
 *
 * Usage: `tsx chaos/operator.ts --kubeconfig PATH --metrics-port N --identity ID [--lease NAME]`.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Manager from "@reconcile/core/Manager"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Reconcile from "@reconcile/core/Reconcile"
import { Cache, Kube, KubeClient, LeaseLeaderElection } from "@reconcile/kube"
import type { Exit } from "effect"
import { Effect, Layer, Logger, References } from "effect"
import * as Controller from "../examples/webapp/src/controller.js"

interface Args {
  readonly kubeconfig: string
  readonly metricsPort: number
  readonly identity: string
  readonly lease: string
}

const parseArgs = (argv: ReadonlyArray<string>): Args | string => {
  const values = new Map<string, string>()
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!
    const value = argv[i + 1]
    if (!["--kubeconfig", "--metrics-port", "--identity", "--lease"].includes(flag) || value === undefined) {
      return `unknown or incomplete option ${flag}`
    }
    values.set(flag, value)
  }
  const kubeconfig = values.get("--kubeconfig")
  const metricsPort = Number(values.get("--metrics-port") ?? "0")
  const identity = values.get("--identity")
  if (kubeconfig === undefined || identity === undefined) return "--kubeconfig and --identity are required"
  if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) return "invalid --metrics-port"
  return { kubeconfig, metricsPort, identity, lease: values.get("--lease") ?? "webapp-operator" }
}

/** The cleanup line the harness reads. */
const cleanupLine = (app: HasMetadata) =>
  Effect.sync(() => {
    process.stdout.write(
      JSON.stringify({
        chaos: "cleanup",
        namespace: app.metadata?.namespace,
        name: app.metadata?.name,
        uid: app.metadata?.uid,
        resourceVersion: app.metadata?.resourceVersion,
        at: Date.now()
      }) + "\n"
    )
  })

/** One log line per reconcile (in the operator's log file, for reading a failed run). */
const outcomeLine = (app: HasMetadata, exit: Exit.Exit<void, Reconcile.Outcome>) =>
  Effect.logInfo("reconcile").pipe(Effect.annotateLogs({
    app: `${app.metadata?.namespace}/${app.metadata?.name}`,
    uid: app.metadata?.uid ?? "",
    resourceVersion: app.metadata?.resourceVersion ?? "",
    generation: app.metadata?.generation ?? "",
    deleting: app.metadata?.deletionTimestamp !== undefined,
    finalizers: (app.metadata?.finalizers ?? []).join(","),
    outcome: Controller.describeExit(exit)
  }))

const operator = (args: Args) =>
  Controller.layer({ onCleanup: cleanupLine, onOutcome: outcomeLine }).pipe(
    Layer.provideMerge(Manager.layer({ metricsPort: args.metricsPort, healthPort: args.metricsPort })),
    Layer.provide(Cache.layer()),
    Layer.provide(LeaseLeaderElection.layer({ name: args.lease, namespace: "default", identity: args.identity })),
    Layer.provide(KubeClient.layer),
    Layer.provide(Kube.layerFromFile(args.kubeconfig))
  )

const args = parseArgs(process.argv.slice(2))
if (typeof args === "string") {
  console.error(args)
  process.exitCode = 2
} else {
  const main = Manager.launch(operator(args)).pipe(
    Effect.provide(Logger.layer([Logger.consoleLogFmt])),
    Effect.provideService(References.MinimumLogLevel, "Info")
  )
  NodeRuntime.runMain(main, { teardown: Manager.teardown })
}
