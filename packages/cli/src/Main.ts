/**
 * The main job of a Reconcile operator: `Main.run(operator)` in `src/main.ts`
 * is the whole program behind `npm start` and the container's command.
 *
 * - **Embedded by default**: without `--kubeconfig PATH`, `--context NAME` or
 *   `--in-cluster`, it starts the testkit's API server (in memory, HTTPS on
 *   127.0.0.1, with its controller manager), installs the operator's CRDs,
 *   applies the `samples` and prints how to try it with `kubectl`. Its
 *   kubeconfig lives in a private temporary directory (mode 0700) removed when
 *   the process ends. `KUBECONFIG` alone never switches to a real cluster.
 * - **A real control plane of its own** with `--real`: the same, on etcd, kube-apiserver and
 *   kube-controller-manager started for the run (the testkit's `Envtest`; binaries from
 *   `npm run envtest:setup`), with a kubelet stand-in (there are no nodes).
 * - **A real cluster** only when asked: `--kubeconfig PATH`, `--context NAME`
 *   (of `$KUBECONFIG` or `~/.kube/config`) or `--in-cluster` (the Pod's service
 *   account: what the generated Deployment runs with).
 * - **Replicas**: `--leader-elect` runs the controllers only while holding the
 *   Lease named after the operator; `--sharding` runs every replica as one shard
 *   of the ring named after the operator (`Sharding.layer`): each reconciles its
 *   share of the objects. Both are refused on the local clusters.
 * - **Webhooks** (`Operator.make({ webhooks })`): served on every replica,
 *   beside leader election, ready in `/readyz`, drained on stop. Locally the
 *   main job makes a certificate for 127.0.0.1 and installs the webhook
 *   configurations and conversion stanzas (`clientConfig.url`); on a cluster
 *   the certificate is the `CertificateManager`'s (or `--webhook-cert-dir`'s)
 *   and the configurations are the manifests'. `--webhook-port` sets the port.
 * - The command line is an `effect/cli` Command: `--help` prints its help. A
 *   flag that does nothing in the chosen mode, an unknown flag or a bad value
 *   is one `error: …` line (exit 2); a start failure prints `error: <what to
 *   do>` once (exit 1); SIGINT/SIGTERM drain the controllers and exit 0.
 * - **`--log-format json` means every line**: the narration (`Installed …`, "Try it", {@link narrate}), the
 *   warnings and the `error: …` line become JSON records of the same facts; in text mode they stay text.
 * - **Profiles on demand**: `--profiling-port N` serves CPU profiles and heap snapshots under `/debug/pprof/`
 *   (`ProfilingServer`), on 127.0.0.1 unless `--profiling-bind-address` says otherwise.
 * - **The inspector**: `--inspector-port N` records what every controller does (`Inspector`) and serves its page and
 *   JSON API (`InspectorServer`), on 127.0.0.1 unless `--inspector-bind-address` says otherwise; off by default.
 *
 * @example
 * ```ts
 * import { Main } from "@reconcile/cli"
 * import type { Operator } from "@reconcile/kube"
 *
 * declare const operator: Operator.Operator
 *
 * Main.run(operator, {
 *   samples: (namespace) => [{
 *     apiVersion: "example.com/v1",
 *     kind: "Greeting",
 *     metadata: { name: "hello", namespace },
 *     spec: { message: "Hello" }
 *   }]
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Manager from "@reconcile/core/Manager"
import type * as Cache from "@reconcile/kube/Cache"
import type * as Kube from "@reconcile/kube/Kube"
import type * as KubeClient from "@reconcile/kube/KubeClient"
import type * as Operator from "@reconcile/kube/Operator"
import type * as Effect from "effect/Effect"
import type * as Runtime from "effect/Runtime"
import * as args from "./internal/args.js"
import type { Args, UsageError } from "./internal/args.js"
import * as internal from "./internal/main.js"
import * as Narration from "./internal/narration.js"

// What the command line parses into and its error (declared by `internal/args.ts`, which makes them, so that it need
// not import this module).
export type { Args, Mode } from "./internal/args.js"
export { UsageError } from "./internal/args.js"

/**
 * The services the main job provides to the operator's controllers.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Manager.Manager | Cache.Cache | KubeClient.KubeClient | Kube.Kube

/**
 * Options of {@link program} and {@link run}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The objects applied on the embedded cluster (in `--namespace`, default `default`). */
  readonly samples?: ((namespace: string) => ReadonlyArray<object>) | undefined
  /** When a sample counts as Ready (default: a `Ready` condition with status `True`); it is then printed once. */
  readonly isReady?: ((object: any) => boolean) | undefined
  /**
   * The `kubectl …` commands of the "Try it" text, each printed after `KUBECONFIG=…` (default: `kubectl get` of the
   * operator's kinds in the namespace).
   */
  readonly tryIt?: ((namespace: string) => ReadonlyArray<string>) | undefined
  /**
   * How the program is run, for the usage text and messages (default `npm start --`). When it is one word, an
   * executable on the `PATH` (`greeting-operator`), `--completions bash|zsh|fish|powershell` prints the shell
   * completions for it.
   */
  readonly command?: string | undefined
  /** The arguments (default `process.argv.slice(2)`). */
  readonly argv?: ReadonlyArray<string> | undefined
  /** The environment (default `process.env`): `KUBECONFIG`, `LOG_FORMAT`, `LOG_LEVEL`, `POD_NAMESPACE`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/**
 * Parses the command line (`--flag value` or `--flag=value`; the `effect/cli` Command of {@link program}) and the
 * environment (`KUBECONFIG`, `LOG_FORMAT`, `LOG_LEVEL`). Prints nothing: `--help` and `--completions` give
 * `help: true`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseArgs = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>> = {},
  command = "npm start --"
): Effect.Effect<Args, UsageError> => args.parseArgs(argv, env, command)

/**
 * The usage text (`--help`, in `effect/cli`'s format) for an operator named `name`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const usage = (name: string, command = "npm start --"): string => args.usage(name, command)

/**
 * The main program: parses the arguments, then runs the operator (embedded
 * or on a cluster) until it fails or is interrupted. Succeeds with the exit
 * code: 0 after `--help`, 1 when starting or running failed (printed once as
 * `error: …`), 2 for invalid options; an interrupt (SIGINT/SIGTERM) stops it
 * gracefully.
 *
 * @since 0.1.0
 * @category running
 */
