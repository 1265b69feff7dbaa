/**
 * The `reconcile` command, an `effect/cli` Command: `reconcile manifests` imports an operator's module and writes
 * the YAML it needs in a cluster (`Manifests.generate`), on stdout, in one file (`-o`) or one per group (`--out`).
 */
import { Manifests, Operator } from "@reconcile/kube"
import { CliError, Command, Flag } from "effect/cli"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as CommandLine from "./commandLine.js"

class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

class CommandError extends Data.TaggedError("CommandError")<{ readonly message: string }> {}

interface Parsed {
  readonly entry: string
  readonly exportName: string | undefined
  readonly out: string | undefined
  readonly output: string | undefined
  readonly image: string | undefined
  readonly namespace: string | undefined
  readonly replicas: number | undefined
  readonly sharding: boolean
  readonly dashboard: boolean
  readonly alerts: boolean
}

const invalid = (message: string) => Effect.fail(new CliError.ValidationError({ message }))

/** A flag with a value (never empty). */
const valueFlag = (name: string, metavar: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar(metavar),
    Flag.withDescription(description),
    Flag.mapEffect((value) => value === "" ? invalid(`--${name} needs a value`) : Effect.succeed(value))
  )

const flags = {
  entry: valueFlag(
    "entry",
    "PATH",
    "the module exporting the Operator (default src/operator.ts); it is imported: it must not start anything"
  ).pipe(Flag.withDefault("src/operator.ts")),
  exportName: valueFlag("export", "NAME", "the export to use (default: every export that is an Operator)").pipe(
    Flag.optional
  ),
  out: valueFlag(
    "out",
    "DIR",
    "one file per group in DIR: crd.yaml, namespace.yaml, rbac.yaml, webhook.yaml (webhooks only), workload.yaml"
  ).pipe(
    Flag.optional
  ),
  output: valueFlag("output", "FILE", "one multi-document YAML file (default: standard output)").pipe(
    Flag.withAlias("o"),
    Flag.optional
  ),
  image: valueFlag("image", "IMAGE", "the Deployment's container image").pipe(Flag.optional),
  namespace: valueFlag("namespace", "NS", "the operator's namespace (default <name>-system)").pipe(Flag.optional),
  replicas: valueFlag("replicas", "N", "the Deployment's replicas").pipe(
    Flag.mapEffect((value) =>
      /^\d{1,4}$/.test(value)
        ? Effect.succeed(Number(value))
        : invalid(`--replicas must be a whole number, not "${value}"`)
    ),
    Flag.optional
  ),
  sharding: Flag.Boolean("sharding").pipe(
    Flag.withoutNegation,
    Flag.withDefault(false),
    Flag.withDescription(
      "every replica a shard of the operator's ring (main job --sharding): 3 replicas unless --replicas, the Leases' RBAC"
    )
  ),
  dashboard: Flag.Boolean("dashboard").pipe(
    Flag.withoutNegation,
    Flag.withDefault(false),
    Flag.withDescription(
      "also the Grafana dashboard: a ConfigMap for Grafana's sidecar (grafana_dashboard: \"1\"), with --out DIR " +
        "the JSON to import in DIR/grafana/, and the ServiceMonitor that has Prometheus scrape the operator"
    )
  ),
  alerts: Flag.Boolean("alerts").pipe(
    Flag.withoutNegation,
    Flag.withDefault(false),
    Flag.withDescription(
      "also the PrometheusRule of the operator's alerts and the ServiceMonitor (they need the Prometheus Operator)"
    )
  )
}

/** The flags without a value. */
const switches = new Set(["--sharding", "--dashboard", "--alerts"])

const exitCodes = "Exit codes: 0 written, 1 the entry or the operator is unusable, 2 invalid options."

