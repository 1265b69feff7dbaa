import { Logging } from "@reconcile/core"
import * as Effect from "effect/Effect"
import * as Main from "../Main.js"

/** A DNS-1123 label (a namespace name). */
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** Every flag, with whether it takes a value. */
const flags = {
  "--help": false,
  "-h": false,
  "--kubeconfig": true,
  "--context": true,
  "--in-cluster": false,
  "--real": false,
  "--namespace": true,
  "--install-crds": false,
  "--leader-elect": false,
  "--leader-election-namespace": true,
  "--metrics-port": true,
  "--health-port": true,
  "--log-format": true,
  "--log-level": true
} as const

type Flag = keyof typeof flags

const isFlag = (s: string): s is Flag => Object.prototype.hasOwnProperty.call(flags, s)

const usageError = (message: string, command: string) =>
  Effect.fail(new Main.UsageError({ message: `${message} (see ${command} --help)` }))

const parsePort = (flag: string, value: string): number | string =>
  /^\d{1,5}$/.test(value) && Number(value) <= 65535
    ? Number(value)
    : `${flag} must be a port number from 0 to 65535 (0: a free port), not "${value}"`

/** Why `value` is not a namespace name, if it is not one. */
const namespaceError = (flag: string, value: string): string | undefined =>
  dns1123Label.test(value) && value.length <= 63
    ? undefined
    : `${flag} "${value}" is not a valid namespace name (lowercase letters, digits and "-", at most 63)`

/** @internal */
export const parse = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  command: string
): Effect.Effect<Main.Args, Main.UsageError> =>
  Effect.gen(function*() {
    const given = new Map<Flag, string | true>()
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i]!
      const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
      const name = eq === -1 ? arg : arg.slice(0, eq)
      if (!isFlag(name)) {
        return yield* usageError(
          arg.startsWith("-") ? `unknown option ${name}` : `unexpected argument "${arg}"`,
          command
        )
      }
      const canonical: Flag = name === "-h" ? "--help" : name
      if (given.has(canonical)) return yield* usageError(`${canonical} is given twice`, command)
      if (flags[name]) {
        const value = eq === -1 ? argv[++i] : arg.slice(eq + 1)
        if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) {
          return yield* usageError(`${name} needs a value`, command)
        }
        given.set(canonical, value)
      } else {
        if (eq !== -1) return yield* usageError(`${name} takes no value`, command)
        given.set(canonical, true)
      }
    }
    const value = (flag: Flag) => {
      const v = given.get(flag)
      return typeof v === "string" ? v : undefined
    }
    if (given.has("--help")) return help

    // where it runs
    const kubeconfig = value("--kubeconfig")
    const context = value("--context")
    const inCluster = given.has("--in-cluster")
    if (inCluster && (kubeconfig !== undefined || context !== undefined)) {
      return yield* usageError(
        `--in-cluster uses the Pod's service account: it cannot be combined with ${
          kubeconfig !== undefined ? "--kubeconfig" : "--context"
        }`,
        command
      )
    }
    const real = given.has("--real")
    if (real && (inCluster || kubeconfig !== undefined || context !== undefined)) {
      return yield* usageError(
        `--real starts a control plane of its own: it cannot be combined with ${
          inCluster ? "--in-cluster" : kubeconfig !== undefined ? "--kubeconfig" : "--context"
        }`,
        command
      )
    }
    const mode: Main.Mode = real
      ? { _tag: "Real" }
      : inCluster
      ? { _tag: "InCluster" }
      : kubeconfig !== undefined || context !== undefined
      ? { _tag: "Cluster", kubeconfig, context }
      : { _tag: "Embedded" }

    // flags that do nothing in this mode
    if (mode._tag === "Embedded" || mode._tag === "Real") {
      const where = mode._tag === "Embedded" ? "the embedded cluster" : "a --real control plane"
      if (given.has("--install-crds")) {
        return yield* usageError(
          `--install-crds does nothing on ${where} (its CRDs are always installed): use it with ` +
            "--kubeconfig PATH, --context NAME or --in-cluster",
          command
        )
      }
      if (given.has("--leader-elect")) {
        return yield* usageError(
          `--leader-elect does nothing on ${where} (no other replica can reach it): use it with ` +
            "--kubeconfig PATH, --context NAME or --in-cluster",
          command
        )
      }
    }
    if (given.has("--leader-election-namespace") && !given.has("--leader-elect")) {
      return yield* usageError("--leader-election-namespace does nothing without --leader-elect", command)
    }

    // values
    const namespace = value("--namespace")
    const electionNamespace = value("--leader-election-namespace")
    for (const [flag, v] of [["--namespace", namespace], ["--leader-election-namespace", electionNamespace]] as const) {
      const error = v === undefined ? undefined : namespaceError(flag, v)
      if (error !== undefined) return yield* usageError(error, command)
    }
    const ports: Record<"--metrics-port" | "--health-port", number | undefined> = {
      "--metrics-port": undefined,
      "--health-port": undefined
    }
    for (const flag of ["--metrics-port", "--health-port"] as const) {
      const v = value(flag)
      if (v === undefined) continue
      const port = parsePort(flag, v)
      if (typeof port === "string") return yield* usageError(port, command)
      ports[flag] = port
    }
    const defaults = mode._tag === "InCluster" ? { metrics: 8080, health: 8081 } : undefined
    const metricsPort = ports["--metrics-port"] ?? defaults?.metrics ?? 0
    const healthPort = ports["--health-port"] ?? defaults?.health ?? metricsPort

    const fromEnv = yield* Logging.optionsFromEnv(env).pipe(
      Effect.mapError((e) => new Main.UsageError({ message: `${e.message} (from the environment)` }))
    )
    const logFormatFlag = value("--log-format")
    const logLevelFlag = value("--log-level")
    const mapLogging = Effect.mapError((e: Logging.LoggingError) =>
      new Main.UsageError({ message: `${e.message} (see ${command} --help)` })
    )
    const logFormat = logFormatFlag !== undefined
      ? yield* mapLogging(Logging.parseFormat(logFormatFlag))
      : fromEnv.format ?? "logfmt"
    const logLevel = logLevelFlag !== undefined
      ? yield* mapLogging(Logging.parseLevel(logLevelFlag))
      : fromEnv.level ?? "info"

    const kubeconfigEnv = env.KUBECONFIG
    return {
      help: false,
      mode,
      namespace,
      installCrds: given.has("--install-crds"),
      leaderElect: given.has("--leader-elect"),
      leaderElectionNamespace: electionNamespace,
      metricsPort,
      healthPort,
      logFormat,
      logLevel,
      ignoredKubeconfig: (mode._tag === "Embedded" || mode._tag === "Real") && kubeconfigEnv !== undefined &&
          kubeconfigEnv !== ""
        ? kubeconfigEnv
        : undefined
    } satisfies Main.Args
  })