export const program: <E, R extends Services>(
  operator: Operator.Operator<E, R>,
  options?: Options
) => Effect.Effect<number> = internal.program

/**
 * Runs {@link program} as the process's main fiber (`NodeRuntime.runMain`):
 * SIGINT/SIGTERM drain the controllers and exit 0; otherwise the process exits
 * with the program's code.
 *
 * @since 0.1.0
 * @category running
 */
export const run: <E, R extends Services>(operator: Operator.Operator<E, R>, options?: Options) => void = internal.run

/**
 * A line of the main job's narration, like those {@link run} prints itself (`Applied …`, the "Try it" text): `text`
 * on stdout, or, with `--log-format json` (where every line the process writes is a JSON record), an info record of
 * `message` with `fields` (and the fiber's log annotations) instead.
 *
 * @example
 * ```ts
 * import { Main } from "@reconcile/cli"
 *
 * const reconciled = (key: string, outcome: string) =>
 *   Main.narrate(`reconcile ${key} → ${outcome}`, "reconciled", { object: key, outcome })
 * // text:  reconcile default/sample → success
 * // json:  {"time":"…","level":"info","msg":"reconciled",…,"object":"default/sample","outcome":"success"}
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const narrate = (
  text: string,
  message: string,
  fields?: { readonly [key: string]: unknown }
): Effect.Effect<void> => Narration.narrate(text, { message, fields })

/**
 * The process exit of {@link run}: the program's exit code, 0 after a graceful
 * stop (an interrupt), 1 for anything else.
 *
 * @since 0.1.0
 * @category running
 */
export const teardown: Runtime.Teardown = internal.teardown
