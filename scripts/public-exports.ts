/**
 * `npx tsx scripts/public-exports.ts [repoDir|listing.json] [--json] [--entries] [--diff <otherRepoDir|listing.json>]`:
 * the public API of the published packages, read from their TypeScript sources with the compiler API.
 *
 * For every package under `packages/*` that is not `private`, every entry point of its package.json `exports`
 * map is read as a source module: the `types` target `./dist/X.d.ts` is `src/X.ts` (so `"."` is
 * `src/index.ts`); `./package.json` and other non-module targets are skipped. Each package gets one Program
 * over its `src` files with the compiler options of its `tsconfig.src.json` (else `tsconfig.json`, else the
 * repository's `tsconfig.base.json`), without its project references so that `@reconcile/*` imports resolve
 * to sources through the `paths` of `tsconfig.base.json`. The names of an entry point are
 * `checker.getExportsOfModule(checker.getSymbolAtLocation(sourceFile))`: an `export * as X from "./X.js"` in
 * `index.ts` is one name, `X`, of kind `namespace`. A kind is `class`, `function`, `value`, `type` or
 * `namespace`, joined with `+` when one name has several meanings (`const X` and `type X`: `value+type`); a
 * type-only re-export (`export type { X }`) only has its type meaning.
 *
 * Output: a summary per package (entry points, exported names summed over the entry points, and how many of
 * them are in `"."`); `--entries` adds a line per entry point; `--json` prints the full listing instead
 * (which can be read back in place of a repository, here or after `--diff`).
 *
 * `--diff OTHER` compares OTHER (before) with the repository (after): per package the counts before and
 * after, the entry points added and removed, and the names added, removed, moved (gone from entry point A
 * and new in entry point B of the same package) and whose kind changed. With `--json` the diff is JSON.
 *
 * repoDir defaults to the repository holding this script. It only needs the TypeScript sources and a
 * `node_modules` for the imports of `effect` etc. (a symlink to another checkout's is enough).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

// ---------------------------------------------------------------------------------------------------------------
// The listing

type Kind = "class" | "function" | "value" | "type" | "namespace"
const kindOrder: ReadonlyArray<Kind> = ["class", "function", "value", "type", "namespace"]

interface ExportedName {
  readonly name: string
  /** The kinds joined with `+`, in the order of `kindOrder`; `unresolved` if the alias leads nowhere. */
  readonly kind: string
  /** Present (true) for a name re-exported with `export type`. */
  readonly typeOnly?: true
  /** The file declaring it, relative to the repository (`node_modules/...` for a dependency). */
  readonly from: string
}

interface EntryPoint {
  /** The key in `exports`: `"."`, `"./Controller"`. */
  readonly subpath: string
  /** The source module, relative to the package: `src/Controller.ts`. */
  readonly file: string
  readonly missing?: true
  readonly exports: ReadonlyArray<ExportedName>
}

interface PackageListing {
  readonly name: string
  readonly version: string | undefined
  /** Relative to the repository: `packages/core`. */
  readonly dir: string
  readonly note?: string
  readonly entryPoints: ReadonlyArray<EntryPoint>
}

interface Listing {
  readonly repo: string
  readonly commit: string | undefined
  /** Files changed (or untracked) under `packages/` in the work tree when it was read. */
  readonly uncommittedFilesUnderPackages: number | undefined
  readonly typescript: string
  readonly packages: ReadonlyArray<PackageListing>
}

const warnings: Array<string> = []
const warn = (message: string) => {
  warnings.push(message)
  console.error(`warning: ${message}`)
}

const readJson = (file: string): any => JSON.parse(fs.readFileSync(file, "utf8"))

