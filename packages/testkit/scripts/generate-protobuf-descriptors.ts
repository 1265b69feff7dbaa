/**
 * Writes `src/internal/protobuf/descriptors.generated.ts`, the protobuf message descriptors of the kinds the test
 * API server encodes, from Kubernetes' own sources (run with tsx; `npm test` never runs it, nor needs Go):
 *
 *     go mod download k8s.io/api@v0.0.0-20260724040949-10b39a39bcee \
 *       k8s.io/apimachinery@v0.0.0-20260723070748-eed236ceee2c
 *     npx tsx packages/testkit/scripts/generate-protobuf-descriptors.ts
 *
 * It reads the modules from the Go module cache (`$GOMODCACHE`, else `go env GOMODCACHE`, else `~/go/pkg/mod`);
 * `--api DIR --apimachinery DIR` read checkouts instead (kubernetes/api and kubernetes/apimachinery at the commits
 * below). `--check` compares with the committed file instead of writing it (exit 1 when they differ), `--out FILE`
 * writes elsewhere. To move to other commits, change {@link sources} and regenerate.
 *
 * For each message reachable from {@link roots} (the kinds `envelope.ts` maps, their lists, meta/v1's Status,
 * DeleteOptions, WatchEvent, List and discovery documents, apidiscovery/v2's, the `runtime.Unknown` envelope):
 * - from `generated.proto`: the fields in declaration order (go-to-protobuf keeps the Go struct's), their names
 *   (go-to-protobuf's: the JSON names, and `Raw`/`raw` for the bytes JSON does not carry), numbers and types,
 *   `repeated` and `map<string, T>`;
 * - from the package's Go files (the struct fields with a `protobuf:"…,<number>,…"` tag): embedded structs whose
 *   JSON name is empty (inlined by encoding/json: flag `i`), and non-pointer scalars tagged `omitempty` (flag `z`);
 *   messages that are Go named slices (`type Verbs []string`) are `listWrappers`.
 * Proto packages are shortened as the table names them: `k8s.io.api.core.v1` → `core.v1`,
 * `k8s.io.apimachinery.pkg.apis.meta.v1` → `meta.v1`, `k8s.io.apimachinery.pkg.runtime` → `runtime`.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The modules read, at the commits the table was generated from (the Go pseudo-versions name them). */
const sources = {
  api: { repository: "kubernetes/api", module: "k8s.io/api", version: "v0.0.0-20260724040949-10b39a39bcee" },
  apimachinery: {
    repository: "kubernetes/apimachinery",
    module: "k8s.io/apimachinery",
    version: "v0.0.0-20260723070748-eed236ceee2c"
  }
} as const

/** The messages the test server encodes (`src/internal/protobuf/envelope.ts`); every other one is reached from them. */
const roots: ReadonlyArray<readonly [pkg: string, names: ReadonlyArray<string>, withLists: boolean]> = [
  ["k8s.io.api.core.v1", ["Namespace", "ConfigMap", "Secret", "Service", "Pod", "Event"], true],
  ["k8s.io.api.apps.v1", ["Deployment", "ReplicaSet", "StatefulSet"], true],
  ["k8s.io.api.coordination.v1", ["Lease"], true],
  ["k8s.io.api.events.v1", ["Event"], true],
  ["k8s.io.api.authorization.v1", ["SelfSubjectAccessReview", "SelfSubjectRulesReview"], false],
  ["k8s.io.api.autoscaling.v1", ["Scale"], false],
  ["k8s.io.api.apidiscovery.v2", ["APIGroupDiscoveryList"], false],
  [
    "k8s.io.apimachinery.pkg.apis.meta.v1",
    ["Status", "DeleteOptions", "WatchEvent", "List", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"],
    false
  ],
  ["k8s.io.apimachinery.pkg.runtime", ["Unknown"], false]
]

const here = Path.dirname(fileURLToPath(import.meta.url))
const committed = Path.join(here, "..", "src", "internal", "protobuf", "descriptors.generated.ts")

const fail = (message: string): never => {
  process.stderr.write(`generate-protobuf-descriptors: ${message}\n`)
  process.exit(1)
}

const argument = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i < 0 ? undefined : process.argv[i + 1] ?? fail(`${name} needs a directory`)
}

