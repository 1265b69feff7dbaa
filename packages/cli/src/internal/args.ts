/**
 * The main job's command line, an `effect/cli` Command:
 *
 * - its flags, each value checked as it is read (ports, namespace names, log format and level);
 * - the refusals of flags that do nothing in the chosen mode (`Command.validate`), before anything starts;
 * - {@link Args} from the flags and the environment (`KUBECONFIG`, `LOG_FORMAT`, `LOG_LEVEL`).
 */
import { Logging, Telemetry } from "@reconcile/core"
import { CliError, CliOutput, Command, Flag } from "effect/cli"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Net from "node:net"
import * as CommandLine from "./commandLine.js"

/**
 * Where the operator runs: the embedded API server, a real control plane of its own
 * (`--real`), a cluster of a kubeconfig
 * (`--kubeconfig` and/or `--context`), or the Pod's service account
 * (`--in-cluster`).
 *
 * @since 0.1.0
 * @category models
 */
export type Mode =
  | { readonly _tag: "Embedded" }
  | { readonly _tag: "Real" }
  | { readonly _tag: "Cluster"; readonly kubeconfig: string | undefined; readonly context: string | undefined }
  | { readonly _tag: "InCluster" }

/**
 * The parsed command line (see `Main.parseArgs`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Args {
  /** `--help` or `--completions SHELL`: the program prints that text and exits 0; nothing runs. */
  readonly help: boolean
  readonly mode: Mode
  /** `--namespace`: the only namespace watched (and, embedded, where the samples go). */
  readonly namespace: string | undefined
  readonly installCrds: boolean
  readonly leaderElect: boolean
  /**
   * `--sharding`: run as one shard of the ring named after the operator (`Sharding.layer`): every replica reconciles
   * its share of the objects.
   */
  readonly sharding: boolean
  /** `--leader-election-namespace`: the Lease's namespace (`--leader-elect`), or the ring's Leases' (`--sharding`). */
  readonly leaderElectionNamespace: string | undefined
  readonly metricsPort: number
  readonly healthPort: number
  /** `--webhook-port`: where the webhook server listens (default: in-cluster the operator's, 9443; else a free one). */
  readonly webhookPort: number | undefined
  /** `--webhook-cert-dir`: serve the certificate of this directory (`tls.crt`, `tls.key`) instead of managing one. */
  readonly webhookCertDir: string | undefined
  /**
   * `--profiling-port` (with `--profiling-bind-address`, default `127.0.0.1`): serve CPU profiles and heap snapshots
   * there (`ProfilingServer`); `undefined`: not served.
   */
  readonly profiling?: { readonly port: number; readonly host: string | undefined } | undefined
  /**
   * `--inspector-port` (with `--inspector-bind-address`, default `127.0.0.1`): record what the controllers do
   * (`Inspector`) and serve the inspector's page and JSON API there (`InspectorServer`); `undefined`: off. Without
   * the flag it is on (a free loopback port) on the embedded or local cluster, and off on a named one.
   */
  readonly inspector?: { readonly port: number; readonly host: string | undefined } | undefined
  readonly logFormat: Logging.Format
  readonly logLevel: Logging.Level
  /** `KUBECONFIG`'s value when it is set but ignored (embedded mode). */
  readonly ignoredKubeconfig: string | undefined
  /**
   * `--otlp-endpoint` (else `OTEL_EXPORTER_OTLP_ENDPOINT`) with the other `OTEL_*` variables: where traces, metrics
   * and logs go over OTLP/HTTP; `undefined`: nowhere (no tracer is installed).
   */
  readonly telemetry?: Telemetry.Options | undefined
}

/**
 * An invalid command line: an unknown flag, a bad value, or a flag that does
 * nothing in the chosen mode. The message says why (exit code 2).
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** A DNS-1123 label (a namespace name). */
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

const invalid = (message: string) => Effect.fail(new CliError.ValidationError({ message }))

