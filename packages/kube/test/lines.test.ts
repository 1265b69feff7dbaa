/**
 * The watch body's line splitter (`internal/lines.ts`): whatever the chunks and the decoding segment, the lines
 * that come out are the non-blank lines that went in, in order, with multi-byte characters intact.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { LineSplitter } from "../src/internal/lines.js"

// line texts: ASCII, two-, three- and four-byte UTF-8, blank ones (skipped), a carriage return before "\n"
const Text = Schema.Array(Schema.Literals(["a", "{}", "ä", "€", "𝄞", " ", "\r", "x".repeat(40)])).check(
  Schema.isMaxLength(12)
)

describe("LineSplitter", () => {
  it.effect.prop(
    "any chunking and any segment size: the non-blank lines in order, characters intact",
    [
      Schema.Array(Text).check(Schema.isMaxLength(30)),
      Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4000 }))).check(Schema.isMaxLength(20)),
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })),
      Schema.Boolean
    ],
    ([texts, cuts, segment, trailingNewline]) =>
      Effect.sync(() => {
        const lines = texts.map((parts) => parts.join(""))
        const bytes = Buffer.from(lines.join("\n") + (trailingNewline ? "\n" : ""))
        const points = [...new Set([0, ...cuts.filter((c) => c < bytes.length), bytes.length])].sort((a, b) => a - b)
        const splitter = new LineSplitter(segment)
        const out: Array<string> = []
        const push = (line: string) => out.push(line)
        // plain Uint8Arrays (not Buffers) over one shared buffer, as a transport may hand them
        for (let i = 1; i < points.length; i++) {
          splitter.push(
            new Uint8Array(bytes.buffer, bytes.byteOffset + points[i - 1]!, points[i]! - points[i - 1]!),
            push
          )
        }
        splitter.end(push)
        assert.deepStrictEqual(out, lines.filter((line) => line.trim() !== ""))
      })
  )

  it("a line cut by a chunk's end is copied: the transport may reuse its buffer", () => {
    const splitter = new LineSplitter()
    const out: Array<string> = []
    const push = (line: string) => out.push(line)
    const head = Buffer.from("fir") // no line end at all
    splitter.push(head, push)
    head.fill(0x7a) // "zzz"
    const chunk = Buffer.from("st\nsec")
    splitter.push(chunk, push)
    chunk.fill(0x7a)
    splitter.push(Buffer.from("ond\n"), push)
    assert.deepStrictEqual(out, ["first", "second"])
  })
})