const git = (repo: string, gitArgs: ReadonlyArray<string>): string | undefined => {
  try {
    return execFileSync("git", ["-C", repo, ...gitArgs], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
  } catch {
    return undefined
  }
}

/** A file's path for the listing: relative to the repository, or from `node_modules/` for a dependency. */
const displayPath = (repo: string, file: string): string => {
  const i = file.lastIndexOf("/node_modules/")
  if (i >= 0) return file.slice(i + 1)
  return path.relative(repo, file).split(path.sep).join("/")
}

/** The `types` target of one `exports` value (a string, or nested conditions), else its `default`/`import`. */
const typesTarget = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined
  const conditions = value as Record<string, unknown>
  for (const condition of ["types", "import", "default"]) {
    if (condition in conditions) {
      const target = typesTarget(conditions[condition])
      if (target !== undefined) return target
    }
  }
  return undefined
}

/** `./dist/X.d.ts` (or `./dist/X.js`) → `src/X.ts`; undefined for a target that is not a module. */
const sourceOf = (target: string, outDir: string, rootDir: string): string | undefined => {
  const relative = target.replace(/^\.\//, "")
  const match = /^(.*?)(\.d\.ts|\.d\.mts|\.d\.cts|\.js|\.mjs|\.cjs)$/.exec(relative)
  if (match === null) return undefined
  const extension =
    { ".d.ts": ".ts", ".d.mts": ".mts", ".d.cts": ".cts", ".js": ".ts", ".mjs": ".mts", ".cjs": ".cts" }[
      match[2] as ".d.ts"
    ]
  const stem = match[1]!
  const inSrc = stem === outDir ? rootDir : stem.startsWith(`${outDir}/`) ? rootDir + stem.slice(outDir.length) : stem
  return inSrc + extension
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => "\n"
}

/** The package's compiler options, with nothing to emit and no project references. */
const compilerOptionsOf = (
  repo: string,
  packageDir: string
): { options: ts.CompilerOptions; fileNames: Array<string> } => {
  const candidates = [
    path.join(packageDir, "tsconfig.src.json"),
    path.join(packageDir, "tsconfig.json"),
    path.join(repo, "tsconfig.base.json")
  ]
  const configFile = candidates.find((f) => fs.existsSync(f))
  let options: ts.CompilerOptions = {}
  let fileNames: Array<string> = []
  if (configFile !== undefined) {
    const parsed = ts.getParsedCommandLineOfConfigFile(configFile, {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => warn(ts.formatDiagnostic(d, formatHost).trim())
    })
    if (parsed !== undefined) {
      options = parsed.options
      fileNames = parsed.fileNames.filter((f) => path.resolve(f).startsWith(path.join(packageDir, "src") + path.sep))
    }
  }
  const {
    composite: _composite,
    declaration: _declaration,
    declarationMap: _declarationMap,
    incremental: _incremental,
    tsBuildInfoFile: _tsBuildInfoFile,
    ...rest
  } = options
  return { options: { ...rest, noEmit: true }, fileNames }
}

/**
 * A compiler host sharing parsed files between the packages' Programs (the dependencies' declarations are
 * parsed once), as the language service's document registry does: the packages' options are alike.
 */
const sourceFiles = new Map<string, ts.SourceFile | undefined>()
const cachingHost = (options: ts.CompilerOptions): ts.CompilerHost => {
  const host = ts.createCompilerHost(options, true)
  const getSourceFile = host.getSourceFile
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreate) => {
    const version = typeof languageVersionOrOptions === "object"
      ? `${languageVersionOrOptions.languageVersion}:${languageVersionOrOptions.impliedNodeFormat}`
      : String(languageVersionOrOptions)
    const key = `${fileName}|${version}`
    if (!sourceFiles.has(key)) {
      sourceFiles.set(key, getSourceFile.call(host, fileName, languageVersionOrOptions, onError, shouldCreate))
    }
    return sourceFiles.get(key)
  }
  return host
}