/** A flag without a value: absent is `false`. */
const switchFlag = (name: string, description: string) =>
  Flag.Boolean(name).pipe(Flag.withoutNegation, Flag.withDefault(false), Flag.withDescription(description))

/** A flag with a value, which `check` turns into what it stands for or refuses with a sentence naming the flag. */
const valueFlag = <A>(
  name: string,
  metavar: string,
  description: string,
  check: (value: string) => Effect.Effect<A, CliError.CliError>
) =>
  Flag.String(name).pipe(
    Flag.withMetavar(metavar),
    Flag.withDescription(description),
    Flag.mapEffect((value) => value === "" ? invalid(`--${name} needs a value`) : check(value)),
    Flag.optional
  )

const text = (name: string, metavar: string, description: string) =>
  valueFlag(name, metavar, description, Effect.succeed)

const namespace = (name: string, description: string) =>
  valueFlag(name, "NS", description, (value) =>
    dns1123Label.test(value) && value.length <= 63
      ? Effect.succeed(value)
      : invalid(
        `--${name} "${value}" is not a valid namespace name (lowercase letters, digits and "-", at most 63)`
      ))

const port = (name: string, description: string) =>
  valueFlag(name, "N", description, (value) =>
    /^\d{1,5}$/.test(value) && Number(value) <= 65535
      ? Effect.succeed(Number(value))
      : invalid(`--${name} must be a port number from 0 to 65535 (0: a free port), not "${value}"`))

const logging = <A>(
  name: string,
  metavar: string,
  description: string,
  parse: (value: string) => Effect.Effect<A, Logging.LoggingError>
) =>
  valueFlag(
    name,
    metavar,
    description,
    (value) => Effect.mapError(parse(value), (e) => new CliError.ValidationError({ message: e.message }))
  )

/** The flags, in the order of the help: where it runs, then the options. */
const flags = (name: string) => ({
  real: switchFlag(
    "real",
    "a control plane of its own: etcd, kube-apiserver, kube-controller-manager (npm run envtest:setup)"
  ),
  kubeconfig: text("kubeconfig", "PATH", "the cluster of this kubeconfig file (its current context)"),
  context: text("context", "NAME", "this context of $KUBECONFIG or ~/.kube/config (or of --kubeconfig's file)"),
  inCluster: switchFlag("in-cluster", "the Pod's service account (what the generated Deployment uses)"),
  namespace: namespace(
    "namespace",
    "watch only namespace NS (default: all); embedded: NS is created, the samples go there"
  ),
  installCrds: switchFlag("install-crds", "install or update the CRDs first (not on the embedded cluster)"),
  leaderElect: switchFlag("leader-elect", `run only while holding the Lease "${name}" (not on the embedded cluster)`),
  sharding: switchFlag(
    "sharding",
    `run as one shard of the ring "${name}": every replica reconciles its share (not on the embedded cluster)`
  ),
  leaderElectionNamespace: namespace(
    "leader-election-namespace",
    "the Leases' namespace, with --leader-elect or --sharding (default: $POD_NAMESPACE, the Pod's, --namespace, " +
      "else \"default\")"
  ),
  metricsPort: port("metrics-port", "port of /metrics (0: a free one; default 0; in-cluster 8080)"),
  healthPort: port("health-port", "port of /healthz and /readyz (default: the metrics port; in-cluster 8081)"),
  webhookPort: port("webhook-port", "port of the webhooks (0: a free one; default 0; in-cluster the operator's, 9443)"),
  webhookCertDir: text(
    "webhook-cert-dir",
    "DIR",
    "the webhooks' certificate from DIR/tls.crt, DIR/tls.key (e.g. cert-manager's), not the operator's own"
  ),
  profilingPort: port(
    "profiling-port",
    "serve CPU profiles and heap snapshots on port N under /debug/pprof/ (0: a free one; default: not served)"
  ),
  profilingBindAddress: valueFlag(
    "profiling-bind-address",
    "ADDR",
    "the address of --profiling-port (default 127.0.0.1; a non-loopback one also serves other hosts)",
    (value) =>
      Net.isIP(value) !== 0 || value === "localhost"
        ? Effect.succeed(value)
        : invalid(`--profiling-bind-address must be an IP address (127.0.0.1, 0.0.0.0, ::), not "${value}"`)
  ),
  inspectorPort: port(
    "inspector-port",
    "serve the inspector (each controller's queue, keys, retries, reconciles) on port N (0: a free one; default: " +
      "a free one on the embedded or local cluster, off on a named one)"
  ),
  inspectorBindAddress: valueFlag(
    "inspector-bind-address",
    "ADDR",
    "the address of --inspector-port (default 127.0.0.1; a non-loopback one also serves other hosts)",
    (value) =>
      Net.isIP(value) !== 0 || value === "localhost"
        ? Effect.succeed(value)
        : invalid(`--inspector-bind-address must be an IP address (127.0.0.1, 0.0.0.0, ::), not "${value}"`)
  ),
  logFormat: logging("log-format", "FORMAT", "logfmt (default), json or pretty (env LOG_FORMAT)", Logging.parseFormat),
  logLevel: logging(
    "log-level",
    "LEVEL",
    "trace, debug, info (default), warn, error, fatal, all, none (env LOG_LEVEL)",
    Logging.parseLevel
  ),
  otlpEndpoint: valueFlag(
    "otlp-endpoint",
    "URL",
    "send traces, metrics and logs over OTLP/HTTP to URL, e.g. http://127.0.0.1:4318 (env OTEL_EXPORTER_OTLP_ENDPOINT)",
    (value) =>
      /^https?:\/\/[^/\s]/.test(value) && URL.canParse(value)
        ? Effect.succeed(value)
        : invalid(`--otlp-endpoint must be an http(s) URL (http://127.0.0.1:4318), not "${value}"`)
  )
})