/** `reconcile manifests`, writing through `io`. */
const manifests = (io: Io) =>
  Command.make("manifests", flags, (input) =>
    writeManifests({
      entry: input.entry,
      exportName: Option.getOrUndefined(input.exportName),
      out: Option.getOrUndefined(input.out),
      output: Option.getOrUndefined(input.output),
      image: Option.getOrUndefined(input.image),
      namespace: Option.getOrUndefined(input.namespace),
      replicas: Option.getOrUndefined(input.replicas),
      sharding: input.sharding,
      dashboard: input.dashboard,
      alerts: input.alerts
    }, io)).pipe(
      Command.validate((input) =>
        Option.isSome(input.out) && Option.isSome(input.output)
          ? invalid("--out DIR and --output FILE are alternatives: give one")
          : Effect.void
      ),
      Command.withShortDescription(
        "write the manifests an operator needs in a cluster: CRDs, RBAC, ServiceAccount, Deployment"
      ),
      Command.withDescription(
        [
          "Writes the manifests an operator needs in a cluster: its Namespace, CRDs, least-privilege RBAC",
          "(ClusterRole, Role for leader election and events), ServiceAccount, Deployment and metrics Service.",
          "With --sharding the Deployment's replicas each reconcile their share of the objects (main job --sharding).",
          "With --dashboard and --alerts, also a Grafana dashboard, a PrometheusRule and a ServiceMonitor: with --out",
          "DIR in DIR/monitoring/ (kubectl apply -f DIR/monitoring/ where the Prometheus Operator runs) and the",
          "dashboard's JSON in DIR/grafana/ (Grafana: Dashboards, New, Import).",
          "",
          "Then: kubectl apply --server-side -f DIR (or FILE).",
          exitCodes
        ].map((line, i) => i === 0 || line === "" ? line : `  ${line}`).join("\n")
      ),
      Command.withExamples([
        {
          command: "reconcile manifests --out config --image ghcr.io/me/greeting-operator:0.1.0",
          description: "then: kubectl apply --server-side -f config/"
        },
        {
          command: "reconcile manifests --out config --sharding --replicas 5",
          description: "5 replicas, each reconciling its share of the objects"
        },
        {
          command: "reconcile manifests --out config --dashboard --alerts",
          description: "also config/monitoring/*.yaml and config/grafana/<name>.json (Grafana: Import dashboard)"
        },
        { command: "reconcile manifests --entry src/operators.ts --export greeting -o greeting.yaml" }
      ])
    )

/** `reconcile`: its commands. */
const reconcile = (io: Io) =>
  Command.make("reconcile").pipe(
    Command.withDescription(`Ships a Reconcile operator.\n  ${exitCodes}`),
    Command.withSubcommands([manifests(io)])
  )

