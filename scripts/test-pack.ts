/**
 * `npm run test:pack`: the packages as a user gets them.
 *
 * 1. Builds every publishable package (a clean `npm run build`) and checks each manifest: `effect` and
 *    `@effect/platform-node` only as peer dependencies with a range, `engines`, `files`, and an `exports`
 *    map with exactly the public modules (every `src/*.ts` but `index.ts`; no `internal/`, no `bin/`,
 *    no source-only condition).
 * 2. `npm pack`s them and checks the tarballs: no `src/`, no tests, every `exports`/`bin` target present,
 *    and no declaration file (`.d.ts`) that points into `src/` or outside its package, nor imports a
 *    subpath of a `@reconcile/*` package that its `exports` map does not list (a missing export).
 * 3. Installs the tarballs into a fresh project in the OS temp folder with `--strict-peer-deps`, next to
 *    `effect@^4.1` and `@effect/platform-node@^4.1` from the registry (a peer conflict fails the install),
 *    and checks that the tree holds exactly one `effect` and one `@effect/platform-node`.
 * 4. Typechecks there (NodeNext, strict) the README's "A controller in one screen" and "Testing a
 *    controller in one screen" (extracted from README.md, never copied by hand) and each package README's
 *    example; the packages' own declarations are also checked with `skipLibCheck: false`.
 * 5. Runs the "testing a controller" snippet as a vitest test, and the controller snippet as a program
 *    against the test API server started with the testkit's `reconcile-apiserver` bin.
 * 6. The scaffold, as `npm create reconcile` runs it: `create-reconcile` (a tool: a bin without exports or
 *    dependencies, checked as such) is run from its tarball (`npm exec --package <tgz>`) with
 *    `--local-packages` pointing at the other tarballs; in the project it writes, `npm install`, `npm test`,
 *    `npm run manifests`, `npm run build`, `npm start` until the sample is Ready, `kubectl apply --server-side
 *    -f config/` to that embedded cluster, then SIGTERM: exit 0 and its kubeconfig removed.
 *
 * Options: `--no-build` packs the current `dist/` (for iterating on this script), `--only-scaffold` packs
 * the current `dist/` and runs step 6 only, `--keep` keeps the temporary folder, `--effect SPEC` /
 * `--platform-node SPEC` install other versions (e.g. `--effect 3.22.4` must fail with a peer conflict),
 * `--readme FILE` takes the two snippets from another Markdown file, `--self-test` only runs the checks
 * above against known-bad inputs.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import type { ChildProcess, SpawnSyncReturns } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const args = process.argv.slice(2)
const flag = (name: string) => args.includes(name)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}

// ---------------------------------------------------------------------------------------------------------------
// Reporting

class CheckFailed extends Error {}

let passed = 0
const step = (title: string) => console.log(`\n▶ ${title}`)
const ok = (what: string) => {
  passed++
  console.log(`  ✓ ${what}`)
}
/** Fails the run with every problem found by one check. */
const verdict = (what: string, problems: ReadonlyArray<string>) => {
  if (problems.length === 0) return ok(what)
  throw new CheckFailed(`${what}:\n${problems.map((p) => `    - ${p}`).join("\n")}`)
}

// ---------------------------------------------------------------------------------------------------------------
// Commands. npm passes its own configuration to scripts as `npm_config_*` variables: the commands run in the
// temporary project get none of them (the repository's .npmrc is not the user's).

const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== "INIT_CWD" && key !== "NODE_OPTIONS") env[key] = value
  }
  return { ...env, ...extra }
}

const run = (
  command: string,
  commandArgs: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv; readonly quiet?: boolean }
): SpawnSyncReturns<string> => {
  console.log(`  $ ${[command, ...commandArgs].join(" ")}${options.cwd === root ? "" : `   (in ${options.cwd})`}`)
  const result = spawnSync(command, commandArgs, {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024
  })
  if (result.error) throw new CheckFailed(`${command}: ${result.error.message}`)
  if (!options.quiet || result.status !== 0) {
    const output = `${result.stdout}${result.stderr}`.trimEnd()
    if (output !== "") console.log(output.replace(/^/gm, "    "))
  }
  return result
}

// ---------------------------------------------------------------------------------------------------------------
// The checks, as pure functions of what they look at (so `--self-test` can feed them known-bad inputs).

interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly engines?: Record<string, string>
  readonly files?: ReadonlyArray<string>
  readonly main?: string
  readonly types?: string
  readonly license?: string
  readonly bin?: Record<string, string>
  readonly exports?: Record<string, string | Record<string, string>>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

const peers = ["effect", "@effect/platform-node"]

