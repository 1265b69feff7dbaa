import { NodeRuntime } from "@effect/platform-node"
import {
  Inspector,
  InspectorServer,
  LeaderElection,
  Logging,
  Manager,
  ProfilingServer,
  Telemetry
} from "@reconcile/core"
import { Cache, Kube, KubeClient, LeaseLeaderElection, Operator, Resource, Sharding } from "@reconcile/kube"
import type { KubeObject as KubeObjects } from "@reconcile/testkit"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as Main from "../Main.js"
import { parse } from "./args.js"
import { crds } from "./crds.js"
import { clientFromFile, LocalCluster } from "./localCluster.js"
import { AsRecords, narrate } from "./narration.js"
import * as Webhooks from "./webhooks.js"

type KubeObject = KubeObjects.KubeObject

const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/**
 * The message of a failure, through the wrappers that only name where it happened (Manager, source).
 *
 * @internal
 */
export const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const e = error as { readonly _tag?: unknown; readonly cause?: unknown; readonly message?: unknown }
    const cause = e.cause as { readonly _tag?: unknown } | undefined
    if (
      (e._tag === "ManagerError" || e._tag === "SourceFailed") && typeof cause === "object" && cause !== null
    ) {
      return describe(cause)
    }
    if (typeof e.message === "string" && e.message !== "") return e.message
  }
  return String(error)
}

/**
 * A private temporary directory (0700) for the embedded cluster's kubeconfig, removed when the scope closes —
 * and, should the process end without closing it, by an `exit` handler.
 */
const privateDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`))
      fs.chmodSync(dir, 0o700)
      const remove = () => fs.rmSync(dir, { recursive: true, force: true })
      process.on("exit", remove)
      return { dir, remove }
    }),
    ({ remove }) =>
      Effect.sync(() => {
        process.removeListener("exit", remove)
        remove()
      })
  )

/** The Pod's namespace: `$POD_NAMESPACE`, else its service account's; undefined when not in a Pod. */
const podNamespace = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (env.POD_NAMESPACE !== undefined && env.POD_NAMESPACE.trim() !== "") return env.POD_NAMESPACE.trim()
  try {
    const ns = fs.readFileSync(serviceAccountNamespace, "utf-8").trim()
    if (ns !== "") return ns
  } catch {
    // not in a Pod
  }
  return undefined
}

/** Where the leader-election Lease (or, with `--sharding`, the ring's Leases) lives. */
const electionNamespace = (args: Main.Args, env: Readonly<Record<string, string | undefined>>): string =>
  args.leaderElectionNamespace ?? podNamespace(env) ?? args.namespace ?? "default"

/**
 * The namespace of the webhook Service (and of the CertificateManager's Secret): the Pod's, else the one the
 * manifests put the operator in by default (`<name>-system`); on a local cluster it names nothing.
 */
const webhookNamespace = <E, R>(
  operator: Operator.Operator<E, R>,
  env: Readonly<Record<string, string | undefined>>
): string => podNamespace(env) ?? `${operator.name}-system`

/**
 * The replica's election, for the Manager and its controllers: a Lease with `--leader-elect`; with `--sharding` this
 * replica's shard of the ring named after the operator (its shard Lease, the sharder while it holds the ring's Lease,
 * and the `Sharding` service that restricts the Cache and gates the controllers); else always the leader.
 */
const election = <E, R>(
  operator: Operator.Operator<E, R>,
  args: Main.Args,
  env: Readonly<Record<string, string | undefined>>
): Layer.Layer<LeaderElection.LeaderElection, unknown, KubeClient.KubeClient> =>
  args.sharding
    ? Sharding.layer({
      ring: operator.name,
      namespace: electionNamespace(args, env),
      controllers: operator.controllers,
      objectNamespace: args.namespace
    })
    : args.leaderElect
    ? LeaseLeaderElection.layer({ name: operator.name, namespace: electionNamespace(args, env) })
    : LeaderElection.layerAlwaysLeader

/**
 * The operator's controllers under the Manager (metrics and health endpoints), over the Cache (restricted to
 * `--namespace` when given, and to the shard's objects with `--sharding`), with the replica's {@link election}. Its
 * webhook server, if it has webhooks, starts before the controllers and beside the election, on every replica, and
 * stops after them.
 */
const running = <E, R>(
  operator: Operator.Operator<E, R>,
  args: Main.Args,
  env: Readonly<Record<string, string | undefined>>
) => {
  const host = args.mode._tag === "InCluster" ? "0.0.0.0" : "127.0.0.1"
  return (operator.layer as Layer.Layer<never, unknown, any>).pipe(
    Layer.provideMerge(Webhooks.layer(operator, args, webhookNamespace(operator, env))),
    Layer.provideMerge(Manager.layer({ metricsPort: args.metricsPort, healthPort: args.healthPort, host })),
    // --namespace: every informer of a namespaced kind watches only that namespace
    Layer.provide(Cache.layer({ namespace: args.namespace })),
    // below the Cache and the controllers: with --sharding, both read this replica's shard from their context
    Layer.provide(election(operator, args, env))
  ) as unknown as Layer.Layer<Manager.Manager, unknown, KubeClient.KubeClient | Kube.Kube>
}

/** Whether an object has a `Ready` condition with status `True`. */
const readyCondition = (object: any): boolean =>
  Array.isArray(object?.status?.conditions) &&
  object.status.conditions.some((c: any) => c?.type === "Ready" && c?.status === "True")

/** `namespace/name`, or `name` for a cluster-scoped object. */
const key = (object: KubeObject) =>
  object.metadata.namespace === undefined
    ? `${object.metadata.name}`
    : `${object.metadata.namespace}/${object.metadata.name}`

/**
 * Embedded mode: the API server (with its controller manager) and its kubeconfig in a private directory, the CRDs
 * and the namespace, then the operator; once it runs, the samples are applied and followed until Ready, and the
 * "Try it" text is printed.
 */
/** Where an endpoint of the Manager answers (`http://127.0.0.1:8080/metrics`; IPv6 hosts in brackets). */
const url = (address: { readonly host: string; readonly port: number }, endpoint: string): string =>
  `http://${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}${endpoint}`

