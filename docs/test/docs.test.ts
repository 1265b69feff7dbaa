/**
 * Every ```ts block of the documentation compiles as pasted: README.md, docs/**\/*.md, packages/*\/README.md,
 * examples/*\/README.md, and the ```ts blocks (the `@example`s) of the JSDoc in packages/*\/src. One program for
 * all blocks (see `support/blocks.ts`); a failure names the Markdown or source file and line of each error.
 * A block that is deliberately partial is preceded by `<!-- typecheck: skip (why) -->`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type Block,
  jsdocBlocks,
  markdownBlocks,
  markdownFiles,
  root,
  show,
  sourceFiles,
  typecheck
} from "./support/blocks.js"

const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8")
const markdown = markdownFiles().map((file) => ({ file, blocks: markdownBlocks(file, read(file)) }))
const sources = sourceFiles().map((file) => ({ file, blocks: jsdocBlocks(file, read(file)) }))
  .filter((s) => s.blocks.length > 0)
const all = [...markdown, ...sources].flatMap((f) => f.blocks)
const diagnostics = typecheck(all)
const errorsOf = (block: Block) => diagnostics.filter((d) => d.block === block).map(show)

const title = (block: Block) =>
  `${block.file}:${block.line}${block.heading === "" ? "" : ` (“${block.heading}”)`} compiles`

describe("the documentation's TypeScript blocks", () => {
  it("finds the blocks: the README's two, the package READMEs', the guides' and the JSDoc examples", () => {
    const readme = markdown.find((f) => f.file === "README.md")!.blocks
    assert.isAtLeast(readme.length, 2)
    for (const pkg of ["workqueue", "core", "kube", "testkit"]) {
      assert.isAtLeast(markdown.find((f) => f.file === path.join("packages", pkg, "README.md"))!.blocks.length, 1)
    }
    assert.isAtLeast(sources.flatMap((s) => s.blocks).length, 50)
    // a skip marker is rare: each one says why
    const skipped = all.filter((b) => b.skip)
    assert.isAtMost(skipped.length, 5, `skipped: ${skipped.map((b) => `${b.file}:${b.line}`).join(", ")}`)
  })

  it("extracts blocks as a reader sees them", () => {
    const md = ["# T", "<!-- typecheck: skip (a fragment) -->", "```ts", "let a", "```", "## U", "```ts", "b", "```"]
    const found = markdownBlocks("x.md", md.join("\n"))
    assert.deepStrictEqual(found.map((b) => [b.line, b.heading, b.code, b.skip]), [[3, "T", "let a", true], [
      7,
      "U",
      "b",
      false
    ]])
    const doc = ["/**", " * @example", " * ```ts", " * const x = 1", " *", " * x", " * ```", " */"]
    assert.deepStrictEqual(jsdocBlocks("y.ts", doc.join("\n")).map((b) => [b.line, b.code]), [[3, "const x = 1\n\nx"]])
  })

  it("every relative link of the Markdown files names a file that exists", () => {
    const broken = markdown.flatMap(({ file }) => {
      const text = read(file).replace(/```[\s\S]*?```/g, "") // links, not code
      return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
        .filter((target) => !/^[a-z]+:/.test(target) && !target.startsWith("#"))
        .filter((target) => !fs.existsSync(path.join(root, path.dirname(file), target.split("#")[0]!)))
        .map((target) => `${file}: ${target}`)
    })
    assert.deepStrictEqual(broken, [])
  })

  it("reports an error at its line in the Markdown file; a block `after` another uses that block's consts", () => {
    const [wrong] = markdownBlocks(
      "z.md",
      ["text", "```ts", "const n: number = 1", "const s: string = n", "```"].join("\n")
    )
    const continued = markdownBlocks(
      "w.md",
      [
        "# A",
        "```ts",
        "const greeting: string = \"hi\"",
        "```",
        "<!-- typecheck: after \"A\" -->",
        "```ts",
        "greeting.length",
        "```"
      ]
        .join("\n")
    )
    assert.strictEqual(continued[1]!.after, continued[0])
    const found = typecheck([wrong!, ...continued]).map((d) => [d.block.file, d.line, d.code])
    assert.deepStrictEqual(found, [["z.md", 4, 2322]])
    assert.throws(() => markdownBlocks("v.md", ["<!-- typecheck: after \"B\" -->", "```ts", "x", "```"].join("\n")))
  })

  for (const { blocks, file } of [...markdown, ...sources]) {
    if (blocks.length === 0) continue
    describe(file, () => {
      for (const block of blocks) {
        if (block.skip) continue
        it(title(block), () => {
          assert.deepStrictEqual(errorsOf(block), [])
        })
      }
    })
  }
})