const help: Main.Args = {
  help: true,
  mode: { _tag: "Embedded" },
  namespace: undefined,
  installCrds: false,
  leaderElect: false,
  leaderElectionNamespace: undefined,
  metricsPort: 0,
  healthPort: 0,
  logFormat: "logfmt",
  logLevel: "info",
  ignoredKubeconfig: undefined
}

/** @internal */
export const usage = (name: string, command: string): string =>
  `Usage: ${command} [options]

Runs the ${name} operator.

Without --kubeconfig, --context or --in-cluster it runs on an embedded Kubernetes API
server (in memory, HTTPS on 127.0.0.1, gone when the process ends): the CRDs are installed,
the samples applied, and a "Try it" text shows how to use kubectl on it. KUBECONFIG alone
does not switch to a real cluster.

Where it runs (one of):
  --real                   a real control plane of its own (etcd, kube-apiserver,
                           kube-controller-manager; built by npm run envtest:setup),
                           otherwise as the embedded cluster
  --kubeconfig PATH        the cluster of this kubeconfig file (its current context)
  --context NAME           this context of $KUBECONFIG or ~/.kube/config
                           (with --kubeconfig: of that file)
  --in-cluster             the Pod's service account (what the generated Deployment uses)

Options:
  --namespace NS           watch only namespace NS (default: all namespaces);
                           embedded: NS is created and the samples go there (default "default")
  --install-crds           install or update the CRDs first (not on the embedded cluster)
  --leader-elect           run only while holding the Lease "${name}" (not on the embedded cluster)
  --leader-election-namespace NS
                           the Lease's namespace (default: $POD_NAMESPACE, the service
                           account's namespace, --namespace, else "default")
  --metrics-port N         port of /metrics (0: a free one; default 0, in-cluster 8080)
  --health-port N          port of /healthz and /readyz (default: the metrics port,
                           in-cluster 8081)
  --log-format FORMAT      logfmt (default), json or pretty (env LOG_FORMAT)
  --log-level LEVEL        trace, debug, info (default), warn, error, fatal, all, none
                           (env LOG_LEVEL)
  -h, --help               this text

Exit codes: 0 stopped cleanly (SIGINT, SIGTERM) or --help, 1 a start or run failure,
2 invalid options.
`
