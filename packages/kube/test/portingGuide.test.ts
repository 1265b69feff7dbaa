/**
 * Every ```ts block of docs/porting-from-controller-runtime.md compiles against the in-repo sources (strict, the
 * repository's compiler options; `support/typecheck.ts`), each block as a module of its own, extracted from the
 * Markdown (never copied by hand, as `scripts/test-pack.ts` does for the README). A block that is deliberately
 * partial is preceded by the line `<!-- typecheck: skip (why) -->`, which the extractor honours; there is none today.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { root, show, typecheck } from "./support/typecheck.js"

/** A ```ts block of a Markdown text: its first line number, the heading above it, its code, whether it is skipped. */
interface Block {
  readonly line: number
  readonly heading: string
  readonly code: string
  readonly skip: boolean
}

const blocks = (markdown: string): Array<Block> => {
  const lines = markdown.split("\n")
  const found: Array<Block> = []
  let heading = ""
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (/^#{1,6}\s/.test(line)) heading = line.replace(/^#+\s*/, "").trim()
    if (!/^```/.test(line)) continue
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l))
    if (end < 0) throw new Error(`a code block at line ${i + 1} is not closed`)
    if (/^```(ts|typescript)\s*$/.test(line)) {
      const skip = /^<!--\s*typecheck:\s*skip\b/.test(lines[i - 1] ?? "")
      found.push({ line: i + 1, heading, code: lines.slice(i + 1, end).join("\n") + "\n", skip })
    }
    i = end
  }
  return found
}

const guide = "docs/porting-from-controller-runtime.md"
const all = blocks(fs.readFileSync(path.join(root, guide), "utf8"))
const checked = all.filter((b) => !b.skip)
const fileOf = (b: Block) => `guide-line-${b.line}.ts`
const diagnostics = typecheck(Object.fromEntries(checked.map((b) => [fileOf(b), b.code])))

describe(guide, () => {
  it("has code blocks, and every block that is not marked partial is checked", () => {
    assert.isAtLeast(checked.length, 2)
  })

  for (const block of checked) {
    it(`the block at line ${block.line} (“${block.heading}”) compiles`, () => {
      // a diagnostic's line in the guide: the block's fence line + its line in the block
      const found = diagnostics.filter((d) => d.file === fileOf(block)).map((d) =>
        show({ ...d, file: guide, line: block.line + d.line })
      )
      assert.deepStrictEqual(found, [])
    })
  }
})