/** Problems of a published manifest, given the top-level modules of its `src/`. */
const manifestProblems = (manifest: Manifest, srcModules: ReadonlyArray<string>): Array<string> => {
  const problems: Array<string> = []
  for (const peer of peers) {
    if (manifest.dependencies?.[peer] !== undefined) {
      problems.push(`${peer} is a dependency (a second copy for the user): make it a peerDependency`)
    }
  }
  for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
    if (/^\d/.test(range)) problems.push(`peerDependency ${name} is pinned exactly (${range}): use a range`)
  }
  if (manifest.peerDependencies?.effect === undefined) problems.push("effect is not a peerDependency")
  if (manifest.engines?.node === undefined) problems.push("no engines.node")
  if (manifest.license !== "MIT") problems.push(`license is ${manifest.license}, not MIT`)
  if (manifest.main === undefined || manifest.types === undefined) problems.push("no main/types fallback")
  for (const entry of manifest.files ?? []) {
    if (/(^|\/)(src|test)(\/|$)/.test(entry)) problems.push(`files lists ${entry}`)
  }
  const exports = manifest.exports ?? {}
  for (const [subpath, target] of Object.entries(exports)) {
    if (typeof target === "string") {
      if (subpath !== "./package.json") problems.push(`exports["${subpath}"] has no types condition`)
      continue
    }
    const conditions = Object.keys(target)
    const unknown = conditions.filter((c) => c !== "types" && c !== "default" && c !== "import")
    if (unknown.length > 0) problems.push(`exports["${subpath}"] has the conditions ${unknown.join(", ")}`)
    if (conditions[0] !== "types") problems.push(`exports["${subpath}"]: "types" must come first`)
    if (/internal|bin/.test(subpath) || subpath.includes("*")) problems.push(`exports["${subpath}"] is not public`)
  }
  if (exports["."] === undefined) problems.push(`no exports["."]`)
  if (exports["./package.json"] === undefined) problems.push(`no exports["./package.json"]`)
  for (const module of srcModules) {
    if (exports[`./${module}`] === undefined) problems.push(`src/${module}.ts is not in exports (missing export)`)
  }
  for (const subpath of Object.keys(exports)) {
    const module = subpath.slice(2)
    if (subpath !== "." && subpath !== "./package.json" && !srcModules.includes(module)) {
      problems.push(`exports["${subpath}"] has no src/${module}.ts`)
    }
  }
  return problems
}

/**
 * A tool (a package with a bin and no `exports`: `create-reconcile`) runs on the Node `npm create` runs on, from
 * the npx cache: no dependencies at all, `engines`, a bin, MIT, and what it packs besides `dist/`.
 */
const isTool = (manifest: Manifest) => manifest.exports === undefined && manifest.bin !== undefined

/** Problems of a tool's manifest (see {@link isTool}). */
const toolManifestProblems = (manifest: Manifest): Array<string> => {
  const problems: Array<string> = []
  for (const field of ["dependencies", "peerDependencies"] as const) {
    const names = Object.keys(manifest[field] ?? {})
    if (names.length > 0) problems.push(`${field}: ${names.join(", ")} (a tool runs from the npx cache: none)`)
  }
  if (manifest.engines?.node === undefined) problems.push("no engines.node")
  if (manifest.license !== "MIT") problems.push(`license is ${manifest.license}, not MIT`)
  if (Object.keys(manifest.bin ?? {}).length === 0) problems.push("no bin")
  for (const entry of manifest.files ?? []) {
    if (/(^|\/)(src|test)(\/|$)/.test(entry)) problems.push(`files lists ${entry}`)
  }
  return problems
}

/** Every file an `exports`/`main`/`types`/`bin` entry names. */
const targets = (manifest: Manifest): Array<string> => {
  const files = new Set<string>()
  for (const target of Object.values(manifest.exports ?? {})) {
    for (const file of typeof target === "string" ? [target] : Object.values(target)) files.add(file)
  }
  for (const file of [manifest.main, manifest.types, ...Object.values(manifest.bin ?? {})]) {
    if (file !== undefined) files.add(file)
  }
  return [...files].map((file) => path.posix.normalize(file))
}

/** Problems of a packed file list. */
const fileListProblems = (manifest: Manifest, files: ReadonlyArray<string>): Array<string> => {
  const problems: Array<string> = []
  const set = new Set(files)
  for (const file of files) {
    if (/^(src|test)\//.test(file)) problems.push(`packs ${file}`)
    if (/\.test\.[jt]s$|tsconfig|\.tsbuildinfo$|\.d\.ts\.map$/.test(file)) problems.push(`packs ${file}`)
  }
  for (const file of ["package.json", "README.md", "LICENSE"]) {
    if (!set.has(file)) problems.push(`does not pack ${file}`)
  }
  for (const file of targets(manifest)) {
    if (!set.has(file)) problems.push(`${file} (named by the manifest) is not in the tarball (missing export)`)
  }
  return problems
}

/** The text of a source file without its comments (string literals kept), for declaration files. */
const stripComments = (text: string): string => {
  let out = ""
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    const next = text[i + 1]
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2)
      i = end < 0 ? text.length : end + 2
      out += " "
    } else if (c === "\"" || c === "'" || c === "`") {
      let j = i + 1
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
    } else {
      out += c
      i++
    }
  }
  return out
}

/** The module specifiers of a declaration file (imports, re-exports, import types, references). */
const declarationSpecifiers = (text: string): Array<string> => {
  const code = stripComments(text)
  const found: Array<string> = []
  for (
    const re of [
      /\bfrom\s*["']([^"']+)["']/g,
      /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
      /^\s*import\s*["']([^"']+)["']/gm
    ]
  ) {
    for (const match of code.matchAll(re)) found.push(match[1]!)
  }
  for (const match of text.matchAll(/^\/\/\/\s*<reference\s+(?:path|types)\s*=\s*["']([^"']+)["']/gm)) {
    found.push(match[1]!)
  }
  return found
}

