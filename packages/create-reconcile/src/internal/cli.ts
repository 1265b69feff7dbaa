/**
 * The command line: `create-reconcile <directory> [options]` writes a project,
 * `create-reconcile api --kind K [options]` adds a kind to the project in the
 * current directory, `create-reconcile webhook --kind K --defaulting …` adds
 * a kind's webhooks to it. Exit codes: 0 done, 2 a usage or name error (nothing
 * written), 1 anything else.
 */
import * as path from "node:path"
import { ScaffoldError } from "./names.js"
import { addKind, init } from "./scaffold.js"
import { addWebhooks } from "./webhook.js"

/** The help text. */
export const usage = `Usage:
  npm create reconcile@latest <directory> [-- --kind Greeting --group example.com --version v1]
  create-reconcile <directory> [--kind K] [--group G] [--version V] [--local-packages DIR]
  create-reconcile api --kind K [--group G] [--version V] [--dir PROJECT]
  create-reconcile webhook --kind K [--defaulting] [--validation] [--conversion [--from V]] [--dir PROJECT]

Writes a Kubernetes operator project built with Reconcile into <directory> (new or empty): a custom
resource from effect Schemas, its controller (finalizer, server-side apply of an owned object,
conditions, events), tests (TestKube + TestClock, a property test), the main job (npm start: an
embedded cluster), npm run manifests (CRDs, RBAC, Deployment), a Dockerfile and a README.

\`api\` adds a kind and its controller and test to the project in the current directory (or --dir),
and registers them in src/operator.ts and src/main.ts.

\`webhook\` adds a kind's webhooks to the project: src/<kind>Webhooks.ts (a defaulter, a validator, a
conversion from another version of the kind), test/<kind>Webhooks.test.ts (WebhookChecks), registered
in src/operator.ts's webhooks; npm start serves them, npm run manifests writes their configurations.

Options:
  --kind K              the kind, PascalCase (default Greeting; required for api)
  --group G             the API group, a DNS name (default example.com; for api: the project's group)
  --version V           the API version (default v1)
  --local-packages DIR  install @reconcile/* from the npm pack tarballs in DIR (file: references)
  --dir PROJECT         api, webhook: the project's folder (default: the current directory)
  --defaulting          webhook: a defaulter (a mutating webhook)
  --validation          webhook: a validator (a validating webhook)
  --conversion          webhook: a second version of the kind and a conversion webhook (hub: the kind's version)
  --from V              webhook --conversion: that second version (default v1alpha1)
  -h, --help            this text
`

/** A bad command line: exit 2 with the message and a pointer to --help. */
class UsageError extends Error {}

interface Parsed {
  readonly positional: Array<string>
  readonly options: Map<string, string>
  /** The flags without a value given (`--defaulting`). */
  readonly switches: Set<string>
  readonly help: boolean
}

const valued = new Set(["--kind", "--group", "--version", "--local-packages", "--dir", "--from"])
const switched = new Set(["--defaulting", "--validation", "--conversion"])

/** Parses `--flag value`, `--flag=value`, `--switch` and positional arguments. */
export const parse = (argv: ReadonlyArray<string>): Parsed => {
  const positional: Array<string> = []
  const options = new Map<string, string>()
  const switches = new Set<string>()
  let help = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "-h" || arg === "--help") {
      help = true
      continue
    }
    if (!arg.startsWith("-")) {
      positional.push(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const flag = eq < 0 ? arg : arg.slice(0, eq)
    if (switched.has(flag)) {
      if (eq >= 0) throw new UsageError(`${flag} takes no value`)
      if (switches.has(flag)) throw new UsageError(`${flag} is given twice`)
      switches.add(flag)
      continue
    }
    if (!valued.has(flag)) throw new UsageError(`unknown option ${flag}`)
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1)
    if (value === undefined || value === "" || (eq < 0 && value.startsWith("-"))) {
      throw new UsageError(`${flag} needs a value`)
    }
    if (options.has(flag)) throw new UsageError(`${flag} is given twice`)
    options.set(flag, value)
  }
  return { positional, options, switches, help }
}