type Input = Command.Command.Config.Infer<ReturnType<typeof flags>>

/** The flags without a value. */
const switches = new Set(["--help", "--real", "--in-cluster", "--install-crds", "--leader-elect", "--sharding"])

/** The flags that do nothing in the chosen mode. */
const refusals = (input: Input): Effect.Effect<void, CliError.CliError> => {
  const kubeconfig = Option.isSome(input.kubeconfig)
  const context = Option.isSome(input.context)
  if (input.inCluster && (kubeconfig || context)) {
    return invalid(
      `--in-cluster uses the Pod's service account: it cannot be combined with ${
        kubeconfig ? "--kubeconfig" : "--context"
      }`
    )
  }
  if (input.real && (input.inCluster || kubeconfig || context)) {
    return invalid(
      `--real starts a control plane of its own: it cannot be combined with ${
        input.inCluster ? "--in-cluster" : kubeconfig ? "--kubeconfig" : "--context"
      }`
    )
  }
  if (!input.inCluster && !kubeconfig && !context) {
    const where = input.real ? "a --real control plane" : "the embedded cluster"
    if (input.installCrds) {
      return invalid(
        `--install-crds does nothing on ${where} (its CRDs are always installed): use it with ` +
          "--kubeconfig PATH, --context NAME or --in-cluster"
      )
    }
    if (input.leaderElect || input.sharding) {
      return invalid(
        `${input.leaderElect ? "--leader-elect" : "--sharding"} does nothing on ${where} (no other replica can ` +
          "reach it): use it with --kubeconfig PATH, --context NAME or --in-cluster"
      )
    }
    if (Option.isSome(input.webhookCertDir)) {
      return invalid(
        `--webhook-cert-dir does nothing on ${where} (its webhook certificate is made for 127.0.0.1): use it with ` +
          "--kubeconfig PATH, --context NAME or --in-cluster"
      )
    }
  }
  if (input.leaderElect && input.sharding) {
    return invalid(
      "--leader-elect and --sharding are alternatives: --leader-elect runs one replica at a time (on every object), " +
        "--sharding every replica at once (each on its share of the objects); give one"
    )
  }
  if (Option.isSome(input.profilingBindAddress) && Option.isNone(input.profilingPort)) {
    return invalid("--profiling-bind-address does nothing without --profiling-port")
  }
  if (Option.isSome(input.inspectorBindAddress) && Option.isNone(input.inspectorPort)) {
    return invalid("--inspector-bind-address does nothing without --inspector-port")
  }
  if (Option.isSome(input.leaderElectionNamespace) && !input.leaderElect && !input.sharding) {
    return invalid("--leader-election-namespace does nothing without --leader-elect or --sharding")
  }
  return Effect.void
}