const moduleCache = (): string => {
  if (process.env.GOMODCACHE !== undefined && process.env.GOMODCACHE !== "") return process.env.GOMODCACHE
  try {
    return execFileSync("go", ["env", "GOMODCACHE"], { encoding: "utf8" }).trim()
  } catch {
    return Path.join(Os.homedir(), "go", "pkg", "mod")
  }
}

/** The source directory of a module: the flag's, else the module cache's copy of the pinned version. */
const sourceDir = (flag: string, source: (typeof sources)[keyof typeof sources]): string => {
  const dir = argument(flag) ?? Path.join(moduleCache(), `${source.module}@${source.version}`)
  if (!Fs.existsSync(Path.join(dir, "go.mod"))) {
    fail(
      `${dir} holds no ${source.module}: run \`go mod download ${source.module}@${source.version}\`, or pass ${flag} ` +
        `with a checkout of ${source.repository} at ${source.version.slice(-12)}`
    )
  }
  // a checkout must be at the pinned commit (a module cache directory is named after it)
  if (Fs.existsSync(Path.join(dir, ".git"))) {
    const head = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim()
    if (!head.startsWith(source.version.slice(-12))) {
      fail(`${dir} is at ${head}, not ${source.version.slice(-12)}`)
    }
  }
  return dir
}

