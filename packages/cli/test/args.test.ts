/**
 * The main job's command line: which flags each mode takes, bad values, and the environment.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { Main } from "../src/index.js"

const parse = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.exit(Main.parseArgs(argv, env, "npm start --"))

const failure = (exit: Exit.Exit<Main.Args, Main.UsageError>): string => {
  if (Exit.isSuccess(exit)) return assert.fail(`accepted: ${JSON.stringify(exit.value)}`)
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  return (error as { readonly error: Main.UsageError }).error.message
}

const args = (exit: Exit.Exit<Main.Args, Main.UsageError>): Main.Args => {
  if (Exit.isFailure(exit)) return assert.fail(`rejected: ${JSON.stringify(exit.cause)}`)
  return exit.value
}

/** The documented table (docs/cli.md): where each option may be given. */
const modes = {
  embedded: [],
  kubeconfig: ["--kubeconfig", "/tmp/kubeconfig"],
  context: ["--context", "kind-dev"],
  "kubeconfig+context": ["--kubeconfig", "/tmp/kubeconfig", "--context", "kind-dev"],
  "in-cluster": ["--in-cluster"]
} as const
type ModeName = keyof typeof modes

const options = {
  "--namespace": "demo",
  "--install-crds": undefined,
  "--leader-elect": undefined,
  "--sharding": undefined,
  "--leader-election-namespace": "operators",
  "--metrics-port": "9090",
  "--health-port": "9091",
  "--webhook-port": "9443",
  "--webhook-cert-dir": "/certs",
  "--log-format": "json",
  "--log-level": "debug"
} as const
type OptionName = keyof typeof options

/** Why an option is refused in a mode (with the options given), or undefined when it is accepted. */
const refusal = (mode: ModeName, given: ReadonlySet<OptionName>, option: OptionName): string | undefined => {
  if (
    mode === "embedded" &&
    (option === "--install-crds" || option === "--leader-elect" || option === "--sharding" ||
      option === "--webhook-cert-dir")
  ) return "embedded"
  if (
    (option === "--leader-elect" || option === "--sharding") && given.has("--leader-elect") && given.has("--sharding")
  ) return "alternatives"
  if (option === "--leader-election-namespace" && !given.has("--leader-elect") && !given.has("--sharding")) {
    return "without --leader-elect or --sharding"
  }
  return undefined
}