/** A sample's status conditions: type, status and reason of each. */
const conditionsOf = (object: KubeObject) => {
  const status = (object as { readonly status?: { readonly conditions?: unknown } }).status
  const conditions = Array.isArray(status?.conditions)
    ? status.conditions as ReadonlyArray<Record<string, unknown>>
    : []
  return conditions.map((c) => ({
    type: String(c.type),
    status: String(c.status),
    ...(typeof c.reason === "string" ? { reason: c.reason } : {})
  }))
}

/** Status conditions on one line: `Ready=True (ConfigMapApplied)`, … ("" when there are none). */
const describeConditions = (conditions: ReturnType<typeof conditionsOf>): string =>
  conditions.map((c) => `${c.type}=${c.status}${c.reason !== undefined ? ` (${c.reason})` : ""}`).join(", ")

const embedded = <E, R>(
  operator: Operator.Operator<E, R>,
  args: Main.Args,
  options: Main.Options,
  env: Readonly<Record<string, string | undefined>>,
  profiles: ProfilingServer.Address | undefined,
  inspector: InspectorServer.Address | undefined
) =>
  Effect.scoped(Effect.gen(function*() {
    const { dir } = yield* privateDir(operator.name)
    const kubeconfigPath = path.join(dir, "kubeconfig")
    const namespace = args.namespace ?? "default"
    // without conversion webhook stanzas: the webhook server adds them once it listens (webhooks.ts)
    const definitions = yield* crds(operator, { conversion: false })

    // the testkit (the in-memory server, Envtest) is loaded here only: a main job on a named cluster never loads it
    const Local = yield* Effect.promise(() => import("./localClusterLive.js"))
    const server: Layer.Layer<LocalCluster, unknown> = args.mode._tag === "Real"
      ? Local.realCluster(kubeconfigPath)
      : Local.embeddedCluster(kubeconfigPath)
    const client = Layer.unwrap(Effect.map(LocalCluster, (s) => clientFromFile(s.kubeconfigPath)))
    const prepared = Layer.effectDiscard(Effect.gen(function*() {
      const server = yield* LocalCluster
      for (const crd of definitions) {
        yield* server.apply(crd as KubeObject, operator.name, true)
        const name = (crd as KubeObject).metadata.name
        yield* narrate(`Installed CustomResourceDefinition ${name}`, {
          message: "installed",
          fields: { kind: "CustomResourceDefinition", name }
        })
      }
      if (namespace !== "default") {
        yield* server.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, operator.name)
        yield* narrate(`Created namespace ${namespace}`, {
          message: "created",
          fields: { kind: "Namespace", name: namespace }
        })
      }
    }))

    const isReady = options.isReady ?? readyCondition
    const served = new Set(operator.resources.map((r) => `${r.apiVersion}|${r.kind}`))
    const demo = Layer.effectDiscard(Effect.gen(function*() {
      const server = yield* LocalCluster
      const manager = yield* Manager.Manager
      const samples = (options.samples?.(namespace) ?? []) as ReadonlyArray<KubeObject>
      for (const sample of samples) {
        yield* server.apply(sample, `${operator.name}-samples`)
        yield* narrate(`Applied ${sample.kind} ${key(sample)}`, {
          message: "applied",
          fields: { kind: sample.kind, object: key(sample) }
        })
      }
      const followed = samples.filter((s) => served.has(`${s.apiVersion}|${s.kind}`))
      // Follows a sample until it is Ready, printing each new state of its status conditions: what the reconciles did.
      const ready = (sample: KubeObject) =>
        Effect.gen(function*() {
          let shown = ""
          for (;;) {
            const current = yield* Effect.orElseSucceed(server.get(sample), () => Option.none())
            const conditions = current._tag === "Some" ? conditionsOf(current.value) : []
            const line = describeConditions(conditions)
            if (line !== "" && line !== shown) {
              shown = line
              yield* narrate(`  ${key(sample)} status: ${line}`, {
                message: "status",
                fields: { kind: sample.kind, object: key(sample), conditions }
              })
            }
            if (current._tag === "Some" && isReady(current.value)) {
              return yield* narrate(`\n✓ ${key(sample)} is Ready\n`, {
                message: "ready",
                fields: { kind: sample.kind, object: key(sample) }
              })
            }
            yield* Effect.sleep("200 millis")
          }
        })
      const prefix = `KUBECONFIG=${server.kubeconfigPath}`
      const plurals = operator.resources.map((r) => r.plural)
      const commands = options.tryIt?.(namespace) ??
        (plurals.length > 0 ? [`kubectl get ${[...new Set(plurals)].join(",")} -n ${namespace}`] : [])
      const urls: {
        readonly metrics?: string
        readonly health?: string
        readonly profiles?: string
        readonly inspector?: string
      } = {
        ...(manager.metricsAddress === undefined
          ? {}
          : { metrics: `http://127.0.0.1:${manager.metricsAddress.port}/metrics` }),
        ...(manager.healthAddress === undefined
          ? {}
          : { health: `http://127.0.0.1:${manager.healthAddress.port}/readyz` }),
        ...(profiles === undefined ? {} : { profiles: url(profiles, "/debug/pprof/") }),
        ...(inspector === undefined ? {} : { inspector: url(inspector, "/") })
      }
      const endpoints = [
        urls.metrics === undefined ? undefined : `Metrics: ${urls.metrics}`,
        urls.health === undefined ? undefined : `Health: ${urls.health}`,
        urls.profiles === undefined ? undefined : `Profiles: ${urls.profiles}`,
        urls.inspector === undefined ? undefined : `Inspector: ${urls.inspector}`
      ].filter((s) => s !== undefined)
      const tryIt = narrate(
        [
          `Try it (${server.name} runs until Ctrl-C; this kubeconfig is removed then):`,
          ...commands.map((c) => `  ${prefix} ${c}`),
          ...(endpoints.length > 0 ? [endpoints.join("   ")] : []),
          ``
        ].join("\n"),
        {
          message: "try it",
          fields: {
            cluster: server.name,
            until: "Ctrl-C, then the kubeconfig is removed",
            kubeconfig: server.kubeconfigPath,
            commands,
            ...urls
          }
        }
      )
      yield* Effect.forkScoped(
        Effect.andThen(
          Effect.forEach(followed, ready, { concurrency: "unbounded", discard: true }).pipe(
            Effect.timeoutOrElse({
              duration: "60 seconds",
              orElse: () =>
                narrate(`(not every sample is Ready after 60 s)\n`, {
                  message: "not every sample is Ready",
                  level: "warn",
                  fields: { after: "60s" }
                })
            })
          ),
          tryIt
        )
      )
    }))

    const app = demo.pipe(
      Layer.provideMerge(running(operator, args, env)),
      Layer.provide(prepared),
      Layer.provide(client),
      Layer.provide(server)
    )
    return yield* Manager.launch(app)
  }))

