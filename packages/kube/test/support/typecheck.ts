/**
 * Typechecks TypeScript texts against the in-repo sources with the TypeScript compiler API (the `typescript`
 * package, 5.9): the options of `tsconfig.base.json` (strict, `exactOptionalPropertyTypes`, the `paths` that map
 * `@reconcile/*` to `packages/*\/src`), the texts as virtual files of one program. Used by the tests of compiler
 * messages (`compileErrors.test.ts`); the documentation's code blocks are checked by `docs/test/docs.test.ts`.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

/** The repository's root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** A compiler diagnostic of one of the checked texts. */
export interface Diagnostic {
  /** The text's name, as given. */
  readonly file: string
  /** 1-based line of the diagnostic's start. */
  readonly line: number
  readonly code: number
  /** The whole message chain, one message per line. */
  readonly message: string
}

const options = (): ts.CompilerOptions => {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, "packages/kube/tsconfig.test.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })
  if (parsed === undefined) throw new Error("cannot read packages/kube/tsconfig.test.json")
  const { composite: _c, declaration: _d, incremental: _i, rootDir: _r, tsBuildInfoFile: _t, ...rest } = parsed.options
  // unused names are not what a fixture or a documentation block is checked for
  return { ...rest, noEmit: true, noUnusedLocals: false, noUnusedParameters: false }
}

/**
 * The diagnostics (syntactic and semantic) of `files` (name → text), compiled together as modules of one program
 * in a virtual folder of `packages/kube/test`. Diagnostics of other files (the in-repo sources) are not returned.
 */
export const typecheck = (files: Readonly<Record<string, string>>): Array<Diagnostic> => {
  const dir = path.join(root, "packages/kube/test/__typecheck__")
  const byPath = new Map(Object.entries(files).map(([name, text]) => [path.join(dir, name), { name, text }]))
  const compilerOptions = options()
  const host = ts.createCompilerHost(compilerOptions)
  const getSourceFile = host.getSourceFile
  const fileExists = host.fileExists
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const virtual = byPath.get(path.resolve(fileName))
    return virtual !== undefined
      ? ts.createSourceFile(fileName, virtual.text, languageVersion, true)
      : getSourceFile.call(host, fileName, languageVersion, ...rest)
  }
  host.fileExists = (fileName) => byPath.has(path.resolve(fileName)) || fileExists.call(host, fileName)
  const program = ts.createProgram([...byPath.keys()], compilerOptions, host)
  const diagnostics: Array<Diagnostic> = []
  for (const [fileName, { name }] of byPath) {
    const source = program.getSourceFile(fileName)!
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      diagnostics.push({
        file: name,
        line: d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line + 1,
        code: d.code,
        message: ts.flattenDiagnosticMessageText(d.messageText, "\n")
      })
    }
  }
  return diagnostics
}

/** A diagnostic as a line of a test failure message. */
export const show = (d: Diagnostic): string => `${d.file}:${d.line} TS${d.code}: ${d.message}`