const output = argument("--out") ?? committed
const apiDir = sourceDir("--api", sources.api)
const apimachineryDir = sourceDir("--apimachinery", sources.apimachinery)
{
  const required = /k8s\.io\/apimachinery (\S+)/.exec(Fs.readFileSync(Path.join(apiDir, "go.mod"), "utf8"))?.[1]
  if (required !== sources.apimachinery.version) {
    fail(`${sources.api.module} requires apimachinery ${required}, not ${sources.apimachinery.version}`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// reading

/** The table's name of a proto package: `core.v1`, `meta.v1`, `runtime`, `intstr`, `resource`. */
const shortPackage = (pkg: string): string => {
  if (pkg.startsWith("k8s.io.api.")) return pkg.slice("k8s.io.api.".length)
  const parts = pkg.split(".")
  const apis = parts.indexOf("apis")
  return apis >= 0 ? parts.slice(apis + 1).join(".") : parts[parts.length - 1]!
}

const packageDir = (pkg: string): string =>
  pkg.startsWith("k8s.io.api.")
    ? Path.join(apiDir, ...pkg.slice("k8s.io.api.".length).split("."))
    : pkg.startsWith("k8s.io.apimachinery.")
    ? Path.join(apimachineryDir, ...pkg.slice("k8s.io.apimachinery.".length).split("."))
    : fail(`no sources for the proto package ${pkg}`)

interface ProtoField {
  readonly name: string
  readonly number: number
  readonly type: string
  readonly repeated: boolean
  readonly map: boolean
}

const protoPackages = new Map<string, ReadonlyMap<string, ReadonlyArray<ProtoField>>>()

/** The messages of a package's `generated.proto`, each with its fields in declaration order. */
const protoMessages = (pkg: string): ReadonlyMap<string, ReadonlyArray<ProtoField>> => {
  const known = protoPackages.get(pkg)
  if (known !== undefined) return known
  const text = Fs.readFileSync(Path.join(packageDir(pkg), "generated.proto"), "utf8").replace(/\/\/.*$/gm, "")
  const declared = /^package ([\w.]+);/m.exec(text)?.[1]
  if (declared !== pkg) fail(`${packageDir(pkg)}/generated.proto declares package ${declared}, not ${pkg}`)
  const out = new Map<string, ReadonlyArray<ProtoField>>()
  for (const m of text.matchAll(/^message (\w+) \{([^}]*)\}/gm)) {
    const fields: Array<ProtoField> = []
    const field = /^\s*(optional|repeated)?\s*(map<\s*string\s*,\s*([.\w]+)\s*>|[.\w]+)\s+(\w+)\s*=\s*(\d+)/gm
    for (const f of m[2]!.matchAll(field)) {
      const map = f[3] !== undefined
      fields.push({ name: f[4]!, number: Number(f[5]), type: map ? f[3]! : f[2]!, repeated: f[1] === "repeated", map })
    }
    out.set(m[1]!, fields)
  }
  protoPackages.set(pkg, out)
  return out
}

interface GoField {
  /** The Go type as written (`*int32`, `[]Container`, `metav1.ObjectMeta`). */
  readonly type: string
  /** Without a field name: an embedded struct. */
  readonly embedded: boolean
  /** The JSON tag's name and options (`["name", "omitempty"]`); `undefined` without a JSON tag. */
  readonly json: ReadonlyArray<string> | undefined
}

interface GoPackage {
  /** The fields of each struct, by protobuf field number. */
  readonly structs: ReadonlyMap<string, ReadonlyMap<number, GoField>>
  /** The named slice types (`type Verbs []string`). */
  readonly slices: ReadonlySet<string>
}

const goPackages = new Map<string, GoPackage>()

/** The structs (their protobuf-tagged fields) and named slices of a package's Go files. */
const goPackage = (pkg: string): GoPackage => {
  const known = goPackages.get(pkg)
  if (known !== undefined) return known
  const dir = packageDir(pkg)
  const structs = new Map<string, ReadonlyMap<number, GoField>>()
  const slices = new Set<string>()
  for (const file of Fs.readdirSync(dir).filter((f) => f.endsWith(".go") && !f.endsWith("_test.go")).sort()) {
    const text = Fs.readFileSync(Path.join(dir, file), "utf8")
    for (const m of text.matchAll(/^type (\w+) \[\]/gm)) slices.add(m[1]!)
    for (const m of text.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
      const fields = new Map<number, GoField>()
      for (const line of m[2]!.split("\n")) {
        if (line.trim().startsWith("//")) continue
        const f = /^\s*(?:(\w+)\s+)?([^\s`]+)\s+`([^`]*)`/.exec(line)
        const number = f === null ? null : /protobuf:"\w+,(\d+)/.exec(f[3]!)
        if (f === null || number === null) continue
        const json = /json:"([^"]*)"/.exec(f[3]!)
        fields.set(Number(number[1]), { type: f[2]!, embedded: f[1] === undefined, json: json?.[1]!.split(",") })
      }
      structs.set(m[1]!, fields)
    }
  }
  const out = { structs, slices }
  goPackages.set(pkg, out)
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// the table

type Field = readonly [json: string, number: number, type: string, flags?: string]

const scalars: ReadonlySet<string> = new Set(["string", "int32", "int64", "bool", "bytes", "double", "float"])

const messages = new Map<string, ReadonlyArray<Field>>()
const listWrappers = new Set<string>()

const visit = (pkg: string, name: string): void => {
  const key = `${shortPackage(pkg)}.${name}`
  if (messages.has(key)) return
  const fields = protoMessages(pkg).get(name) ?? fail(`${pkg} has no message ${name}`)
  const out: Array<Field> = []
  messages.set(key, out)
  const go = goPackage(pkg)
  if (go.slices.has(name)) listWrappers.add(key)
  const struct = go.structs.get(name)
  const referenced: Array<readonly [string, string]> = []
  for (const f of fields) {
    let type = f.type
    if (!scalars.has(f.type)) {
      const full = f.type.replace(/^\./, "")
      const dot = full.lastIndexOf(".")
      const [typePkg, typeName] = dot < 0 ? [pkg, full] : [full.slice(0, dot), full.slice(dot + 1)]
      type = `${shortPackage(typePkg)}.${typeName}`
      referenced.push([typePkg, typeName])
    }
    const g = struct?.get(f.number)
    const flags = f.map
      ? "m"
      : f.repeated
      ? "r"
      : g !== undefined && g.embedded && (g.json === undefined || g.json[0] === "")
      ? "i"
      : g !== undefined && scalars.has(f.type) && !g.type.startsWith("*") && g.json?.slice(1).includes("omitempty")
      ? "z"
      : ""
    out.push(flags === "" ? [f.name, f.number, type] : [f.name, f.number, type, flags])
  }
  for (const [typePkg, typeName] of referenced) visit(typePkg, typeName)
}

for (const [pkg, names, withLists] of roots) {
  for (const name of names) {
    visit(pkg, name)
    if (withLists) visit(pkg, `${name}List`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// writing

const commit = (source: (typeof sources)[keyof typeof sources]): string => source.version.slice(-12)

const header = [
  "/**",
  " * The protobuf message descriptors of the built-in kinds the test API server encodes: for each message, its fields",
  " * as `[jsonName, fieldNumber, type, flags?]` in Go declaration order (the order Go's encoding/json writes them).",
  " * GENERATED by `scripts/generate-protobuf-descriptors.ts` from the `generated.proto` files and Go types of",
  ` * ${sources.api.repository} @ ${commit(sources.api)} and ${sources.apimachinery.repository} @ ${
    commit(sources.apimachinery)
  } (meta/v1, runtime, util/intstr,`,
  " * api/resource): do not edit. Regenerate with (Go fetches the sources; `npm test` needs neither)",
  " *",
  ` *     go mod download ${sources.api.module}@${sources.api.version} \\`,
  ` *       ${sources.apimachinery.module}@${sources.apimachinery.version}`,
  " *     npx tsx packages/testkit/scripts/generate-protobuf-descriptors.ts",
  " *",
  " * The messages are those reachable from the kinds `envelope.ts` maps; the discovery messages (meta/v1",
  " * `APIResourceList`…, apidiscovery/v2) were checked against the answers of a real kube-apiserver v1.36.3.",
  " *",
  " * Types: a proto scalar (`string`, `int32`, `int64`, `bool`, `bytes`, `double`) or a message of this table.",
  " * Flags: `r` repeated, `m` map<string, type>, `i` inlined in JSON (Go embedded struct), `z` omitted from JSON",
  " * when zero (Go `omitempty` on a non-pointer). Messages listed in `listWrappers` are Go named slices (JSON: the",
  " * array of their `items`).",
  " *",
  " * @internal",
  " */",
  ""
].join("\n")

const byName = [...messages].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
const field = (f: Field): string => `[${f.map((part) => JSON.stringify(part)).join(", ")}]`
const entry = ([name, fields]: readonly [string, ReadonlyArray<Field>]): string =>
  fields.length === 0
    ? `  ${JSON.stringify(name)}: []`
    : `  ${JSON.stringify(name)}: [\n${fields.map((f) => `    ${field(f)}`).join(",\n")}\n  ]`

const text = `${header}
/** One field: JSON name, field number, type, flags. */
export type Field = readonly [json: string, number: number, type: string, flags?: string]

/** Every message reachable from the served kinds. */
export const messages: Readonly<Record<string, ReadonlyArray<Field>>> = {
${byName.map(entry).join(",\n")}
}

/** Messages that are Go named slices: their JSON form is the array of \`items\`. */
export const listWrappers: ReadonlySet<string> = new Set([${
  [...listWrappers].sort().map((w) => JSON.stringify(w)).join(", ")
}])
`

if (process.argv.includes("--check")) {
  const current = Fs.existsSync(output) ? Fs.readFileSync(output, "utf8") : ""
  if (current !== text) fail(`${Path.relative(process.cwd(), output)} differs from what the sources give`)
  process.stdout.write(`${Path.relative(process.cwd(), output)}: up to date (${messages.size} messages)\n`)
} else {
  Fs.writeFileSync(output, text)
  process.stdout.write(`wrote ${Path.relative(process.cwd(), output)}: ${messages.size} messages\n`)
}