/** Whether an alias (or an alias it leads to) is a type-only import or export. */
const isTypeOnlyAlias = (checker: ts.TypeChecker, symbol: ts.Symbol): boolean => {
  const seen = new Set<ts.Symbol>()
  let current: ts.Symbol | undefined = symbol
  while (current !== undefined && (current.flags & ts.SymbolFlags.Alias) !== 0 && !seen.has(current)) {
    seen.add(current)
    for (const d of current.declarations ?? []) {
      if (ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)) return true
      if (ts.isNamespaceExport(d) && d.parent.isTypeOnly) return true
      if (ts.isImportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)) return true
      if (ts.isImportClause(d) && d.isTypeOnly) return true
      if (ts.isNamespaceImport(d) && d.parent.isTypeOnly) return true
      if (ts.isImportEqualsDeclaration(d) && d.isTypeOnly) return true
    }
    current = checker.getImmediateAliasedSymbol(current)
  }
  return false
}

const kindsOf = (symbol: ts.Symbol): Set<Kind> => {
  const f = symbol.flags
  const kinds = new Set<Kind>()
  if (f & ts.SymbolFlags.Class) kinds.add("class")
  if (f & ts.SymbolFlags.Function) kinds.add("function")
  if (f & (ts.SymbolFlags.Variable | ts.SymbolFlags.Enum)) {
    kinds.add("value")
  }
  if (f & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Enum | ts.SymbolFlags.TypeParameter)) {
    kinds.add("type")
  }
  if (f & ts.SymbolFlags.Module) kinds.add("namespace")
  return kinds
}

const describe = (
  repo: string,
  checker: ts.TypeChecker,
  exported: ts.Symbol
): ExportedName => {
  const name = exported.getName()
  const isAlias = (exported.flags & ts.SymbolFlags.Alias) !== 0
  const target = isAlias ? checker.getAliasedSymbol(exported) : exported
  const typeOnly = isAlias && isTypeOnlyAlias(checker, exported)
  const declaration = target.declarations?.[0]
  const from = declaration === undefined ? "?" : displayPath(repo, declaration.getSourceFile().fileName)
  let kinds = kindsOf(target)
  if (typeOnly) {
    // `export type { C }` of a class keeps its instance type only; a namespace stays a namespace
    const kept = new Set<Kind>([...kinds].filter((k) => k === "type" || k === "namespace"))
    kinds = kept.size > 0 ? kept : new Set<Kind>(["type"])
  }
  const kind = kinds.size === 0 ? "unresolved" : kindOrder.filter((k) => kinds.has(k)).join("+")
  return typeOnly ? { name, kind, typeOnly: true, from } : { name, kind, from }
}

