import { Manifests, Operator } from "@reconcile/kube"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

/** @internal */
export const usage = `Usage: reconcile <command> [options]

Commands:
  manifests   write the manifests an operator needs in a cluster: its Namespace, CRDs,
              least-privilege RBAC (ClusterRole, Role for leader election and events),
              ServiceAccount, Deployment and metrics Service

reconcile manifests [options]
  --entry PATH       the TypeScript (or JavaScript) module exporting the Operator
                     (default src/operator.ts); it is imported, so it must not start anything
  --export NAME      the export to use (default: every export that is an Operator)
  --out DIR          write one file per group into DIR (crds.yaml, namespace.yaml,
                     rbac.yaml, workload.yaml)
  -o, --output FILE  write one multi-document YAML file (default: standard output)
  --image IMAGE      the Deployment's container image
  --namespace NS     the operator's namespace (default <name>-system)
  --replicas N       the Deployment's replicas
  -h, --help         this text

Then: kubectl apply --server-side -f DIR (or FILE).
Exit codes: 0 written, 1 the entry or the operator is unusable, 2 invalid options.
`

class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

class CommandError extends Data.TaggedError("CommandError")<{ readonly message: string }> {}

interface Parsed {
  readonly help: boolean
  readonly entry: string
  readonly exportName: string | undefined
  readonly out: string | undefined
  readonly output: string | undefined
  readonly image: string | undefined
  readonly namespace: string | undefined
  readonly replicas: number | undefined
}

const valued: Record<string, keyof Parsed> = {
  "--entry": "entry",
  "--export": "exportName",
  "--out": "out",
  "--output": "output",
  "-o": "output",
  "--image": "image",
  "--namespace": "namespace",
  "--replicas": "replicas"
}

/** @internal */
export const parse = (argv: ReadonlyArray<string>): Effect.Effect<Parsed, UsageError> =>
  Effect.suspend(() => {
    const fail = (message: string) => Effect.fail(new UsageError({ message: `${message} (see reconcile --help)` }))
    if (argv.length === 0) return fail("no command given")
    const [command, ...rest] = argv as [string, ...Array<string>]
    const help = command === "--help" || command === "-h" || rest.includes("--help") || rest.includes("-h")
    const base: Parsed = {
      help: true,
      entry: "src/operator.ts",
      exportName: undefined,
      out: undefined,
      output: undefined,
      image: undefined,
      namespace: undefined,
      replicas: undefined
    }
    if (help) return Effect.succeed(base)
    if (command !== "manifests") return fail(`unknown command "${command}"`)
    const values: Record<string, string> = {}
    for (let i = 0; i < rest.length; i++) {
      const arg = rest[i]!
      const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
      const flag = eq === -1 ? arg : arg.slice(0, eq)
      const key = valued[flag]
      if (key === undefined) {
        return fail(arg.startsWith("-") ? `unknown option ${flag}` : `unexpected argument "${arg}"`)
      }
      const value = eq === -1 ? rest[++i] : arg.slice(eq + 1)
      if (value === undefined || value === "" || (eq === -1 && value.startsWith("-"))) {
        return fail(`${flag} needs a value`)
      }
      if (key in values) return fail(`${flag} is given twice`)
      values[key] = value
    }
    if (values.out !== undefined && values.output !== undefined) {
      return fail("--out DIR and --output FILE are alternatives: give one")
    }
    let replicas: number | undefined
    if (values.replicas !== undefined) {
      if (!/^\d{1,4}$/.test(values.replicas)) {
        return fail(`--replicas must be a whole number, not "${values.replicas}"`)
      }
      replicas = Number(values.replicas)
    }
    return Effect.succeed({
      help: false,
      entry: values.entry ?? base.entry,
      exportName: values.exportName,
      out: values.out,
      output: values.output,
      image: values.image,
      namespace: values.namespace,
      replicas
    })
  })

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
        replicas: parsed.replicas
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

/**
 * `reconcile <argv>`: the exit code (0 written, 1 failed, 2 invalid options); output on the process's streams.
 *
 * @internal
 */
export const main = (argv: ReadonlyArray<string>, io: Io = processIo()): Effect.Effect<number> =>
  Effect.gen(function*() {
    const parsed = yield* parse(argv)
    if (parsed.help) {
      yield* io.stdout(usage)
      return 0
    }
    const operators = yield* load(parsed.entry, parsed.exportName, io.cwd)
    const objects = yield* generateAll(operators, parsed)
    if (parsed.out === undefined && parsed.output === undefined) {
      yield* io.stdout(Manifests.toYaml(objects))
      return 0
    }
    const written = yield* writeFiles(parsed, objects, io.cwd)
    yield* io.stderr(written.map((file) => `wrote ${file}\n`).join(""))
    return 0
  }).pipe(
    Effect.catchTags({
      UsageError: (e) => Effect.as(io.stderr(`error: ${e.message}\n`), 2),
      CommandError: (e) => Effect.as(io.stderr(`error: ${e.message}\n`), 1)
    })
  )
