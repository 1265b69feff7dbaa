/**
 * Writing a project (`init`) and adding a kind to one (`addKind`), from the
 * files in `templates/`: `templates/init` once per project, `templates/kind`
 * once per kind. File names and contents carry tokens (`__Kind__`,
 * `__group__`, …) replaced by the names; `_gitignore` becomes `.gitignore`
 * (npm never packs a `.gitignore`). Plain Node APIs only: this runs on the
 * Node that `npm create` runs on.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { KindNames } from "./names.js"
import { checkGroup, checkProjectName, kindNames, ScaffoldError } from "./names.js"
import * as versions from "./versions.js"

/** This package's folder (`dist/internal/` and `src/internal/` are both two levels down). */
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

/** The folder of the template sets. */
export const templatesDir = path.join(packageRoot, "templates")

/** This package's version: the `@reconcile/*` packages a project gets are `^` it. */
export const ownVersion = (): string =>
  (JSON.parse(fs.readFileSync(path.join(packageRoot, "package.json"), "utf8")) as { version: string }).version

/** The tokens of the templates, with their values. */
const tokens = (project: string, names: KindNames): Record<string, string> => ({
  name: project,
  Kind: names.Kind,
  kind: `${names.Kind[0]!.toLowerCase()}${names.Kind.slice(1)}`,
  lower: names.lower,
  plural: names.plural,
  group: names.group,
  version: names.version,
  controller: names.controller
})

const render = (text: string, values: Record<string, string>) =>
  text.replace(/__(name|Kind|kind|lower|plural|group|version|controller)__/g, (_, token: string) => values[token]!)

/** Every file of a template set, as paths relative to it (sorted). */
const templateFiles = (set: string): Array<string> => {
  const out: Array<string> = []
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(templatesDir, set, relative), { withFileTypes: true })) {
      const file = path.join(relative, entry.name)
      if (entry.isDirectory()) walk(file)
      else out.push(file)
    }
  }
  walk("")
  return out.sort()
}

/** Where a template file goes in the project. */
const targetPath = (file: string, values: Record<string, string>) =>
  render(file, values).split(path.sep).map((part) => part.startsWith("_") ? `.${part.slice(1)}` : part).join(path.sep)

/** The files of a template set, rendered: project-relative path → content. */
export const renderSet = (set: "init" | "kind", values: Record<string, string>): Map<string, string> =>
  new Map(
    templateFiles(set).map((file) => [
      targetPath(file, values),
      render(fs.readFileSync(path.join(templatesDir, set, file), "utf8"), values)
    ])
  )

/** The `@reconcile/*` packages (and create-reconcile) as they are installed: from the registry, or local tarballs. */
const packageSpecs = (localPackages: string | undefined): Record<string, string> => {
  const names = ["workqueue", "core", "kube", "cli", "testkit"].map((n) => `@reconcile/${n}`).concat("create-reconcile")
  if (localPackages === undefined) return Object.fromEntries(names.map((name) => [name, `^${ownVersion()}`]))
  const dir = path.resolve(localPackages)
  if (!fs.existsSync(dir)) throw new ScaffoldError(`--local-packages ${localPackages}: no such directory`)
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"))
  return Object.fromEntries(names.map((name) => {
    // npm pack names @reconcile/core-0.1.0 reconcile-core-0.1.0.tgz
    const prefix = `${name.replace(/^@/, "").replace("/", "-")}-`
    const matches = files.filter((f) => f.startsWith(prefix) && /^\d/.test(f.slice(prefix.length))).sort()
    if (matches.length === 0) {
      throw new ScaffoldError(`--local-packages ${localPackages}: no tarball of ${name} (${prefix}<version>.tgz)`)
    }
    return [name, `file:${path.join(dir, matches[matches.length - 1]!)}`]
  }))
}