/** Installs (or updates) the CRDs with server-side apply and waits until the API server serves them. */
const installCrds = <E, R>(operator: Operator.Operator<E, R>) =>
  Effect.gen(function*() {
    const definitions = yield* crds(operator)
    for (const crd of definitions) {
      const name = (crd as KubeObject).metadata.name!
      yield* KubeClient.patch(Resource.CustomResourceDefinition, name, crd, {
        type: "apply",
        fieldManager: operator.name,
        force: true
      })
      const established = KubeClient.get(Resource.CustomResourceDefinition, name).pipe(
        Effect.map((current) =>
          (current as any).status?.conditions?.some((c: any) => c?.type === "Established" && c?.status === "True") ===
            true
        )
      )
      yield* established.pipe(
        Effect.flatMap((ok) => ok ? Effect.void : Effect.fail("not yet" as const)),
        Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 240 }),
        Effect.catch((e) =>
          e === "not yet"
            ? Effect.fail(
              new Error(`the CustomResourceDefinition ${name} was applied but is not Established after 60 s`)
            )
            : Effect.fail(e)
        )
      )
      yield* Effect.logInfo(`installed CustomResourceDefinition ${name}`)
    }
  })

/** Cluster mode (`--kubeconfig`, `--context`, `--in-cluster`): the CRDs if asked, then the operator. */
const cluster = <E, R>(
  operator: Operator.Operator<E, R>,
  args: Main.Args,
  env: Readonly<Record<string, string | undefined>>
) => {
  const mode = args.mode
  const kube = mode._tag === "InCluster"
    ? Kube.layerInCluster()
    : mode._tag === "Cluster" && mode.context !== undefined
    ? Kube.layerFromContext(mode.context, { path: mode.kubeconfig })
    : Kube.layerFromFile((mode as { readonly kubeconfig: string }).kubeconfig)
  // `KUBECONFIG` and `HOME` (for `--context`) and the in-cluster variables come from the program's environment
  const client = KubeClient.layer.pipe(
    Layer.provideMerge(kube),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: env as Record<string, string> })))
  )
  const start = Layer.effectDiscard(Effect.gen(function*() {
    const kube = yield* Kube.Kube
    yield* Effect.logInfo(`starting the ${operator.name} operator`).pipe(
      Effect.annotateLogs({
        server: kube.server,
        ...(mode._tag === "Cluster" && mode.context !== undefined ? { context: mode.context } : {}),
        ...(args.namespace !== undefined ? { watchNamespace: args.namespace } : {})
      })
    )
    if (args.installCrds) yield* installCrds(operator)
  }))
  const started = Layer.effectDiscard(Effect.flatMap(Manager.Manager, (manager) =>
    Effect.logInfo("running").pipe(
      Effect.annotateLogs({
        ...(manager.metricsAddress !== undefined ? { metrics: url(manager.metricsAddress, "/metrics") } : {}),
        ...(manager.healthAddress !== undefined ? { health: url(manager.healthAddress, "/readyz") } : {})
      })
    )))
  return Manager.launch(started.pipe(
    Layer.provideMerge(running(operator, args, env)),
    Layer.provide(start),
    Layer.provide(client)
  ))
}