const description = (name: string) =>
  [
    `Runs the ${name} operator.`,
    "",
    "Without --real, --kubeconfig, --context or --in-cluster it runs on an embedded Kubernetes API server",
    "(in memory, HTTPS on 127.0.0.1, gone when the process ends): the CRDs are installed, the samples applied,",
    `and a "Try it" text shows how to use kubectl on it. KUBECONFIG alone does not switch to a real cluster.`,
    "",
    "Exit codes: 0 stopped cleanly (SIGINT, SIGTERM) or --help, 1 a start or run failure, 2 invalid options."
  ].map((line, i) => i === 0 || line === "" ? line : `  ${line}`).join("\n")

/**
 * The main job's Command (without a handler) for an operator named `name` run as `command`.
 *
 * @internal
 */
export const command = (name: string, command: string) =>
  Command.make(command, flags(name)).pipe(
    Command.validate(refusals),
    Command.withDescription(description(name)),
    Command.withExamples([
      { command, description: "the embedded cluster: CRDs installed, samples applied, until Ctrl-C" },
      { command: `${command} --kubeconfig ~/.kube/config --install-crds`, description: "a real cluster" },
      {
        command: `${command} --in-cluster --leader-elect --metrics-port=8080 --health-port=8081`,
        description: "in a Pod (the generated Deployment's flags)"
      },
      {
        command: `${command} --in-cluster --sharding --metrics-port=8080 --health-port=8081`,
        description: "in a Pod of a sharded Deployment (reconcile manifests --sharding)"
      }
    ])
  )

const usageError = (message: string, command: string) =>
  new UsageError({ message: `${message} (see ${command} --help)` })

