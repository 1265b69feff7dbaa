import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { defineProject } from "vitest/config"
import { sourceAliases } from "../vitest.shared.js"
import { markdownBlocks, markdownFiles, topLevelConsts } from "./test/support/blocks.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * Modules made of the documentation's code, extracted when they are loaded, never copied:
 * - `readme:greeting` is the README's "A controller in one screen" up to its `const Main` (the definitions,
 *   exported), `readme:testing` its "Testing a controller in one screen" with those definitions imported
 *   (test/readme.test.ts);
 * - `docs:examples` runs every other Markdown block that is a test (it imports `@effect/vitest`), each in a
 *   `describe` named after its file and line (`docs:block:<file>:<line>`), and exports their names
 *   (test/examples.test.ts).
 */
const docModules = () => {
  // virtual modules (`\0` ids: vite leaves them alone), compiled here from TypeScript
  const prefix = "\0readme:"
  const docsPrefix = "\0docs:"
  const testBlocks = () =>
    markdownFiles().flatMap((file) => markdownBlocks(file, fs.readFileSync(path.join(root, file), "utf8")))
      .filter((b) => !b.skip && b.after === undefined && /from "@effect\/vitest"/.test(b.code))
  const loadDocs = (name: string): string | undefined => {
    if (name === "examples") {
      const names = testBlocks().map((b) => `${b.file}:${b.line}`)
      return [
        `import { describe } from "@effect/vitest"`,
        ...names.map((n) =>
          `describe(${JSON.stringify(n)}, async () => { await import(${JSON.stringify(`docs:block:${n}`)}) })`
        ),
        `export const examples = ${JSON.stringify(names)}`
      ].join("\n")
    }
    const block = /^block:(.+):(\d+)$/.exec(name)
    return block === null
      ? undefined
      : testBlocks().find((b) => b.file === block[1] && b.line === Number(block[2]))?.code
  }
  const block = (title: string) => {
    const found = markdownBlocks("README.md", fs.readFileSync(path.join(root, "README.md"), "utf8"))
      .find((b) => b.heading === title)
    if (found === undefined) throw new Error(`README.md has no \`\`\`ts block under "${title}"`)
    return found.code
  }
  const load = (name: string): string | undefined => {
    if (name === "greeting") {
      const code = block("A controller in one screen")
      const main = code.search(/^const Main\b/m)
      if (main < 0) throw new Error("README.md: \"A controller in one screen\" has no `const Main = …` to split at")
      const definitions = code.slice(0, main)
      return `${definitions}\nexport { ${topLevelConsts(definitions).join(", ")} }\n`
    }
    if (name === "testing") {
      const names = topLevelConsts(load("greeting")!)
      return `${block("Testing a controller in one screen")}\nimport { ${names.join(", ")} } from "./greeting.js"\n`
    }
    return undefined
  }
  const compile = (code: string) =>
    ts.transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false }
    }).outputText
  return {
    name: "doc-modules",
    resolveId: (id: string, importer?: string) => {
      if (id.startsWith("readme:")) return `${prefix}${id.slice("readme:".length)}`
      if (id.startsWith("docs:")) return `${docsPrefix}${id.slice("docs:".length)}`
      if (importer?.startsWith(prefix) && id === "./greeting.js") return `${prefix}greeting`
      return undefined
    },
    load: (id: string) => {
      const code = id.startsWith(prefix)
        ? load(id.slice(prefix.length))
        : id.startsWith(docsPrefix)
        ? loadDocs(id.slice(docsPrefix.length))
        : undefined
      return code === undefined ? undefined : compile(code)
    }
  }
}

export default defineProject({
  plugins: [docModules()],
  resolve: { alias: sourceAliases },
  test: { name: "docs", include: ["test/**/*.test.ts"] }
})