const byName = (a: { readonly name: string }, b: { readonly name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

const readPackage = (repo: string, packageDir: string): PackageListing | undefined => {
  const manifestFile = path.join(packageDir, "package.json")
  if (!fs.existsSync(manifestFile)) return undefined
  const manifest = readJson(manifestFile)
  if (manifest.private === true) return undefined
  const dir = displayPath(repo, packageDir)
  const name: string = manifest.name ?? dir
  const version: string | undefined = manifest.version
  const exportsField = manifest.exports
  if (exportsField === undefined) {
    const note = manifest.bin === undefined ? "no exports" : "no exports (a bin only)"
    return { name, version, dir, note, entryPoints: [] }
  }
  const { fileNames, options } = compilerOptionsOf(repo, packageDir)
  const outDir = path.relative(packageDir, options.outDir ?? path.join(packageDir, "dist")).split(path.sep).join("/")
  const rootDir = path.relative(packageDir, options.rootDir ?? path.join(packageDir, "src")).split(path.sep).join("/")

  // A string or conditions without subpath keys is the `"."` entry point alone
  const map: Record<string, unknown> =
    typeof exportsField === "string" || Object.keys(exportsField).every((k) => !k.startsWith("."))
      ? { ".": exportsField }
      : exportsField
  const entries: Array<{ subpath: string; file: string }> = []
  for (const [subpath, value] of Object.entries(map)) {
    if (subpath.includes("*")) {
      warn(`${name}: subpath pattern ${subpath} is not expanded`)
      continue
    }
    const target = typesTarget(value)
    if (target === undefined) {
      if (value !== null) warn(`${name}: ${subpath} has no types/default target`)
      continue
    }
    const file = sourceOf(target, outDir, rootDir)
    if (file === undefined) continue // ./package.json and other files that are not modules
    const expected = subpath === "." ? `${rootDir}/index.ts` : `${rootDir}/${subpath.replace(/^\.\//, "")}.ts`
    if (file !== expected) warn(`${name}: ${subpath} → ${target} → ${file} (not ${expected})`)
    entries.push({ subpath, file })
  }

  const entryFiles = entries.map((e) => path.join(packageDir, e.file))
  const rootNames = [
    ...new Set([...fileNames.map((f) => path.resolve(f)), ...entryFiles.filter((f) => fs.existsSync(f))])
  ]
  const program = ts.createProgram({ rootNames, options, host: cachingHost(options) })
  const checker = program.getTypeChecker()

  const entryPoints: Array<EntryPoint> = entries.map(({ file, subpath }) => {
    const absolute = path.join(packageDir, file)
    const sourceFile = program.getSourceFile(absolute)
    if (sourceFile === undefined) {
      warn(`${name}: ${subpath}: ${file} does not exist`)
      return { subpath, file, missing: true, exports: [] }
    }
    for (const d of program.getSyntacticDiagnostics(sourceFile)) {
      warn(`${name}: ${subpath}: ${ts.formatDiagnostic(d, formatHost).trim()}`)
    }
    // A re-export from a module that does not resolve silently drops names
    for (const statement of sourceFile.statements) {
      if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined) {
        if (checker.getSymbolAtLocation(statement.moduleSpecifier) === undefined) {
          warn(`${name}: ${subpath}: cannot resolve ${statement.moduleSpecifier.getText(sourceFile)}`)
        }
      }
    }
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile)
    const symbols = moduleSymbol === undefined ? [] : checker.getExportsOfModule(moduleSymbol)
    const exports = symbols.map((s) => describe(repo, checker, s)).sort(byName)
    for (const e of exports) {
      if (e.kind === "unresolved") warn(`${name}: ${subpath}: ${e.name} does not resolve`)
      if (e.from.startsWith("../")) warn(`${name}: ${subpath}: ${e.name} is declared outside the repository: ${e.from}`)
    }
    return { subpath, file, exports }
  })
  return { name, version, dir, entryPoints }
}

const readRepo = (repoArg: string): Listing => {
  const repo = path.resolve(repoArg)
  const packagesDir = path.join(repo, "packages")
  if (!fs.existsSync(packagesDir)) throw new Error(`${repo} has no packages/ folder`)
  const packages: Array<PackageListing> = []
  for (const entry of fs.readdirSync(packagesDir, { withFileTypes: true }).sort(byName)) {
    if (!entry.isDirectory()) continue
    const listing = readPackage(repo, path.join(packagesDir, entry.name))
    if (listing !== undefined) packages.push(listing)
  }
  const status = git(repo, ["status", "--porcelain", "--", "packages"])
  return {
    repo,
    commit: git(repo, ["rev-parse", "HEAD"])?.trim(),
    uncommittedFilesUnderPackages: status === undefined ? undefined : status.split("\n").filter((l) => l !== "").length,
    typescript: ts.version,
    packages
  }
}

/** A repository to read, or a listing written by `--json`. */
const load = (arg: string): Listing => {
  if (arg.endsWith(".json") && fs.statSync(arg).isFile()) {
    const listing = readJson(arg)
    if (!Array.isArray(listing?.packages)) throw new Error(`${arg} is not a listing written by --json`)
    return listing
  }
  return readRepo(arg)
}

// ---------------------------------------------------------------------------------------------------------------
// Summary