/** @internal */
export const program = <E, R extends Main.Services>(
  operator: Operator.Operator<E, R>,
  options: Main.Options = {}
): Effect.Effect<number> => {
  const argv = options.argv ?? process.argv.slice(2)
  const env = options.env ?? process.env
  const command = options.command ?? "npm start --"
  return Effect.gen(function*() {
    const parsed = yield* parse(argv, env, command, operator.name)
    // --help or --completions: printed
    if (Option.isNone(parsed)) return 0
    const args = parsed.value
    const webhookFlag = args.webhookPort !== undefined
      ? "--webhook-port"
      : args.webhookCertDir !== undefined
      ? "--webhook-cert-dir"
      : undefined
    if (webhookFlag !== undefined && Operator.webhookSettings(operator, "default") === undefined) {
      const message =
        `${webhookFlag} does nothing: the ${operator.name} operator has no webhooks (see ${command} --help)`
      return yield* Effect.as(
        narrate(`error: ${message}`, { message, level: "error", stderr: true, fields: { exitCode: 2 } }).pipe(
          withLogFormat(args)
        ),
        2
      )
    }
    if (args.ignoredKubeconfig !== undefined) {
      const cluster = args.mode._tag === "Real" ? "real control plane" : "embedded cluster"
      const instead = `${command} --kubeconfig "$KUBECONFIG"`
      yield* narrate(
        `KUBECONFIG is set but ignored: this runs on its own ${cluster}. To run on that cluster: ${instead}`,
        {
          message: "KUBECONFIG is set but ignored",
          level: "warn",
          stderr: true,
          fields: { kubeconfig: args.ignoredKubeconfig, runsOn: `its own ${cluster}`, instead }
        }
      ).pipe(withLogFormat(args))
    }
    const run = withProfiling(
      args,
      (profiles) =>
        withInspector(args, (inspector) =>
          args.mode._tag === "Embedded" || args.mode._tag === "Real"
            ? embedded(operator, args, options, env, profiles, inspector)
            : cluster(operator, args, env))
    )
    // --otlp-endpoint / OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP exporter (inside the log layer: its logger is added
    // beside the process's); the service is the operator unless OTEL_SERVICE_NAME names it
    const telemetry = args.telemetry === undefined
      ? run
      : Effect.provide(
        run,
        Telemetry.layer({
          ...args.telemetry,
          serviceName: args.telemetry.serviceName ?? args.telemetry.resourceAttributes?.["service.name"] ??
            operator.name
        })
      )
    return yield* telemetry.pipe(
      Effect.as(0),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause as Cause.Cause<never>)
          : Effect.as(failed(cause), 1)
      ),
      withLogFormat(args)
    )
  }).pipe(
    Effect.catchTag("UsageError", (e) =>
      Effect.as(
        narrate(`error: ${e.message}`, { message: e.message, level: "error", stderr: true, fields: { exitCode: 2 } })
          .pipe(
            withLogFormat({ logFormat: jsonAsked(argv, env) ? "json" : "logfmt", logLevel: "info" })
          ),
        2
      ))
  ) as Effect.Effect<number>
}