/** Imports the entry with tsx (TypeScript as is) and returns its Operator exports. */
const load = (entry: string, exportName: string | undefined, cwd: string) =>
  Effect.gen(function*() {
    const file = path.resolve(cwd, entry)
    if (!fs.existsSync(file)) {
      return yield* new CommandError({
        message: `${entry} does not exist: give the module exporting your Operator with --entry PATH`
      })
    }
    const module = yield* Effect.tryPromise({
      try: async () => {
        const { tsImport } = await import("tsx/esm/api")
        return (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>
      },
      catch: (cause) =>
        new CommandError({
          message: `cannot import ${entry}: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    })
    if (exportName !== undefined) {
      const value = module[exportName]
      if (!Operator.isOperator(value)) {
        return yield* new CommandError({
          message: value === undefined
            ? `${entry} has no export "${exportName}"`
            : `the export "${exportName}" of ${entry} is not an Operator (make it with Operator.make)`
        })
      }
      return [value]
    }
    const operators: Array<Operator.Operator<unknown, unknown>> = []
    for (const value of Object.values(module)) {
      if (Operator.isOperator(value) && !operators.includes(value)) operators.push(value)
    }
    if (operators.length === 0) {
      return yield* new CommandError({
        message: `${entry} exports no Operator: export one (export const operator = Operator.make({ … })) or give ` +
          "the module that does with --entry PATH"
      })
    }
    return operators
  })

const identity = (o: Record<string, unknown>) => {
  const metadata = (o.metadata ?? {}) as { readonly name?: string; readonly namespace?: string }
  return `${o.apiVersion}|${o.kind}|${metadata.namespace ?? ""}|${metadata.name ?? ""}`
}

/** Every operator's manifests; an object two operators both generate must be the same. */
const generateAll = (operators: ReadonlyArray<Operator.Operator<unknown, unknown>>, parsed: Parsed) =>
  Effect.gen(function*() {
    const seen = new Map<string, string>()
    const objects: Array<Record<string, unknown>> = []
    for (const operator of operators) {
      const generated = yield* Manifests.generate(operator, {
        image: parsed.image,
        namespace: parsed.namespace,
        replicas: parsed.replicas,
        sharding: parsed.sharding,
        dashboard: parsed.dashboard,
        alerts: parsed.alerts
      }).pipe(Effect.mapError((e) => new CommandError({ message: e.message })))
      for (const o of generated) {
        const key = identity(o)
        const text = JSON.stringify(o)
        const before = seen.get(key)
        if (before === undefined) {
          seen.set(key, text)
          objects.push(o)
        } else if (before !== text) {
          return yield* new CommandError({
            message: `the operators ${operators.map((o) => `"${o.name}"`).join(", ")} generate different ${
              key.split("|").filter((s) => s !== "").slice(1).join(" ")
            }: choose one with --export NAME`
          })
        }
      }
    }
    return objects
  })

const write = (stream: NodeJS.WriteStream) => (text: string) =>
  Effect.callback<void>((resume) => {
    stream.write(text, () => resume(Effect.void))
  })

/**
 * Where the command reads and writes: the process's by default.
 *
 * @internal
 */
export interface Io {
  readonly cwd: string
  readonly stdout: (text: string) => Effect.Effect<void>
  readonly stderr: (text: string) => Effect.Effect<void>
}

const processIo = (): Io => ({ cwd: process.cwd(), stdout: write(process.stdout), stderr: write(process.stderr) })

const writeFiles = (parsed: Parsed, objects: ReadonlyArray<Record<string, unknown>>, cwd: string) =>
  Effect.try({
    try: () => {
      if (parsed.out !== undefined) {
        const dir = path.resolve(cwd, parsed.out)
        fs.mkdirSync(dir, { recursive: true })
        const written: Array<string> = []
        for (const [name, text] of Object.entries(Manifests.files(objects))) {
          fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
          fs.writeFileSync(path.join(dir, name), text)
          written.push(path.join(parsed.out, name))
        }
        return written
      }
      const file = path.resolve(cwd, parsed.output!)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, Manifests.toYaml(objects))
      return [parsed.output!]
    },
    catch: (cause) =>
      new CommandError({ message: `cannot write: ${cause instanceof Error ? cause.message : String(cause)}` })
  })

/** Loads the operators of the entry and writes their manifests. */
const writeManifests = (parsed: Parsed, io: Io) =>
  Effect.gen(function*() {
    const operators = yield* load(parsed.entry, parsed.exportName, io.cwd)
    const objects = yield* generateAll(operators, parsed)
    if (parsed.out === undefined && parsed.output === undefined) {
      return yield* io.stdout(Manifests.toYaml(objects))
    }
    const written = yield* writeFiles(parsed, objects, io.cwd)
    yield* io.stderr(written.map((file) => `wrote ${file}\n`).join(""))
  })

/**
 * `reconcile <argv>`: the exit code (0 written, 1 failed, 2 invalid options); output on the process's streams.
 *
 * @internal
 */
export const main = (argv: ReadonlyArray<string>, io: Io = processIo()): Effect.Effect<number> =>
  Effect.gen(function*() {
    // `--help` and `--completions SHELL` are printed on the Console: through `io`
    const printed: Array<string> = []
    const switchGiven = CommandLine.switchWithValue(argv, switches)
    if (switchGiven !== undefined) {
      return yield* new UsageError({ message: `${switchGiven} takes no value (see reconcile manifests --help)` })
    }
    yield* CommandLine.run(
      reconcile(io),
      argv,
      (message, path) => new UsageError({ message: `${message} (see ${path.join(" ")} --help)` })
    ).pipe(Effect.provideService(Console.Console, CommandLine.capture(printed)))
    if (printed.length > 0) yield* io.stdout(`${printed.join("\n")}\n`)
    return 0
  }).pipe(
    Effect.catchTags({
      UsageError: (e) => Effect.as(io.stderr(`error: ${e.message}\n`), 2),
      CommandError: (e) => Effect.as(io.stderr(`error: ${e.message}\n`), 1)
    })
  )