const namesIn = (p: PackageListing) => p.entryPoints.reduce((n, e) => n + e.exports.length, 0)
const namesInIndex = (p: PackageListing) => p.entryPoints.find((e) => e.subpath === ".")?.exports.length ?? 0

const table = (rows: ReadonlyArray<ReadonlyArray<string>>, rightAligned: ReadonlySet<number>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) =>
    r.map((cell, i) => rightAligned.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)).join("  ").trimEnd()
  ).join("\n")
}

const origin = (l: Listing) => {
  const commit = l.commit === undefined ? "no git" : l.commit.slice(0, 7)
  const dirty = l.uncommittedFilesUnderPackages
    ? `, ${l.uncommittedFilesUnderPackages} uncommitted under packages/`
    : ""
  return `${l.repo} (${commit}${dirty})`
}

const summary = (l: Listing, perEntry: boolean): string => {
  const rows: Array<Array<string>> = [["package", "entry points", "exported names", "in \".\"", ""]]
  for (const p of l.packages) {
    rows.push([p.name, String(p.entryPoints.length), String(namesIn(p)), String(namesInIndex(p)), p.note ?? ""])
    if (perEntry) {
      for (const e of p.entryPoints) {
        rows.push([`  ${e.subpath}`, "", String(e.exports.length), "", e.missing ? `${e.file} missing` : e.file])
      }
    }
  }
  const total = l.packages.reduce((n, p) => n + namesIn(p), 0)
  const entryPoints = l.packages.reduce((n, p) => n + p.entryPoints.length, 0)
  rows.push(["total", String(entryPoints), String(total), "", ""])
  return `Public API of ${origin(l)}\n${table(rows, new Set([1, 2, 3]))}`
}

// ---------------------------------------------------------------------------------------------------------------
// Diff

interface Placed {
  readonly entry: string
  readonly name: string
  readonly kind: string
}

interface PackageDiff {
  readonly name: string
  readonly before: { readonly entryPoints: number; readonly exportedNames: number } | null
  readonly after: { readonly entryPoints: number; readonly exportedNames: number } | null
  readonly entryPointsAdded: ReadonlyArray<string>
  readonly entryPointsRemoved: ReadonlyArray<string>
  /** `alsoIn`: the entry points that had it before and still have it. */
  readonly added: ReadonlyArray<Placed & { readonly alsoIn: ReadonlyArray<string> }>
  /** `stillIn`: the entry points that still have it. */
  readonly removed: ReadonlyArray<Placed & { readonly stillIn: ReadonlyArray<string> }>
  readonly moved: ReadonlyArray<
    { readonly name: string; readonly from: ReadonlyArray<Placed>; readonly to: ReadonlyArray<Placed> }
  >
  readonly kindChanged: ReadonlyArray<
    { readonly entry: string; readonly name: string; readonly before: string; readonly after: string }
  >
}

type Places = Map<string, Map<string, string>>

/**
 * name → entry point → kind, in two parts: the `export * as X` namespaces of `"."` (one per module, compared
 * on their own), and every other name (compared across the package's entry points, for moves).
 */
const placesOf = (p: PackageListing | undefined): { readonly names: Places; readonly namespaces: Places } => {
  const names: Places = new Map()
  const namespaces: Places = new Map()
  for (const e of p?.entryPoints ?? []) {
    for (const x of e.exports) {
      const places = e.subpath === "." && x.kind === "namespace" ? namespaces : names
      if (!places.has(x.name)) places.set(x.name, new Map())
      places.get(x.name)!.set(e.subpath, x.kind)
    }
  }
  return { names, namespaces }
}

const counts = (p: PackageListing | undefined) =>
  p === undefined ? null : { entryPoints: p.entryPoints.length, exportedNames: namesIn(p) }

