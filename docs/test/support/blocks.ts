/**
 * The TypeScript blocks of the documentation, and one TypeScript program that checks them all.
 *
 * - Markdown: every ```ts (or ```typescript) block of README.md, docs/**\/*.md, packages/*\/README.md and
 *   examples/*\/README.md. A block preceded by the line `<!-- typecheck: skip (why) -->` is not checked. A block
 *   preceded by `<!-- typecheck: after "Heading" -->` continues the first block under that heading of the same
 *   file (its text says so): it is checked with that block's top-level `const`s imported.
 * - JSDoc: every ```ts block in a `/** … *\/` comment of packages/*\/src (the `@example`s).
 *
 * Each block is a module of its own (imports included, as pasted), compiled with the repository's options (strict,
 * `exactOptionalPropertyTypes`, the `paths` that resolve `@reconcile/*` to the workspace sources), all in one program
 * (fast). A diagnostic is reported at its line in the Markdown or source file.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

/** The repository's root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/** A ```ts block of a Markdown or source file. */
export interface Block {
  /** The file, relative to the repository's root. */
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  /** The Markdown heading above the block (Markdown only), or the JSDoc'd declaration's line (source). */
  readonly heading: string
  readonly code: string
  /** Preceded by `<!-- typecheck: skip (why) -->`. */
  readonly skip: boolean
  /** Preceded by `<!-- typecheck: after "Heading" -->`: the block it continues. */
  readonly after?: Block | undefined
}

const skipMarker = /^\s*<!--\s*typecheck:\s*skip\b/
const afterMarker = /^\s*<!--\s*typecheck:\s*after\s+"([^"]+)"\s*-->/

/**
 * The names of the top-level values of a block — `const`, `let`, `function`, `class` (a type alias of the same name
 * as a const comes with it) — what a block that continues it may use.
 */
export const topLevelConsts = (code: string): Array<string> =>
  [...code.matchAll(/^(?:export\s+)?(?:const|let|(?:async\s+)?function\*?|class)\s+(\w+)/gm)].map((m) => m[1]!)

/** The ```ts blocks of a Markdown text. */
export const markdownBlocks = (file: string, markdown: string): Array<Block> => {
  const lines = markdown.split("\n")
  const found: Array<Block> = []
  const pending: Array<{ readonly index: number; readonly title: string }> = []
  let heading = ""
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (/^#{1,6}\s/.test(line)) heading = line.replace(/^#+\s*/, "").trim()
    const fence = /^(\s*)(`{3,})(.*)$/.exec(line)
    if (fence === null) continue
    const [, indent, ticks, info] = fence
    const end = lines.findIndex((l, j) => j > i && l.startsWith(`${indent}${ticks}`) && l.trim() === ticks)
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block is not closed`)
    if (/^(ts|typescript)\s*$/.test(info!.trim())) {
      const after = afterMarker.exec(lines[i - 1] ?? "")
      if (after !== null) pending.push({ index: found.length, title: after[1]! })
      found.push({
        file,
        line: i + 1,
        heading,
        code: lines.slice(i + 1, end).map((l) => l.startsWith(indent!) ? l.slice(indent!.length) : l).join("\n"),
        skip: skipMarker.test(lines[i - 1] ?? "")
      })
    }
    i = end
  }
  for (const { index, title } of pending) {
    const context = found.find((b) => b.heading === title)
    if (context === undefined) {
      throw new Error(`${file}:${found[index]!.line - 1}: no \`\`\`ts block under a heading "${title}"`)
    }
    found[index] = { ...found[index]!, after: context }
  }
  return found
}

/** The ```ts blocks inside the JSDoc comments of a TypeScript source text. */
export const jsdocBlocks = (file: string, source: string): Array<Block> => {
  const lines = source.split("\n")
  const found: Array<Block> = []
  let inDoc = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (!inDoc) {
      if (/^\s*\/\*\*/.test(line) && !/\*\//.test(line)) inDoc = true
      continue
    }
    if (/\*\//.test(line)) {
      inDoc = false
      continue
    }
    const text = line.replace(/^\s*\* ?/, "")
    if (!/^```(ts|typescript)\s*$/.test(text)) continue
    const body: Array<string> = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const inner = lines[j]!
      if (/\*\//.test(inner)) throw new Error(`${file}:${i + 1}: a code block in a JSDoc comment is not closed`)
      const innerText = inner.replace(/^\s*\*( |$)/, "")
      if (/^```\s*$/.test(innerText)) break
      body.push(innerText)
    }
    const previous = (lines[i - 1] ?? "").replace(/^\s*\* ?/, "")
    found.push({ file, line: i + 1, heading: "", code: body.join("\n"), skip: skipMarker.test(previous) })
    i = j
  }
  return found
}

const walk = (dir: string, keep: (file: string) => boolean): Array<string> =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) return entry.name === "node_modules" ? [] : walk(full, keep)
      return keep(full) ? [full] : []
    })
    : []