/** What the program prints to. */
export interface Output {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

const console_: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`)
}

/** Refuses the options only `command` (`webhook`, `api`) takes. */
const only = (parsed: Parsed, command: string, flags: ReadonlyArray<string>) => {
  const given = flags.find((flag) => parsed.options.has(flag) || parsed.switches.has(flag))
  if (given !== undefined) throw new UsageError(`${given} is an option of create-reconcile ${command}`)
}

const webhookFlags = ["--defaulting", "--validation", "--conversion", "--from"]

const runInit = (parsed: Parsed, output: Output) => {
  if (parsed.positional.length !== 1) {
    throw new UsageError(
      parsed.positional.length === 0 ? "which directory? create-reconcile my-operator" : "one directory only"
    )
  }
  if (parsed.options.has("--dir")) throw new UsageError("--dir is an option of create-reconcile api")
  only(parsed, "webhook", webhookFlags)
  const directory = parsed.positional[0]!
  const written = init({
    directory,
    kind: parsed.options.get("--kind"),
    group: parsed.options.get("--group"),
    version: parsed.options.get("--version"),
    localPackages: parsed.options.get("--local-packages")
  })
  const relative = path.relative(process.cwd(), written.root)
  const cd = relative === "" ? "." : relative.startsWith("..") ? written.root : relative
  output.out(`Created ${written.root} (${written.files.length} files): a Reconcile operator.`)
  output.out("")
  output.out("Next:")
  output.out(`  cd ${cd.includes(" ") ? JSON.stringify(cd) : cd}`)
  output.out("  npm install")
  output.out("  npm start           # the operator on an embedded cluster; it reconciles a sample")
  output.out("  npm test            # typecheck + tests (TestKube, TestClock)")
  output.out("  npm run manifests   # config/: CRDs, RBAC, ServiceAccount, Deployment")
}

const runApi = (parsed: Parsed, output: Output) => {
  if (parsed.positional.length > 1) throw new UsageError(`unexpected argument ${parsed.positional[1]}`)
  if (parsed.options.has("--local-packages")) {
    throw new UsageError("--local-packages is an option of the project scaffold")
  }
  only(parsed, "webhook", webhookFlags)
  const kind = parsed.options.get("--kind")
  if (kind === undefined) throw new UsageError("create-reconcile api needs --kind (e.g. --kind Widget)")
  const written = addKind({
    directory: parsed.options.get("--dir"),
    kind,
    group: parsed.options.get("--group"),
    version: parsed.options.get("--version")
  })
  output.out(`Added ${kind} to ${written.root}:`)
  for (const file of written.files) output.out(`  ${file}`)
  for (const note of written.notes) output.out(`note: ${note}`)
}

const runWebhook = (parsed: Parsed, output: Output) => {
  if (parsed.positional.length > 1) throw new UsageError(`unexpected argument ${parsed.positional[1]}`)
  if (parsed.options.has("--local-packages")) {
    throw new UsageError("--local-packages is an option of the project scaffold")
  }
  only(parsed, "api", ["--group", "--version"])
  const kind = parsed.options.get("--kind")
  if (kind === undefined) throw new UsageError("create-reconcile webhook needs --kind (e.g. --kind Greeting)")
  const written = addWebhooks({
    directory: parsed.options.get("--dir"),
    kind,
    defaulting: parsed.switches.has("--defaulting"),
    validation: parsed.switches.has("--validation"),
    conversion: parsed.switches.has("--conversion"),
    from: parsed.options.get("--from")
  })
  output.out(`Added ${kind}'s webhooks to ${written.root}:`)
  for (const file of written.files) output.out(`  ${file}`)
  output.out("npm test runs their checks; npm start serves them; npm run manifests writes their configurations.")
}

/** Runs the command line; resolves to the exit code. */
export const main = (argv: ReadonlyArray<string>, output: Output = console_): number => {
  try {
    const parsed = parse(argv)
    if (parsed.help) {
      output.out(usage)
      return 0
    }
    if (parsed.positional[0] === "api") runApi(parsed, output)
    else if (parsed.positional[0] === "webhook") runWebhook(parsed, output)
    else runInit(parsed, output)
    return 0
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`error: ${error.message}\n(create-reconcile --help shows the usage)`)
      return 2
    }
    if (error instanceof ScaffoldError) {
      output.err(`error: ${error.message}`)
      return 2
    }
    output.err(`error: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}