const compare = (
  placesBefore: Places,
  placesAfter: Places,
  into: Pick<PackageDiff, "added" | "removed" | "moved" | "kindChanged">
) => {
  const added = into.added as Array<PackageDiff["added"][number]>
  const removed = into.removed as Array<PackageDiff["removed"][number]>
  const moved = into.moved as Array<PackageDiff["moved"][number]>
  const kindChanged = into.kindChanged as Array<PackageDiff["kindChanged"][number]>
  const names = [...new Set([...placesBefore.keys(), ...placesAfter.keys()])].sort()
  for (const n of names) {
    const b = placesBefore.get(n) ?? new Map<string, string>()
    const a = placesAfter.get(n) ?? new Map<string, string>()
    const gone = [...b].filter(([entry]) => !a.has(entry)).map(([entry, kind]) => ({ entry, name: n, kind }))
    const fresh = [...a].filter(([entry]) => !b.has(entry)).map(([entry, kind]) => ({ entry, name: n, kind }))
    const kept = [...a.keys()].filter((entry) => b.has(entry))
    for (const entry of kept) {
      if (a.get(entry) !== b.get(entry)) {
        kindChanged.push({ entry, name: n, before: b.get(entry)!, after: a.get(entry)! })
      }
    }
    if (gone.length > 0 && fresh.length > 0) {
      moved.push({ name: n, from: gone, to: fresh })
    } else {
      for (const g of gone) removed.push({ ...g, stillIn: kept })
      for (const f of fresh) added.push({ ...f, alsoIn: kept })
    }
  }
}

const diffPackage = (name: string, before: PackageListing | undefined, after: PackageListing | undefined) => {
  const entriesBefore = new Set((before?.entryPoints ?? []).map((e) => e.subpath))
  const entriesAfter = new Set((after?.entryPoints ?? []).map((e) => e.subpath))
  const placesBefore = placesOf(before)
  const placesAfter = placesOf(after)
  const changes = { added: [], removed: [], moved: [], kindChanged: [] }
  compare(placesBefore.namespaces, placesAfter.namespaces, changes)
  compare(placesBefore.names, placesAfter.names, changes)
  const byEntry = (x: Placed, y: Placed) => x.entry < y.entry ? -1 : x.entry > y.entry ? 1 : byName(x, y)
  return {
    name,
    before: counts(before),
    after: counts(after),
    entryPointsAdded: [...entriesAfter].filter((e) => !entriesBefore.has(e)).sort(),
    entryPointsRemoved: [...entriesBefore].filter((e) => !entriesAfter.has(e)).sort(),
    added: [...changes.added].sort(byEntry),
    removed: [...changes.removed].sort(byEntry),
    moved: [...changes.moved].sort(byName),
    kindChanged: [...changes.kindChanged].sort(byEntry)
  } satisfies PackageDiff
}

const diff = (before: Listing, after: Listing): ReadonlyArray<PackageDiff> => {
  const names = [...new Set([...before.packages.map((p) => p.name), ...after.packages.map((p) => p.name)])]
  return names.map((n) =>
    diffPackage(n, before.packages.find((p) => p.name === n), after.packages.find((p) => p.name === n))
  )
}