/** The module specifiers of an emitted ES module (tsc prints one declaration per line start). */
const moduleSpecifiers = (text: string): Array<string> => {
  const found: Array<string> = []
  for (
    const re of [
      /^(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gms,
      /^import\s*"([^"]+)"/gm,
      /\bimport\(\s*"([^"]+)"\s*\)/g
    ]
  ) {
    for (const match of text.matchAll(re)) found.push(match[1]!)
  }
  return found
}

const packageOf = (specifier: string) => {
  const parts = specifier.split("/")
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!
  return { name, subpath: specifier.length > name.length ? `.${specifier.slice(name.length)}` : "." }
}

/**
 * Problems of the specifiers of one packed file: `src/` paths, relative paths that leave the package or name
 * a file that is not packed, subpaths of our packages their `exports` do not list, undeclared packages.
 */
const specifierProblems = (
  file: string,
  specifiers: ReadonlyArray<string>,
  context: {
    readonly manifest: Manifest
    readonly files: ReadonlySet<string>
    readonly exportsOf: (name: string) => Manifest["exports"] | undefined
  }
): Array<string> => {
  const problems: Array<string> = []
  const declared = new Set([
    ...Object.keys(context.manifest.dependencies ?? {}),
    ...Object.keys(context.manifest.peerDependencies ?? {}),
    context.manifest.name
  ])
  for (const specifier of specifiers) {
    if (/(^|\/)src\//.test(specifier)) {
      problems.push(`${file} references a src/ path: "${specifier}"`)
      continue
    }
    if (specifier.startsWith(".") || specifier.startsWith("/")) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier))
      if (specifier.startsWith("/") || target.startsWith("..")) {
        problems.push(`${file} references a path outside its package: "${specifier}"`)
        continue
      }
      const candidates = file.endsWith(".d.ts")
        ? [target, target.replace(/\.js$/, ".d.ts"), `${target}.d.ts`, `${target}/index.d.ts`]
        : [target]
      if (!candidates.some((candidate) => context.files.has(candidate))) {
        problems.push(`${file} references "${specifier}", which is not in the tarball`)
      }
      continue
    }
    if (specifier.startsWith("node:") || specifier === "node") continue
    const { name, subpath } = packageOf(specifier)
    if (!declared.has(name)) {
      problems.push(`${file} imports ${name}, which is not a dependency or peerDependency`)
      continue
    }
    const exports = name.startsWith("@reconcile/") ? context.exportsOf(name) : undefined
    if (name.startsWith("@reconcile/") && exports?.[subpath] === undefined) {
      problems.push(`${file} imports "${specifier}": ${name} does not export ${subpath} (missing export)`)
    }
  }
  return problems
}

/** The first ```ts block under the heading `title` (any level) of a Markdown text. */
const snippet = (markdown: string, title: string, source: string): string => {
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => /^#{1,6}\s/.test(line) && line.replace(/^#+\s*/, "").trim() === title)
  if (start < 0) throw new CheckFailed(`${source} has no heading "${title}"`)
  const level = /^#+/.exec(lines[start]!)![0].length
  for (let i = start + 1; i < lines.length; i++) {
    const heading = /^(#{1,6})\s/.exec(lines[i]!)
    if (heading && heading[1]!.length <= level) break
    if (/^```/.test(lines[i]!)) {
      const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line))
      if (end < 0) throw new CheckFailed(`${source}: a code block under "${title}" is not closed`)
      if (/^```(ts|typescript)\s*$/.test(lines[i]!)) return lines.slice(i + 1, end).join("\n") + "\n"
      i = end
    }
  }
  throw new CheckFailed(`${source} has no \`\`\`ts block under "${title}"`)
}

/**
 * Splits the controller snippet into its definitions (everything before the statement that builds the main
 * Layer, `const Main = …`) and the names those definitions declare at top level.
 */
const splitController = (code: string): { readonly definitions: string; readonly names: Array<string> } => {
  const lines = code.split("\n")
  const main = lines.findIndex((line) => /^const Main\b/.test(line))
  if (main < 0) throw new CheckFailed("the controller snippet has no top-level `const Main = …` to split at")
  const definitions = lines.slice(0, main).join("\n")
  const names = [...definitions.matchAll(/^const (\w+)\s*=/gm)].map((m) => m[1]!)
  return { definitions, names }
}

// ---------------------------------------------------------------------------------------------------------------
// --self-test: each check must reject a known-bad input.

