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
 * With `--sharding RING` the replica joins the ring `RING` (`Sharding.layer`, Leases in `default`, its identity
 * `--identity`, a DNS-1123 label; the default 15 s / 10 s / 2 s timings) instead of electing a leader, and the
 * reconciles' debug lines (`Reconcile started` and each reconcile's last line, `Released to the ring`) are logged
 * too, so the harness can pair them and look for two replicas reconciling one object at once (chaos/Overlap.ts). The
 * level is Debug (the runtime writes those lines only then) but a filter passes, below Info, only the debug lines
 * whose message starts with `Reconcile ` or is `Released to the ring`: every reconcile's bracket without the
 * watches', informers' and finalizers' own debug chatter, which would multiply the log by several times under
 * thousands of objects and cost the replicas CPU on a two-core machine.
 *
 * Lines are logfmt (`Logging.logger`: `time=… level=… msg=… key=value`, milliseconds in `time`).
 *
 * Usage: `tsx chaos/operator.ts --kubeconfig PATH --metrics-port N --identity ID [--lease NAME] [--sharding RING]`.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Logging from "@reconcile/core/Logging"
import * as Manager from "@reconcile/core/Manager"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Reconcile from "@reconcile/core/Reconcile"
import { Cache, Kube, KubeClient, LeaseLeaderElection, Sharding } from "@reconcile/kube"
import type { Exit } from "effect"
import { Effect, Layer, Logger, LogLevel, References } from "effect"
import * as Controller from "../examples/webapp/src/controller.js"

interface Args {
  readonly kubeconfig: string
  readonly metricsPort: number
  readonly identity: string
  readonly lease: string
  /** The ring to join instead of electing a leader. */
  readonly sharding: string | undefined
}

const parseArgs = (argv: ReadonlyArray<string>): Args | string => {
  const values = new Map<string, string>()
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!
    const value = argv[i + 1]
    if (
      !["--kubeconfig", "--metrics-port", "--identity", "--lease", "--sharding"].includes(flag) || value === undefined
    ) {
      return `unknown or incomplete option ${flag}`
    }
    values.set(flag, value)
  }
  const kubeconfig = values.get("--kubeconfig")
  const metricsPort = Number(values.get("--metrics-port") ?? "0")
  const identity = values.get("--identity")
  if (kubeconfig === undefined || identity === undefined) return "--kubeconfig and --identity are required"
  if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) return "invalid --metrics-port"
  return {
    kubeconfig,
    metricsPort,
    identity,
    lease: values.get("--lease") ?? "webapp-operator",
    sharding: values.get("--sharding")
  }
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

const operator = (args: Args) => {
  const options = { onCleanup: cleanupLine, onOutcome: outcomeLine }
  const election = args.sharding === undefined
    ? LeaseLeaderElection.layer({ name: args.lease, namespace: "default", identity: args.identity })
    : Sharding.layer({
      ring: args.sharding,
      namespace: "default",
      identity: args.identity,
      controllers: [Controller.make(options)]
    })
  return Controller.layer(options).pipe(
    Layer.provideMerge(Manager.layer({ metricsPort: args.metricsPort, healthPort: args.metricsPort })),
    Layer.provide(Cache.layer()),
    Layer.provide(election),
    Layer.provide(KubeClient.layer),
    Layer.provide(Kube.layerFromFile(args.kubeconfig))
  )
}

/** The debug lines kept under sharding: every reconcile's first and last line, and a drained object's release. */
const bracket = (message: unknown): boolean => {
  const text = Array.isArray(message) ? message[0] : message
  return typeof text === "string" && (text.startsWith("Reconcile ") || text === "Released to the ring")
}

/** Info and above, and under sharding the reconciles' brackets at debug. */
const logger = (sharding: boolean) => {
  const line = Logging.logger("logfmt")
  return sharding
    ? Logger.make((options) => {
      if (LogLevel.isGreaterThanOrEqualTo(options.logLevel, "Info") || bracket(options.message)) line.log(options)
    })
    : line
}

const args = parseArgs(process.argv.slice(2))
if (typeof args === "string") {
  console.error(args)
  process.exitCode = 2
} else {
  const sharding = args.sharding !== undefined
  const main = Manager.launch(operator(args)).pipe(
    Effect.provide(Logger.layer([logger(sharding)])),
    Effect.provideService(References.MinimumLogLevel, sharding ? "Debug" : "Info")
  )
  NodeRuntime.runMain(main, { teardown: Manager.teardown })
}