const formatDiff = (before: Listing, after: Listing, diffs: ReadonlyArray<PackageDiff>): string => {
  const out: Array<string> = [`before: ${origin(before)}`, `after:  ${origin(after)}`, ""]
  const c = (x: PackageDiff["before"], key: "entryPoints" | "exportedNames") => x === null ? "–" : String(x[key])
  const rows: Array<Array<string>> = [[
    "package",
    "entry points",
    "exported names",
    "added",
    "removed",
    "moved",
    "kind changed"
  ]]
  for (const d of diffs) {
    rows.push([
      d.name,
      `${c(d.before, "entryPoints")} → ${c(d.after, "entryPoints")}`,
      `${c(d.before, "exportedNames")} → ${c(d.after, "exportedNames")}`,
      `+${d.added.length}`,
      `−${d.removed.length}`,
      String(d.moved.length),
      String(d.kindChanged.length)
    ])
  }
  out.push(table(rows, new Set([1, 2, 3, 4, 5, 6])))
  const grouped = (items: ReadonlyArray<Placed & { readonly note?: string }>) => {
    const groups = new Map<string, Array<string>>()
    for (const i of items) {
      if (!groups.has(i.entry)) groups.set(i.entry, [])
      groups.get(i.entry)!.push(`${i.name} (${i.kind})${i.note ?? ""}`)
    }
    return [...groups].map(([entry, list]) => `    ${entry}: ${list.join(", ")}`)
  }
  for (const d of diffs) {
    const changed = d.entryPointsAdded.length + d.entryPointsRemoved.length + d.added.length + d.removed.length +
      d.moved.length + d.kindChanged.length
    if (changed === 0) continue
    out.push("", `${d.name}`)
    if (d.before === null) out.push("  (new package)")
    if (d.after === null) out.push("  (package gone)")
    if (d.entryPointsAdded.length > 0) out.push(`  entry points added: ${d.entryPointsAdded.join(", ")}`)
    if (d.entryPointsRemoved.length > 0) out.push(`  entry points removed: ${d.entryPointsRemoved.join(", ")}`)
    if (d.moved.length > 0) {
      out.push(`  moved (${d.moved.length}):`)
      for (const m of d.moved) {
        const kinds = [...new Set([...m.from, ...m.to].map((p) => p.kind))].join(" / ")
        out.push(
          `    ${m.name} (${kinds}): ${m.from.map((p) => p.entry).join(", ")} → ${m.to.map((p) => p.entry).join(", ")}`
        )
      }
    }
    if (d.added.length > 0) {
      out.push(`  added (${d.added.length}):`)
      for (
        const line of grouped(
          d.added.map((a) => ({ ...a, note: a.alsoIn.length ? ` [also in ${a.alsoIn.join(", ")}]` : "" }))
        )
      ) {
        out.push(line)
      }
    }
    if (d.removed.length > 0) {
      out.push(`  removed (${d.removed.length}):`)
      for (
        const line of grouped(
          d.removed.map((r) => ({ ...r, note: r.stillIn.length ? ` [still in ${r.stillIn.join(", ")}]` : "" }))
        )
      ) {
        out.push(line)
      }
    }
    if (d.kindChanged.length > 0) {
      out.push(`  kind changed (${d.kindChanged.length}):`)
      for (const k of d.kindChanged) out.push(`    ${k.entry}: ${k.name}: ${k.before} → ${k.after}`)
    }
  }
  return out.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// Command line

const usage =
  "usage: npx tsx scripts/public-exports.ts [repoDir|listing.json] [--json] [--entries] [--diff <otherRepoDir|listing.json>]"

const main = () => {
  const args = process.argv.slice(2)
  let json = false
  let perEntry = false
  let other: string | undefined
  const positional: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === "--json") json = true
    else if (a === "--entries") perEntry = true
    else if (a === "--diff") {
      other = args[++i]
      if (other === undefined) throw new Error(`--diff needs a directory or a listing\n${usage}`)
    } else if (a === "--help" || a === "-h") {
      console.log(usage)
      return
    } else if (a.startsWith("-")) throw new Error(`unknown option ${a}\n${usage}`)
    else positional.push(a)
  }
  if (positional.length > 1) throw new Error(usage)
  const after = load(positional[0] ?? path.resolve(import.meta.dirname, ".."))
  if (other === undefined) {
    console.log(json ? JSON.stringify(after, null, 2) : summary(after, perEntry))
  } else {
    const before = load(other)
    const diffs = diff(before, after)
    console.log(
      json
        ? JSON.stringify({ before: origin(before), after: origin(after), packages: diffs }, null, 2)
        : formatDiff(before, after, diffs)
    )
  }
  if (warnings.length > 0) console.error(`${warnings.length} warning(s)`)
}

try {
  main()
} catch (e) {
  console.error(e instanceof Error ? e.message : e)
  process.exitCode = 1
}