describe("Main.parseArgs", () => {
  it.effect("no flags: the embedded cluster, logfmt at info, a free port for metrics and health", () =>
    Effect.gen(function*() {
      const a = args(yield* parse([]))
      assert.deepStrictEqual(a.mode, { _tag: "Embedded" })
      assert.strictEqual(a.logFormat, "logfmt")
      assert.strictEqual(a.logLevel, "info")
      assert.strictEqual(a.metricsPort, 0)
      assert.strictEqual(a.healthPort, 0)
      assert.isUndefined(a.namespace)
      assert.isUndefined(a.ignoredKubeconfig)
    }))

  it.effect("KUBECONFIG alone does not switch: the embedded cluster, with the variable reported as ignored", () =>
    Effect.gen(function*() {
      const a = args(yield* parse([], { KUBECONFIG: "/home/me/.kube/prod" }))
      assert.deepStrictEqual(a.mode, { _tag: "Embedded" })
      assert.strictEqual(a.ignoredKubeconfig, "/home/me/.kube/prod")
      // with --context it is where the context comes from: not ignored
      const b = args(yield* parse(["--context", "prod"], { KUBECONFIG: "/home/me/.kube/prod" }))
      assert.deepStrictEqual(b.mode, { _tag: "Cluster", kubeconfig: undefined, context: "prod" })
      assert.isUndefined(b.ignoredKubeconfig)
    }))

  it.effect("--in-cluster listens for the generated Deployment's probes: 8080 and 8081 by default", () =>
    Effect.gen(function*() {
      const a = args(yield* parse(["--in-cluster", "--leader-elect"]))
      assert.deepStrictEqual(a.mode, { _tag: "InCluster" })
      assert.strictEqual(a.metricsPort, 8080)
      assert.strictEqual(a.healthPort, 8081)
      // the Deployment's exact flags
      const d = args(
        yield* parse([
          "--in-cluster",
          "--leader-elect",
          "--metrics-port=8080",
          "--health-port=8081",
          "--log-format=json"
        ])
      )
      assert.strictEqual(d.logFormat, "json")
      assert.isTrue(d.leaderElect)
    }))

  it.effect("--in-cluster with --kubeconfig or --context is refused", () =>
    Effect.gen(function*() {
      assert.include(failure(yield* parse(["--in-cluster", "--kubeconfig", "x"])), "--in-cluster")
      assert.include(failure(yield* parse(["--in-cluster", "--context", "x"])), "--context")
    }))

  it.effect("flags that do nothing on the embedded cluster say why", () =>
    Effect.gen(function*() {
      assert.include(failure(yield* parse(["--install-crds"])), "--install-crds does nothing on the embedded cluster")
      assert.include(failure(yield* parse(["--leader-elect"])), "--leader-elect does nothing on the embedded cluster")
      assert.include(failure(yield* parse(["--sharding"])), "--sharding does nothing on the embedded cluster")
      assert.include(
        failure(yield* parse(["--real", "--sharding"])),
        "--sharding does nothing on a --real control plane"
      )
      assert.include(
        failure(yield* parse(["--kubeconfig", "k", "--leader-election-namespace", "x"])),
        "does nothing without --leader-elect or --sharding"
      )
    }))

  it.effect(
    "--sharding: one shard of the ring, its Leases where --leader-election-namespace says; not with " +
      "--leader-elect",
    () =>
      Effect.gen(function*() {
        const a = args(yield* parse(["--in-cluster", "--sharding", "--leader-election-namespace", "operators"]))
        assert.isTrue(a.sharding)
        assert.isFalse(a.leaderElect)
        assert.strictEqual(a.leaderElectionNamespace, "operators")
        assert.isFalse(args(yield* parse(["--kubeconfig", "k"])).sharding)
        const both = failure(yield* parse(["--kubeconfig", "k", "--sharding", "--leader-elect"]))
        assert.include(both, "--leader-elect and --sharding are alternatives")
        assert.include(failure(yield* parse(["--in-cluster", "--sharding=true"])), "--sharding takes no value")
        assert.include(Main.usage("greeting-operator"), `run as one shard of the ring "greeting-operator"`)
      })
  )

  it.effect("bad values are refused with the reason", () =>
    Effect.gen(function*() {
      assert.include(failure(yield* parse(["--metrics-port", "65536"])), "--metrics-port must be a port number")
      assert.include(failure(yield* parse(["--health-port=-1"])), "--health-port must be a port number")
      assert.include(failure(yield* parse(["--metrics-port", "http"])), "port number")
      assert.include(failure(yield* parse(["--namespace", "Demo"])), "not a valid namespace name")
      assert.include(failure(yield* parse(["--log-level", "loud"])), "log level \"loud\"")
      assert.include(failure(yield* parse(["--log-format", "xml"])), "log format \"xml\"")
      assert.include(failure(yield* parse([], { LOG_LEVEL: "chatty" })), "from the environment")
      assert.include(failure(yield* parse(["--namespace"])), "--namespace needs a value")
      assert.include(failure(yield* parse(["--namespace", "--install-crds"])), "--namespace needs a value")
      assert.include(failure(yield* parse(["--install-crd"])), "unknown option --install-crd")
      assert.include(failure(yield* parse(["--in-cluster=yes"])), "takes no value")
      assert.include(failure(yield* parse(["extra"])), "unexpected argument")
      assert.include(failure(yield* parse(["--namespace", "a", "--namespace", "b"])), "given twice")
    }))

  it.effect("flags win over LOG_FORMAT / LOG_LEVEL; the environment applies otherwise", () =>
    Effect.gen(function*() {
      const env = { LOG_FORMAT: "json", LOG_LEVEL: "warn" }
      const fromEnv = args(yield* parse([], env))
      assert.strictEqual(fromEnv.logFormat, "json")
      assert.strictEqual(fromEnv.logLevel, "warn")
      const flags = args(yield* parse(["--log-format", "logfmt", "--log-level=debug"], env))
      assert.strictEqual(flags.logFormat, "logfmt")
      assert.strictEqual(flags.logLevel, "debug")
    }))

  it.effect("--help wins over everything else", () =>
    Effect.gen(function*() {
      assert.isTrue(args(yield* parse(["--install-crds", "--help"])).help)
      assert.isTrue(args(yield* parse(["-h"])).help)
      const text = Main.usage("greeting-operator")
      for (const flag of [...Object.keys(options), "--kubeconfig", "--context", "--in-cluster"]) {
        assert.include(text, flag)
      }
    }))

  it.effect.prop(
    "a port is accepted exactly when it is a whole number from 0 to 65535",
    [Schema.Int, Schema.Literals(["--metrics-port", "--health-port"])],
    ([n, flag]) =>
      Effect.gen(function*() {
        const exit = yield* parse([flag, String(n)])
        if (n >= 0 && n <= 65535) {
          const a = args(exit)
          assert.strictEqual(flag === "--metrics-port" ? a.metricsPort : a.healthPort, n)
        } else {
          assert.include(failure(exit), `${flag} must be a port number`)
        }
      })
  )

  it.effect.prop(
    "an option is accepted exactly where the documented table allows it, in any order and either form",
    [
      Schema.Literals(Object.keys(modes) as Array<ModeName>),
      Schema.Array(Schema.Literals(Object.keys(options) as Array<OptionName>)),
      Schema.Array(Schema.Boolean),
      Schema.Int
    ],
    ([mode, picked, forms, seed]) =>
      Effect.gen(function*() {
        const given = new Set(picked)
        const parts: Array<ReadonlyArray<string>> = [modes[mode]]
        let i = 0
        for (const option of given) {
          const value = options[option]
          const inline = forms[i++ % Math.max(1, forms.length)] ?? false
          parts.push(value === undefined ? [option] : inline ? [`${option}=${value}`] : [option, value])
        }
        // a deterministic shuffle of the groups (a flag and its value stay together)
        const shuffled = parts.map((p, j) => [((j + 1) * (seed | 1)) % 97, p] as const)
          .sort((a, b) => a[0] - b[0]).flatMap(([, p]) => p)
        const exit = yield* parse(shuffled)
        const refused = [...given].filter((o) => refusal(mode, given, o) !== undefined)
        if (refused.length === 0) {
          const a = args(exit)
          assert.strictEqual(
            a.mode._tag,
            mode === "embedded" ? "Embedded" : mode === "in-cluster" ? "InCluster" : "Cluster"
          )
          assert.strictEqual(a.installCrds, given.has("--install-crds"))
          assert.strictEqual(a.leaderElect, given.has("--leader-elect"))
          assert.strictEqual(a.sharding, given.has("--sharding"))
          assert.strictEqual(
            a.leaderElectionNamespace,
            given.has("--leader-election-namespace") ? "operators" : undefined
          )
          assert.strictEqual(a.namespace, given.has("--namespace") ? "demo" : undefined)
          if (given.has("--metrics-port")) assert.strictEqual(a.metricsPort, 9090)
          if (given.has("--health-port")) assert.strictEqual(a.healthPort, 9091)
          assert.strictEqual(a.webhookPort, given.has("--webhook-port") ? 9443 : undefined)
          assert.strictEqual(a.webhookCertDir, given.has("--webhook-cert-dir") ? "/certs" : undefined)
        } else {
          const message = failure(exit)
          assert.isTrue(refused.some((o) => message.includes(o)), `${message} names none of ${refused.join(", ")}`)
          assert.include(message, "npm start -- --help")
        }
      })
  )
})