/**
 * The program's log format and level; with `--log-format json` the narration is records too (every line the process
 * writes is then JSON).
 */
const withLogFormat =
  (args: Pick<Main.Args, "logFormat" | "logLevel">) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.provide(Logging.layer({ format: args.logFormat, level: args.logLevel })),
      Effect.provideService(AsRecords, args.logFormat === "json")
    )

/**
 * Whether the command line (its last `--log-format`) or else `LOG_FORMAT` asks for JSON, read without the parser: for
 * the parser's own refusals.
 */
const jsonAsked = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): boolean => {
  let format = env.LOG_FORMAT
  argv.forEach((arg, i) => {
    if (arg === "--log-format") format = argv[i + 1]
    else if (arg.startsWith("--log-format=")) format = arg.slice("--log-format=".length)
  })
  return format?.toLowerCase() === "json"
}

/** A failure, once: the `error: …` line (stderr), or an error record (a defect's stack in `stack`). */
const failed = (cause: Cause.Cause<unknown>) => {
  const text = describeCause(cause)
  const [message = "", ...rest] = text.split("\n")
  const stack = rest.join("\n").trim()
  return narrate(`error: ${text}`, {
    message,
    level: "error",
    stderr: true,
    fields: { exitCode: 1, ...(stack === "" ? {} : { stack }) }
  })
}

/**
 * `--profiling-port`: `use` with the profiling server listening (its address logged) for as long as `use` runs; else
 * `use` alone.
 */
const withProfiling = <A, E, R>(
  args: Main.Args,
  use: (profiles: ProfilingServer.Address | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | ProfilingServer.ProfilingServerError, R> => {
  const profiling = args.profiling
  if (profiling === undefined) return use(undefined)
  return Effect.scoped(Effect.gen(function*() {
    const address = yield* ProfilingServer.serve({ port: profiling.port, host: profiling.host })
    yield* Effect.logInfo("serving profiles").pipe(Effect.annotateLogs({ address: url(address, "/debug/pprof/") }))
    return yield* use(address)
  }))
}

/**
 * `--inspector-port`: `use` with an `Inspector` in its context (so the operator's controllers record into it) and
 * the inspector's server listening over it (its address logged); else `use` alone, and nothing records.
 */
const withInspector = <A, E, R>(
  args: Main.Args,
  use: (inspector: InspectorServer.Address | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | InspectorServer.InspectorServerError, R> => {
  const options = args.inspector
  if (options === undefined) return use(undefined)
  return Effect.scoped(Effect.gen(function*() {
    const inspector = yield* Inspector.make()
    const address = yield* InspectorServer.serve({ port: options.port, host: options.host }).pipe(
      Effect.provideService(Inspector.Inspector, inspector)
    )
    yield* Effect.logInfo("serving the inspector").pipe(Effect.annotateLogs({ address: url(address, "/") }))
    return yield* use(address).pipe(Effect.provideService(Inspector.Inspector, inspector))
  }))
}

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const failure = cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) return describe(failure.error)
  const defect = cause.reasons.find(Cause.isDieReason)
  if (defect !== undefined) {
    return defect.defect instanceof Error
      ? `${describe(defect.defect)} (a defect: please report it)\n${defect.defect.stack ?? ""}`
      : describe(defect.defect)
  }
  return Cause.pretty(cause)
}

/** @internal */
export const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isSuccess(exit)
    ? onExit(typeof exit.value === "number" ? exit.value : 0)
    : Cause.hasInterruptsOnly(exit.cause)
    ? onExit(0)
    : onExit(1)

/** @internal */
export const run = <E, R extends Main.Services>(operator: Operator.Operator<E, R>, options?: Main.Options): void =>
  NodeRuntime.runMain(program(operator, options), { teardown, disableErrorReporting: true })