const subdirs = (dir: string): Array<string> =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) =>
    path.join(dir, e.name)
  )

/**
 * The Markdown files whose blocks are checked: README.md, docs/**\/*.md (not the generated API reference, docs/api),
 * packages/*\/README.md and examples/*\/README.md. Relative to the root, sorted.
 */
export const markdownFiles = (): Array<string> => {
  const docs = walk(path.join(root, "docs"), (f) => f.endsWith(".md")).map((f) => path.relative(root, f))
    .filter((f) => !f.startsWith(`docs${path.sep}api${path.sep}`))
  const readmes = [...subdirs("packages"), ...subdirs("examples")].map((d) => path.join(d, "README.md"))
    .filter((f) => fs.existsSync(path.join(root, f)))
  return ["README.md", ...docs, ...readmes].sort()
}

/** The public sources whose JSDoc blocks are checked: packages/*\/src/**\/*.ts. Relative to the root, sorted. */
export const sourceFiles = (): Array<string> =>
  subdirs("packages").flatMap((d) =>
    walk(path.join(root, d, "src"), (f) => f.endsWith(".ts") && !f.endsWith(".d.ts")).map((f) => path.relative(root, f))
  ).sort()

/** A compiler diagnostic, at its line in the Markdown or source file. */
export interface Diagnostic {
  readonly block: Block
  /** 1-based line in the Markdown or source file. */
  readonly line: number
  readonly code: number
  readonly message: string
}

/** A diagnostic as a line of a test failure: `file:line TScode: message`. */
export const show = (d: Diagnostic): string => `${d.block.file}:${d.line} TS${d.code}: ${d.message}`

/** The folder the blocks are compiled in (virtual files: nothing is written there). */
const virtualDir = path.join(root, "docs", "test", "__blocks__")

/** A block's virtual file name: unique, and a module even when the block has no import or export. */
export const virtualName = (block: Block): string =>
  path.join(virtualDir, `${block.file.replace(/[\\/.]/g, "_")}_L${block.line}.ts`)

const compilerOptions = (): ts.CompilerOptions => {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, "docs", "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })
  if (parsed === undefined) throw new Error("cannot read docs/tsconfig.json")
  const { composite: _c, declaration: _d, incremental: _i, rootDir: _r, tsBuildInfoFile: _t, ...rest } = parsed.options
  // unused names are not what a documentation block is checked for
  return { ...rest, noEmit: true, noUnusedLocals: false, noUnusedParameters: false }
}

/**
 * Compiles `blocks` (those not skipped) as modules of one program and returns their diagnostics (syntactic and
 * semantic), each at its line in the block's file. `extra` adds virtual files the blocks may import (name → text).
 */
export const typecheck = (
  blocks: ReadonlyArray<Block>,
  extra: Readonly<Record<string, string>> = {}
): Array<Diagnostic> => {
  const byPath = new Map<string, { readonly text: string; readonly block?: Block }>()
  for (const block of blocks) {
    if (block.skip) continue
    // `export {}` makes a block without imports a module: the blocks never share a global scope
    let text = `${block.code}\nexport {}\n`
    if (block.after !== undefined) {
      // the block it continues, as a module exporting its top-level consts (imports go last: line numbers stay)
      const names = topLevelConsts(block.after.code)
      const context = virtualName(block.after).replace(/\.ts$/, "_context.ts")
      byPath.set(context, { text: `${block.after.code}\nexport { ${names.join(", ")} }\n` })
      text += `import { ${names.join(", ")} } from "./${path.basename(context, ".ts")}.js"\n`
    }
    byPath.set(virtualName(block), { text, block })
  }
  for (const [name, text] of Object.entries(extra)) byPath.set(path.join(virtualDir, name), { text })
  const options = compilerOptions()
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile
  const fileExists = host.fileExists
  const readFile = host.readFile
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const virtual = byPath.get(path.resolve(fileName))
    return virtual !== undefined
      ? ts.createSourceFile(fileName, virtual.text, languageVersion, true)
      : getSourceFile.call(host, fileName, languageVersion, ...rest)
  }
  host.fileExists = (fileName) => byPath.has(path.resolve(fileName)) || fileExists.call(host, fileName)
  const directoryExists = host.directoryExists
  host.directoryExists = (name) =>
    path.resolve(name) === virtualDir || (directoryExists?.call(host, name) ?? ts.sys.directoryExists(name))
  host.readFile = (fileName) => byPath.get(path.resolve(fileName))?.text ?? readFile.call(host, fileName)
  const program = ts.createProgram([...byPath.keys()], options, host)
  const diagnostics: Array<Diagnostic> = []
  for (const [fileName, { block }] of byPath) {
    if (block === undefined) continue
    const source = program.getSourceFile(fileName)!
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line + 1
      diagnostics.push({
        block,
        line: block.line + line,
        code: d.code,
        message: ts.flattenDiagnosticMessageText(d.messageText, "\n")
      })
    }
  }
  return diagnostics
}