const selfTest = () => {
  step("self-test: each check rejects a known-bad input")
  const good: Manifest = {
    name: "@reconcile/x",
    version: "0.1.0",
    license: "MIT",
    engines: { node: ">=22.19" },
    main: "./dist/index.js",
    types: "./dist/index.d.ts",
    files: ["dist/**/*.js", "dist/**/*.d.ts", "README.md", "LICENSE"],
    exports: {
      "./package.json": "./package.json",
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./A": { types: "./dist/A.d.ts", default: "./dist/A.js" }
    },
    dependencies: { "@reconcile/y": "^0.1.0" },
    peerDependencies: { effect: "^4.1.0" }
  }
  const packed = [
    "package.json",
    "README.md",
    "LICENSE",
    "dist/index.js",
    "dist/index.d.ts",
    "dist/A.js",
    "dist/A.d.ts"
  ]
  const context = {
    manifest: good,
    files: new Set(packed),
    exportsOf: (
      name: string
    ) => (name === "@reconcile/y" ? { ".": "./dist/index.js", "./B": "./dist/B.js" } : undefined)
  }
  const expect = (what: string, problems: ReadonlyArray<string>, pattern: RegExp) => {
    if (!problems.some((p) => pattern.test(p))) {
      throw new CheckFailed(`self-test: ${what} was not caught (problems: ${JSON.stringify(problems)})`)
    }
    ok(`${what} → ${problems.find((p) => pattern.test(p))}`)
  }
  if (manifestProblems(good, ["A"]).length > 0 || fileListProblems(good, packed).length > 0) {
    throw new CheckFailed(`self-test: a good manifest was rejected: ${manifestProblems(good, ["A"]).join("; ")}`)
  }
  expect("a module missing from exports", manifestProblems(good, ["A", "C"]), /src\/C\.ts is not in exports/)
  expect(
    "a source-only export condition",
    manifestProblems({
      ...good,
      exports: {
        ...good.exports,
        ".": { "@reconcile/source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" }
      }
    }, ["A"]),
    /conditions @reconcile\/source/
  )
  expect(
    "effect as a dependency",
    manifestProblems({ ...good, dependencies: { effect: "3.22.4" } }, ["A"]),
    /effect is a dependency/
  )
  expect(
    "an exact peer pin",
    manifestProblems({ ...good, peerDependencies: { effect: "4.1.0" } }, ["A"]),
    /pinned exactly/
  )
  expect("src in files", manifestProblems({ ...good, files: ["dist", "src"] }, ["A"]), /files lists src/)
  expect(
    "an export target not packed",
    fileListProblems(good, packed.filter((f) => f !== "dist/A.d.ts")),
    /dist\/A\.d\.ts .*missing export/
  )
  expect("a packed source file", fileListProblems(good, [...packed, "src/A.ts"]), /packs src\/A\.ts/)
  const dts = [
    "/** @example import { X } from \"@reconcile/z\" */",
    "import type * as Core from \"../../core/src/internal/core.js\";",
    "export declare const a: import(\"../src/A.js\").A;",
    "export declare const b: import(\"@reconcile/y/internal/b\").B;",
    "export * from \"./Missing.js\";"
  ].join("\n")
  const specifiers = declarationSpecifiers(dts)
  if (specifiers.includes("@reconcile/z")) throw new CheckFailed("self-test: a specifier inside a comment was read")
  const problems = specifierProblems("dist/A.d.ts", specifiers, context)
  expect("a .d.ts import of ../../core/src/…", problems, /references a src\/ path: "\.\.\/\.\.\/core\/src/)
  expect("a .d.ts import type of ../src/…", problems, /references a src\/ path: "\.\.\/src\/A\.js"/)
  expect("a .d.ts import of a subpath not exported", problems, /does not export \.\/internal\/b/)
  expect("a .d.ts re-export of a file not packed", problems, /"\.\/Missing\.js", which is not in the tarball/)
  expect(
    "a .js import of an undeclared package",
    specifierProblems("dist/A.js", moduleSpecifiers("import * as Y from \"yaml\";\nexport {};\n"), context),
    /imports yaml, which is not a dependency/
  )
  const tool: Manifest = {
    name: "create-x",
    version: "0.1.0",
    license: "MIT",
    engines: { node: ">=18" },
    bin: { "create-x": "dist/bin.js" },
    files: ["dist/**/*.js", "templates/**", "README.md", "LICENSE"]
  }
  if (!isTool(tool) || isTool(good) || toolManifestProblems(tool).length > 0) {
    throw new CheckFailed(`self-test: a good tool was rejected: ${toolManifestProblems(tool).join("; ")}`)
  }
  expect(
    "a tool with a dependency",
    toolManifestProblems({ ...tool, dependencies: { yaml: "^2" } }),
    /dependencies: yaml/
  )
  const readme = "# R\n## A controller in one screen\n\n```ts\nconst G = 1\nconst Main = G\n```\n## Next\n"
  const split = splitController(snippet(readme, "A controller in one screen", "README"))
  if (split.names.join() !== "G") throw new CheckFailed(`self-test: snippet split gave ${split.names.join()}`)
  ok("a README snippet is extracted and split at `const Main`")
  try {
    snippet(readme, "Testing a controller in one screen", "README")
    throw new Error("self-test: a missing snippet was not reported")
  } catch (error) {
    if (!(error instanceof CheckFailed)) throw error
    ok(`a missing README snippet → ${error.message}`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The run

interface Package {
  readonly dir: string
  readonly manifest: Manifest
  readonly srcModules: Array<string>
}

const readJson = <A>(file: string): A => JSON.parse(fs.readFileSync(file, "utf8")) as A

const publishable = (): Array<Package> =>
  fs.readdirSync(path.join(root, "packages")).sort().flatMap((name) => {
    const dir = path.join(root, "packages", name)
    const file = path.join(dir, "package.json")
    if (!fs.existsSync(file)) return []
    const manifest = readJson<Manifest>(file)
    if (manifest.private) return []
    const srcModules = fs.readdirSync(path.join(dir, "src"))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && f !== "index.ts")
      .map((f) => f.slice(0, -3))
      .sort()
    return [{ dir, manifest, srcModules }]
  })

const freePort = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

const waitFor = async (what: string, seconds: number, done: () => boolean, failed: () => string | undefined) => {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    if (done()) return
    const failure = failed()
    if (failure !== undefined) throw new CheckFailed(`${what}: ${failure}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new CheckFailed(`${what}: not within ${seconds} s`)
}

/** A background process whose output is kept (and shown when the run fails). */
const background = (
  name: string,
  command: string,
  commandArgs: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv
) => {
  console.log(`  $ ${[command, ...commandArgs].join(" ")} &   (${name})`)
  const child: ChildProcess = spawn(command, commandArgs, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
  const state = { output: "", exit: undefined as { code: number | null; signal: NodeJS.Signals | null } | undefined }
  child.stdout!.on("data", (chunk: Buffer) => (state.output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (state.output += chunk.toString()))
  child.on("exit", (code, signal) => (state.exit = { code, signal }))
  const stop = async (seconds: number) => {
    if (state.exit === undefined) child.kill("SIGTERM")
    await waitFor(`${name} stops on SIGTERM`, seconds, () => state.exit !== undefined, () => undefined).catch(
      (error) => {
        child.kill("SIGKILL")
        throw error
      }
    )
    return state.exit!
  }
  const show = () => console.log(`  --- output of ${name} ---\n${state.output.trimEnd().replace(/^/gm, "    ")}`)
  return { child, state, stop, show }
}

/** kubectl: on PATH, else where the test machines have it. */
const kubectlBinary = () => {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter).concat("/usr/bin", "/usr/local/bin")) {
    const file = path.join(dir, "kubectl")
    if (dir !== "" && fs.existsSync(file)) return file
  }
  throw new CheckFailed("kubectl is not installed (needed to apply the scaffold's manifests)")
}

/**
 * Step 6: the scaffold from its tarball, as `npm create reconcile@latest demo` runs it (`npm create` is `npm exec`
 * of the package's bin), with our packages from the tarballs; then the project's own scripts, as its README says.
 */
const scaffoldStep = async (
  tmp: string,
  tarballs: string,
  packed: ReadonlyArray<{ readonly name: string; readonly filename: string }>,
  children: Array<ReturnType<typeof background>>
) => {
  const tool = packed.find((entry) => entry.name === "create-reconcile")
  if (tool === undefined) throw new CheckFailed("create-reconcile was not packed")
  const parent = path.join(tmp, "scaffold")
  const demo = path.join(parent, "demo")
  fs.mkdirSync(parent)
  step(`the scaffold: create-reconcile from ${tool.filename}, in ${parent}`)
  const create = run("npm", [
    "exec",
    "--yes",
    "--package",
    path.join(tarballs, tool.filename),
    "--",
    "create-reconcile",
    "demo",
    "--local-packages",
    tarballs
  ], { cwd: parent })
  if (create.status !== 0) throw new CheckFailed("create-reconcile failed (see above)")
  const pkg = readJson<{ dependencies: Record<string, string>; devDependencies: Record<string, string> }>(
    path.join(demo, "package.json")
  )
  const ours = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }).filter(([name]) =>
    name.startsWith("@reconcile/") || name === "create-reconcile"
  )
  verdict(
    `npm exec --package ${tool.filename} -- create-reconcile demo --local-packages …: our packages as file: tarballs`,
    ours.filter(([, spec]) => !spec.startsWith(`file:${tarballs}`)).map(([name, spec]) => `${name}: ${spec}`)
  )
  for (const file of ["src/operator.ts", "src/main.ts", "test/controller.test.ts", "Dockerfile", "README.md"]) {
    if (!fs.existsSync(path.join(demo, file))) throw new CheckFailed(`the scaffold did not write ${file}`)
  }

  const install = run("npm", ["install", "--no-audit", "--no-fund"], { cwd: demo })
  if (install.status !== 0) throw new CheckFailed("npm install in the scaffolded project failed (see above)")
  ok("npm install (the tarballs, effect and the dev tools from the registry)")
  const node = run("npm", ["exec", "--", "node", "--version"], { cwd: demo, quiet: true })
  verdict(
    `its npm scripts run on Node 24 (the node devDependency): ${node.stdout.trim()}`,
    /^v24\./.test(node.stdout.trim()) ? [] : [`npm exec -- node --version printed ${node.stdout.trim()}`]
  )
  const test = run("npm", ["test"], { cwd: demo })
  verdict("npm test (typecheck + its tests)", test.status === 0 ? [] : ["npm test failed (see above)"])
  const manifests = run("npm", ["run", "manifests"], { cwd: demo })
  const config = path.join(demo, "config")
  const yamls = fs.existsSync(config) ? fs.readdirSync(config).filter((f) => /\.ya?ml$/.test(f)) : []
  verdict(
    `npm run manifests: config/ ${yamls.join(", ")}`,
    manifests.status !== 0
      ? ["npm run manifests failed (see above)"]
      : yamls.length === 0
      ? ["config/ has no YAML file"]
      : []
  )

  const build = run("npm", ["run", "build"], { cwd: demo })
  verdict(
    "npm run build (dist/, what the Dockerfile runs)",
    build.status === 0 && fs.existsSync(path.join(demo, "dist", "main.js")) ? [] : ["npm run build failed (see above)"]
  )

  // `npm start`'s command as npm runs it (node_modules/.bin first on PATH: Node 24 and tsx), without npm in between:
  // npm answers a SIGTERM by dying of it, whatever the operator's exit code
  const scripts = readJson<{ scripts: Record<string, string> }>(path.join(demo, "package.json")).scripts
  const [command, ...commandArgs] = scripts.start!.split(" ")
  const bin = path.join(demo, "node_modules", ".bin")
  const start = background(
    `npm start (${scripts.start})`,
    path.join(bin, command!),
    commandArgs,
    demo,
    cleanEnv({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` })
  )
  children.push(start)
  await waitFor(
    "npm start: the sample is Ready",
    90,
    () => /✓ .* is Ready/.test(start.state.output),
    () => start.state.exit && `exited (${JSON.stringify(start.state.exit)})`
  )
  ok("npm start: the embedded cluster, the CRD, the sample reconciled to Ready")

  // `npm run manifests`' output applies to the embedded cluster npm start runs (its "Try it" lines name the kubeconfig)
  await waitFor(
    "npm start prints the embedded cluster's kubeconfig",
    30,
    () => /KUBECONFIG=(\S+) kubectl/.test(start.state.output),
    () => start.state.exit && `exited (${JSON.stringify(start.state.exit)})`
  )
  const kubeconfig = /KUBECONFIG=(\S+) kubectl/.exec(start.state.output)![1]!
  const home = path.join(tmp, "kubectl-home")
  fs.mkdirSync(home, { recursive: true })
  const kubectl = (...kubectlArgs: ReadonlyArray<string>) =>
    run(kubectlBinary(), ["--kubeconfig", kubeconfig, "--cache-dir", path.join(home, "cache"), ...kubectlArgs], {
      cwd: demo,
      env: { PATH: process.env.PATH ?? "", HOME: home }
    })
  const applied = kubectl("apply", "--server-side", "-f", "config/")
  verdict(
    "kubectl apply --server-side -f config/ (to npm start's embedded cluster)",
    applied.status === 0 ? [] : ["kubectl apply failed (see above)"]
  )
  const served = kubectl(
    "get",
    "customresourcedefinitions/greetings.example.com",
    "deployments/demo",
    "-n",
    "demo-system",
    "-o",
    "name"
  )
  verdict(
    "the Greeting CRD and the operator's Deployment are there",
    served.status === 0 ? [] : ["kubectl get crd greetings.example.com / deployment demo failed"]
  )

  const exit = await start.stop(20)
  verdict(
    `npm start stops on SIGTERM (exit code ${exit.code}, signal ${exit.signal})`,
    exit.code === 0 ? [] : ["it did not exit with 0 after SIGTERM: see its output"]
  )
  if (exit.code !== 0) start.show()
  children.splice(children.indexOf(start), 1)
  verdict(
    "its kubeconfig (holding the embedded cluster's token) is removed on exit",
    fs.existsSync(kubeconfig) ? [`${kubeconfig} is still there`] : []
  )
}

const main = async () => {
  if (flag("--self-test")) return selfTest()
  const rootManifest = readJson<{ devDependencies: Record<string, string> }>(path.join(root, "package.json"))
  const all = publishable()
  const packages = all.filter((p) => !isTool(p.manifest))
  const byName = new Map(all.map((p) => [p.manifest.name, p]))
  const onlyScaffold = flag("--only-scaffold")

  step(`manifests of ${all.map((p) => p.manifest.name).join(", ")}`)
  for (const p of all) {
    if (isTool(p.manifest)) verdict(`${p.manifest.name}: manifest (a tool)`, toolManifestProblems(p.manifest))
    else verdict(`${p.manifest.name}: manifest and exports map`, manifestProblems(p.manifest, p.srcModules))
  }

  if (!flag("--no-build") && !onlyScaffold) {
    step("clean build")
    for (const p of all) {
      fs.rmSync(path.join(p.dir, "dist"), { recursive: true, force: true })
      fs.rmSync(path.join(p.dir, ".tsbuildinfo", "src.tsbuildinfo"), { force: true })
    }
    const build = run("npm", ["run", "build"], { cwd: root, env: process.env })
    if (build.status !== 0) throw new CheckFailed("npm run build failed (see above)")
    ok("npm run build")
  }

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "reconcile-pack-"))
  const tarballs = path.join(tmp, "tarballs")
  const project = path.join(tmp, "project")
  fs.mkdirSync(tarballs)
  fs.mkdirSync(project)
  const children: Array<ReturnType<typeof background>> = []
  try {
    step(`npm pack into ${tarballs}`)
    const pack = run("npm", [
      "pack",
      "--json",
      "--pack-destination",
      tarballs,
      ...all.flatMap((p) => ["-w", path.relative(root, p.dir)])
    ], {
      cwd: root,
      env: cleanEnv(),
      quiet: true
    })
    if (pack.status !== 0) throw new CheckFailed("npm pack failed (see above)")
    const packed = JSON.parse(pack.stdout) as Array<{ name: string; filename: string; files: Array<{ path: string }> }>
    for (const entry of packed) {
      const p = byName.get(entry.name)!
      const tool = isTool(p.manifest)
      // a tool's templates are a project's files (its tsconfig.json, its tests): not checked as the package's own
      const files = entry.files.map((f) => f.path).filter((f) => !(tool && f.startsWith("templates/")))
      verdict(
        `${entry.name}: ${entry.filename}, ${entry.files.length} files`,
        fileListProblems(p.manifest, files).concat(
          tool && files.length === entry.files.length ? ["no templates/ packed"] : []
        )
      )
      const unpacked = path.join(tmp, "unpacked", entry.name)
      fs.mkdirSync(unpacked, { recursive: true })
      execFileSync("tar", ["-xzf", path.join(tarballs, entry.filename), "-C", unpacked, "--strip-components=1"])
      const context = {
        manifest: p.manifest,
        files: new Set(files),
        exportsOf: (name: string) => byName.get(name)?.manifest.exports
      }
      const problems = files.flatMap((file) => {
        const text = () => fs.readFileSync(path.join(unpacked, file), "utf8")
        return file.endsWith(".d.ts")
          ? specifierProblems(file, declarationSpecifiers(text()), context)
          : file.endsWith(".js")
          ? specifierProblems(file, moduleSpecifiers(text()), context)
          : []
      })
      for (const file of files.filter((f) => /\.(js|d\.ts)$/.test(f))) {
        const map = /^\/\/# sourceMappingURL=(\S+)\s*$/m.exec(fs.readFileSync(path.join(unpacked, file), "utf8"))?.[1]
        const target = map && path.posix.join(path.posix.dirname(file), map)
        if (target && !context.files.has(target)) {
          problems.push(`${file} names the source map ${map}, which is not packed`)
        }
      }
      for (const [name, file] of Object.entries(p.manifest.bin ?? {})) {
        if (!fs.readFileSync(path.join(unpacked, file), "utf8").startsWith("#!/usr/bin/env node")) {
          problems.push(`bin ${name} (${file}) does not start with #!/usr/bin/env node`)
        }
      }
      verdict(
        `${entry.name}: declarations and modules reference only packed files, dependencies and exported subpaths`,
        problems
      )
    }

    if (onlyScaffold) {
      await scaffoldStep(tmp, tarballs, packed, children)
      return
    }

    step(`a fresh project: ${project}`)
    const effect = option("--effect") ?? "^4.1"
    const dev = (name: string) => {
      const version = rootManifest.devDependencies[name]
      if (version === undefined) throw new CheckFailed(`the root package.json has no devDependency ${name}`)
      return version
    }
    fs.writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify(
        {
          name: "reconcile-pack-test",
          private: true,
          type: "module",
          dependencies: {
            ...Object.fromEntries(
              packed.filter((entry) => !isTool(byName.get(entry.name)!.manifest)).map((
                entry
              ) => [entry.name, `file:../tarballs/${entry.filename}`])
            ),
            effect,
            "@effect/platform-node": option("--platform-node") ?? "^4.1"
          },
          devDependencies: Object.fromEntries(
            ["typescript", "vitest", "@effect/vitest", "@types/node"].map((n) => [n, dev(n)])
          )
        },
        null,
        2
      )
    )
    const install = run("npm", ["install", "--strict-peer-deps", "--no-audit", "--no-fund"], { cwd: project })
    if (install.status !== 0) {
      const output = `${install.stdout}${install.stderr}`
      throw new CheckFailed(
        /ERESOLVE|peer/i.test(output)
          ? `peer dependency conflict: npm install --strict-peer-deps with effect@${effect} failed (see above)`
          : "npm install failed (see above)"
      )
    }
    ok(`npm install --strict-peer-deps: the tarballs with effect@${effect} and @effect/platform-node from the registry`)
    for (const name of peers) {
      const ls = run("npm", ["ls", name, "--all", "--parseable"], { cwd: project, quiet: true })
      const copies = [...new Set(ls.stdout.split("\n").filter((l) => l.trim() !== ""))]
      const version = (dir: string) => readJson<{ version: string }>(path.join(dir, "package.json")).version
      verdict(
        `one copy of ${name} in the tree (${copies.map((dir) => version(dir)).join(", ")})`,
        copies.length === 1
          ? []
          : [
            `${copies.length} copies: ${
              copies.map((dir) => `${path.relative(project, dir)}@${version(dir)}`).join(", ")
            }`
          ]
      )
    }
    const ls = run("npm", ["ls", "--all"], { cwd: project, quiet: true })
    verdict(
      "npm ls --all: no missing or invalid (peer) dependency",
      ls.status === 0 ? [] : ["npm ls --all failed (see above)"]
    )

    step("the README's examples, typechecked (NodeNext, strict)")
    const readme = fs.readFileSync(option("--readme") ?? path.join(root, "README.md"), "utf8")
    const controller = snippet(readme, "A controller in one screen", "README.md")
    const testing = snippet(readme, "Testing a controller in one screen", "README.md")
    const { definitions, names } = splitController(controller)
    const src = path.join(project, "src")
    fs.mkdirSync(path.join(src, "examples"), { recursive: true })
    fs.mkdirSync(path.join(project, "test"))
    fs.writeFileSync(path.join(src, "main.ts"), controller)
    fs.writeFileSync(path.join(src, "greeting.ts"), `${definitions}\nexport { ${names.join(", ")} }\n`)
    fs.copyFileSync(path.join(root, "scripts", "test-pack", "harness.ts"), path.join(src, "harness.ts"))
    fs.writeFileSync(
      path.join(project, "test", "readme.test.ts"),
      // the import goes last (imports are hoisted) so that line numbers are the snippet's
      `${testing}import { ${names.join(", ")} } from "../src/greeting.js"\n`
    )
    for (const p of packages) {
      const name = path.basename(p.dir)
      fs.writeFileSync(
        path.join(src, "examples", `${name}.ts`),
        snippet(fs.readFileSync(path.join(p.dir, "README.md"), "utf8"), p.manifest.name, `${name}/README.md`)
      )
    }
    const compilerOptions = {
      target: "ES2022",
      lib: ["ES2022"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      types: ["node"],
      rootDir: ".",
      outDir: "build",
      skipLibCheck: true
    }
    fs.writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions, include: ["src", "test"] }, null, 2)
    )
    fs.writeFileSync(
      path.join(project, "tsconfig.libcheck.json"),
      JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { skipLibCheck: false, noEmit: true } }, null, 2)
    )
    const tsc = path.join(project, "node_modules", "typescript", "bin", "tsc")
    const typecheck = run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project })
    verdict(
      `TypeScript ${dev("typescript")}: src/main.ts (the controller snippet), test/readme.test.ts (the testing ` +
        "snippet), src/examples/* (the packages' READMEs)",
      typecheck.status === 0 ? [] : ["type errors (see above)"]
    )
    const libcheck = spawnSync(process.execPath, [tsc, "-p", "tsconfig.libcheck.json"], {
      cwd: project,
      encoding: "utf8"
    })
    const errors = `${libcheck.stdout}`.split("\n").filter((line) => /error TS\d+/.test(line))
    const ours = errors.filter((line) => /node_modules\/@reconcile\//.test(line))
    const others = new Set(
      errors.filter((line) => !ours.includes(line)).map((line) =>
        /^node_modules\/((@[^/]+\/)?[^/]+)/.exec(line)?.[1] ?? line
      )
    )
    verdict(
      `our declaration files typecheck with skipLibCheck: false${
        others.size > 0 ? ` (errors in ${[...others].join(", ")} not ours, ignored)` : ""
      }`,
      ours
    )

    step("the README's test, run with vitest")
    const vitest = run(process.execPath, [
      path.join(project, "node_modules", "vitest", "vitest.mjs"),
      "run",
      "--dir",
      "test"
    ], {
      cwd: project
    })
    verdict("vitest run test/readme.test.ts", vitest.status === 0 ? [] : ["the test failed (see above)"])

    step("the README's controller, run against the test API server (the testkit's bin)")
    const port = Number(/metricsPort:\s*(\d+)/.exec(controller)?.[1] ?? 0)
    if (port !== 0 && !(await freePort(port))) {
      throw new CheckFailed(`port ${port} (the snippet's metricsPort) is in use on 127.0.0.1`)
    }
    // the testkit has two bins (reconcile-apiserver, reconcile-envtest): npx runs each by its name
    for (
      const [bin, expected] of [["reconcile-apiserver", /--port/], ["reconcile-envtest", /setup \[--force\]/]] as const
    ) {
      const npx = run("npx", ["--no", "--", bin, "--help"], { cwd: project, quiet: true })
      const usage = `${npx.stdout}${npx.stderr}`
      verdict(
        `npx ${bin} --help runs the testkit's bin`,
        expected.test(usage) ? [] : [`no usage line (exit ${npx.status}): ${usage}`]
      )
    }
    const kubeconfig = path.join(tmp, "kubeconfig")
    const bin = path.join(project, "node_modules", ".bin", "reconcile-apiserver")
    const env = cleanEnv({ KUBECONFIG: kubeconfig })
    const apiserver = background("reconcile-apiserver", bin, ["--port", "0", "--kubeconfig", kubeconfig], project, env)
    children.push(apiserver)
    await waitFor(
      "reconcile-apiserver writes the kubeconfig",
      30,
      () => fs.existsSync(kubeconfig) && fs.statSync(kubeconfig).size > 0,
      () => apiserver.state.exit && `exited (${JSON.stringify(apiserver.state.exit)})`
    )
    ok("reconcile-apiserver (the bin) --port 0 --kubeconfig … serves")
    const harness = (mode: string) =>
      run(process.execPath, ["build/src/harness.js", mode, String(port)], { cwd: project, env })
    if (harness("setup").status !== 0) throw new CheckFailed("the harness could not install the CRD (see above)")
    const controllerProcess = background(
      "the controller snippet (build/src/main.js)",
      process.execPath,
      ["build/src/main.js"],
      project,
      env
    )
    children.push(controllerProcess)
    const check = harness("check")
    if (check.status !== 0) throw new CheckFailed("the controller did not reconcile the Greeting (see above)")
    ok("the controller reconciles a Greeting into its ConfigMap; /healthz and /metrics answer")
    // The README runs the Manager with `runMain({ teardown: Manager.teardown })`: a graceful stop exits 0
    // (effect 4's default would be 130 for an interrupt).
    const exit = await controllerProcess.stop(15)
    verdict(
      `the controller shuts down gracefully on SIGTERM (exit code ${exit.code}, signal ${exit.signal})`,
      exit.code === 0 ? [] : ["it did not exit with 0 after SIGTERM: see its output"]
    )
    if (exit.code !== 0) controllerProcess.show()
    await apiserver.stop(15)
    children.length = 0

    await scaffoldStep(tmp, tarballs, packed, children)
  } catch (error) {
    for (const child of children) child.show()
    throw error
  } finally {
    for (const child of children) child.child.kill("SIGKILL")
    if (flag("--keep")) console.log(`\n(kept ${tmp})`)
    else fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().then(
  () => console.log(`\ntest:pack: all ${passed} checks passed`),
  (error: unknown) => {
    if (error instanceof CheckFailed) {
      console.error(`\n✗ test:pack failed after ${passed} passed checks: ${error.message}`)
    } else {
      console.error(error)
    }
    process.exit(1)
  }
)