/** The project's package.json. */
export const packageJson = (
  project: string,
  names: KindNames,
  localPackages: string | undefined
): Record<string, unknown> => {
  const ours = packageSpecs(localPackages)
  const pick = (keys: ReadonlyArray<string>) => Object.fromEntries(keys.map((k) => [k, ours[k]!]))
  const sorted = (record: Record<string, string>) =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)))
  return {
    name: project,
    version: "0.1.0",
    private: true,
    type: "module",
    description: `A Kubernetes operator for ${names.Kind} (${names.group}/${names.version}), built with Reconcile`,
    scripts: {
      start: "tsx src/main.ts",
      test: "tsc -p tsconfig.json && vitest run",
      "test:envtest": "reconcile-envtest setup && RECONCILE_TEST_CLUSTER=real vitest run",
      manifests: "reconcile manifests --entry src/operator.ts --out config",
      build: "tsc -p tsconfig.build.json"
    },
    dependencies: sorted({
      ...pick(["@reconcile/cli", "@reconcile/core", "@reconcile/kube", "@reconcile/workqueue"]),
      ...versions.dependencies
    }),
    devDependencies: sorted({ ...pick(["@reconcile/testkit", "create-reconcile"]), ...versions.devDependencies }),
    allowScripts: versions.allowScripts
  }
}

/** What was written. */
export interface Written {
  readonly root: string
  /** Project-relative paths of the files written or changed, sorted. */
  readonly files: ReadonlyArray<string>
  /** Things the user has to do by hand (a marker that was missing). */
  readonly notes: ReadonlyArray<string>
}

/** Options of {@link init}. */
export interface InitOptions {
  /** The project folder; its base name is the project's (and the operator's) name. */
  readonly directory: string
  readonly kind?: string | undefined
  readonly group?: string | undefined
  readonly version?: string | undefined
  /** A folder of `npm pack` tarballs to install our packages from (`file:` references), instead of the registry. */
  readonly localPackages?: string | undefined
}

const writeAll = (root: string, files: Map<string, string>) => {
  for (const [file, content] of files) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), content)
  }
}

/** Writes a new project into `options.directory`, which must not exist or be empty (a `.git` folder may be there). */
export const init = (options: InitOptions): Written => {
  const root = path.resolve(options.directory)
  const project = checkProjectName(path.basename(root))
  const names = kindNames({
    kind: options.kind ?? "Greeting",
    group: options.group ?? "example.com",
    version: options.version ?? "v1"
  }, "controller")
  if (fs.existsSync(root)) {
    if (!fs.statSync(root).isDirectory()) throw new ScaffoldError(`${options.directory} exists and is not a directory`)
    const entries = fs.readdirSync(root).filter((entry) => entry !== ".git")
    if (entries.length > 0) {
      throw new ScaffoldError(
        `${options.directory} is not empty (${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", …" : ""}): ` +
          "choose a new directory"
      )
    }
  }
  const values = tokens(project, names)
  const files = new Map([...renderSet("init", values), ...renderSet("kind", values)])
  files.set("package.json", `${JSON.stringify(packageJson(project, names, options.localPackages), null, 2)}\n`)
  writeAll(root, files)
  return { root, files: [...files.keys()].sort(), notes: [] }
}

/** Options of {@link addKind}. */
export interface AddKindOptions {
  /** The project's folder (default: the current directory). */
  readonly directory?: string | undefined
  readonly kind: string
  /** Default: the group of the project's existing kinds, when they share one. */
  readonly group?: string | undefined
  readonly version?: string | undefined
}

/** The markers `addKind` inserts lines at, per file. */
export const markers = {
  imports: "// create-reconcile api: imports",
  resources: "// create-reconcile api: resources",
  controllers: "// create-reconcile api: controllers",
  layers: "// create-reconcile api: layers",
  samples: "// create-reconcile api: samples"
} as const