/** The parsed flags with the environment. */
const toArgs = (
  input: Input,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<Args, UsageError> =>
  Effect.gen(function*() {
    const kubeconfig = Option.getOrUndefined(input.kubeconfig)
    const context = Option.getOrUndefined(input.context)
    const mode: Mode = input.real
      ? { _tag: "Real" }
      : input.inCluster
      ? { _tag: "InCluster" }
      : kubeconfig !== undefined || context !== undefined
      ? { _tag: "Cluster", kubeconfig, context }
      : { _tag: "Embedded" }
    const defaults = mode._tag === "InCluster" ? { metrics: 8080, health: 8081 } : undefined
    const metricsPort = Option.getOrUndefined(input.metricsPort) ?? defaults?.metrics ?? 0
    const healthPort = Option.getOrUndefined(input.healthPort) ?? defaults?.health ?? metricsPort
    const fromEnv = yield* Logging.optionsFromEnv(env).pipe(
      Effect.mapError((e) => new UsageError({ message: `${e.message} (from the environment)` }))
    )
    const otel = yield* Telemetry.optionsFromEnv(env).pipe(
      Effect.mapError((e) => new UsageError({ message: `${e.message} (from the environment)` }))
    )
    const otlpEndpoint = Option.getOrUndefined(input.otlpEndpoint)
    const telemetry = Telemetry.resolve(otel, otlpEndpoint === undefined ? {} : { endpoint: otlpEndpoint })
    const kubeconfigEnv = env.KUBECONFIG
    return {
      help: false,
      mode,
      namespace: Option.getOrUndefined(input.namespace),
      installCrds: input.installCrds,
      leaderElect: input.leaderElect,
      sharding: input.sharding,
      leaderElectionNamespace: Option.getOrUndefined(input.leaderElectionNamespace),
      metricsPort,
      healthPort,
      webhookPort: Option.getOrUndefined(input.webhookPort),
      webhookCertDir: Option.getOrUndefined(input.webhookCertDir),
      ...(Option.isSome(input.profilingPort)
        ? { profiling: { port: input.profilingPort.value, host: Option.getOrUndefined(input.profilingBindAddress) } }
        : {}),
      // on a local cluster (a development run) the inspector is on, on a free loopback port, unless a port is given
      ...(Option.isSome(input.inspectorPort)
        ? { inspector: { port: input.inspectorPort.value, host: Option.getOrUndefined(input.inspectorBindAddress) } }
        : mode._tag === "Embedded" || mode._tag === "Real"
        ? { inspector: { port: 0, host: undefined } }
        : {}),
      logFormat: Option.getOrUndefined(input.logFormat) ?? fromEnv.format ?? "logfmt",
      logLevel: Option.getOrUndefined(input.logLevel) ?? fromEnv.level ?? "info",
      ignoredKubeconfig: (mode._tag === "Embedded" || mode._tag === "Real") && kubeconfigEnv !== undefined &&
          kubeconfigEnv !== ""
        ? kubeconfigEnv
        : undefined,
      ...(telemetry === undefined ? {} : { telemetry })
    } satisfies Args
  })

/**
 * Reads the command line: the arguments to run with, or `None` when it asked for a text (`--help`,
 * `--completions SHELL`), which was printed on the Console.
 *
 * @internal
 */
export const parse = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  commandName: string,
  name: string
): Effect.Effect<Option.Option<Args>, UsageError> =>
  Effect.gen(function*() {
    const switchGiven = CommandLine.switchWithValue(argv, switches)
    if (switchGiven !== undefined) return yield* usageError(`${switchGiven} takes no value`, commandName)
    const parsed = yield* Ref.make(Option.none<Args>())
    yield* CommandLine.run(
      command(name, commandName).pipe(
        Command.withHandler((input) => Effect.flatMap(toArgs(input, env), (args) => Ref.set(parsed, Option.some(args))))
      ),
      argv,
      (message) => usageError(message, commandName)
    )
    return yield* Ref.get(parsed)
  })

const helpArgs: Args = {
  help: true,
  mode: { _tag: "Embedded" },
  namespace: undefined,
  installCrds: false,
  leaderElect: false,
  sharding: false,
  leaderElectionNamespace: undefined,
  metricsPort: 0,
  healthPort: 0,
  webhookPort: undefined,
  webhookCertDir: undefined,
  logFormat: "logfmt",
  logLevel: "info",
  ignoredKubeconfig: undefined
}

/**
 * {@link parse} printing nothing: `--help` and `--completions` give `help: true`.
 *
 * @internal
 */
export const parseArgs = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  commandName: string
): Effect.Effect<Args, UsageError> =>
  parse(argv, env, commandName, "operator").pipe(
    Effect.map(Option.getOrElse(() => helpArgs)),
    Effect.provideService(Console.Console, CommandLine.capture([]))
  )

/**
 * `--help`'s text for an operator named `name` run as `command`, without colours.
 *
 * @internal
 */
export const usage = (name: string, commandName: string): string => {
  const lines: Array<string> = []
  Effect.runSync(
    parse(["--help"], {}, commandName, name).pipe(
      Effect.provideService(Console.Console, CommandLine.capture(lines)),
      Effect.provideService(CliOutput.Formatter, CliOutput.defaultFormatter({ colors: false })),
      Effect.ignore
    )
  )
  return `${lines.join("\n")}\n`
}