/** Inserts `lines` before the marker, indented as the marker is; `undefined` when the marker is missing. */
export const insertAt = (text: string, marker: string, lines: ReadonlyArray<string>): string | undefined => {
  const at = text.indexOf(marker)
  if (at < 0) return undefined
  const lineStart = text.lastIndexOf("\n", at) + 1
  const indent = text.slice(lineStart, at)
  if (indent.trim() !== "") return undefined
  return text.slice(0, lineStart) + lines.map((line) => `${indent}${line}\n`).join("") + text.slice(lineStart)
}

/** The group the project's kinds share (from `group: "…"` in `src/*.ts`), if exactly one. */
const projectGroup = (src: string): string | undefined => {
  const groups = new Set<string>()
  for (const file of fs.readdirSync(src).filter((f) => f.endsWith(".ts"))) {
    for (const match of fs.readFileSync(path.join(src, file), "utf8").matchAll(/\bgroup:\s*"([^"]+)"/g)) {
      groups.add(match[1]!)
    }
  }
  return groups.size === 1 ? [...groups][0] : undefined
}

/**
 * Adds a kind to a project (kubebuilder's `create api`): writes `src/<Kind>.ts`, `src/<kind>Controller.ts` and
 * `test/<kind>Controller.test.ts`, and registers them in `src/operator.ts` (and its sample in `src/main.ts`) at the
 * `create-reconcile api` markers. Nothing is written when a check fails.
 */
export const addKind = (options: AddKindOptions): Written => {
  const root = path.resolve(options.directory ?? ".")
  const src = path.join(root, "src")
  const operatorFile = path.join(src, "operator.ts")
  if (!fs.existsSync(operatorFile)) {
    throw new ScaffoldError(`${root} has no src/operator.ts: run create-reconcile api in a project it created`)
  }
  const group = options.group ?? projectGroup(src)
  if (group === undefined) {
    throw new ScaffoldError("the project's kinds do not share one group: say which with --group")
  }
  const names = kindNames({ kind: options.kind, group: checkGroup(group), version: options.version ?? "v1" }, "perKind")
  const project = path.basename(root)
  const values = tokens(project, names)
  const files = renderSet("kind", values)
  const taken = [...files.keys()].filter((file) => fs.existsSync(path.join(root, file)))
  if (taken.length > 0) throw new ScaffoldError(`${names.Kind} exists already: ${taken.join(", ")}`)

  const kindModule = `./${names.Kind}.js`
  const controllerModule = `./${names.controller}.js`
  let operator: string | undefined = fs.readFileSync(operatorFile, "utf8")
  operator = insertAt(operator, markers.imports, [
    `import { ${names.Kind} } from "${kindModule}"`,
    `import * as ${names.Kind}Controller from "${controllerModule}"`
  ])
  operator = operator && insertAt(operator, markers.resources, [`${names.Kind},`])
  operator = operator && insertAt(operator, markers.controllers, [`${names.Kind}Controller.controller,`])
  operator = operator && insertAt(operator, markers.layers, [`${names.Kind}Controller.layer,`])
  if (operator === undefined) {
    throw new ScaffoldError(
      `src/operator.ts lacks a marker comment (${Object.values(markers).slice(0, 4).join(", ")}): ` +
        `restore them, or register ${names.Kind}, ${names.Kind}Controller.controller and ` +
        `${names.Kind}Controller.layer in Operator.make yourself`
    )
  }
  files.set("src/operator.ts", operator)

  const notes: Array<string> = []
  const mainFile = path.join(src, "main.ts")
  const sample = `${values.kind}Sample`
  let main: string | undefined = fs.existsSync(mainFile) ? fs.readFileSync(mainFile, "utf8") : undefined
  main = main && insertAt(main, markers.imports, [`import { ${sample} } from "${kindModule}"`])
  main = main && insertAt(main, markers.samples, [`${sample}(namespace),`])
  if (main === undefined) notes.push(`src/main.ts has no create-reconcile api markers: add ${sample} to its samples`)
  else files.set("src/main.ts", main)

  writeAll(root, files)
  return { root, files: [...files.keys()].sort(), notes }
}
